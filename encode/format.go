package encode

import (
	"strconv"
	"strings"

	"doppel/history"
)

// TxnName is how explanations name transaction t: by its :index when the history has
// one, else by its line.
func TxnName(h *history.History, t int32) string {
	tx := &h.Txns[t]
	if tx.Index >= 0 {
		return "T" + strconv.FormatInt(tx.Index, 10)
	}
	return "T(line " + strconv.Itoa(int(tx.Line)) + ")"
}

// ListString prints a list of value ids as EDN: [1 2 1].
func ListString(h *history.History, vals []int32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h.Values[v])
	}
	b.WriteByte(']')
	return b.String()
}

// ShortList prints a list for an explanation: whole when short, else its first and
// last values around an ellipsis, with its length (the full list is in the
// transaction's operations, printed beside every explanation).
func ShortList(h *history.History, vals []int32) string {
	const head, tail = 3, 4
	if len(vals) <= head+tail+2 {
		return ListString(h, vals)
	}
	var b strings.Builder
	b.WriteByte('[')
	for _, v := range vals[:head] {
		b.WriteString(h.Values[v] + " ")
	}
	b.WriteString("…")
	for _, v := range vals[len(vals)-tail:] {
		b.WriteString(" " + h.Values[v])
	}
	b.WriteString("] (" + strconv.Itoa(len(vals)) + " values)")
	return b.String()
}

// OpsString prints transaction t's micro-ops as EDN.
func OpsString(h *history.History, t int32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, op := range h.TxnOps(int(t)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		if op.Kind == history.Append {
			b.WriteString("[:append " + h.Keys[op.Key] + " " + h.Values[op.Value] + "]")
			continue
		}
		b.WriteString("[:r " + h.Keys[op.Key] + " ")
		if op.Known {
			b.WriteString(ListString(h, h.ReadValues[op.Start:op.End]))
		} else {
			b.WriteString("nil")
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return b.String()
}

func (in *Inference) txnName(t int32) string      { return TxnName(in.H, t) }
func (in *Inference) keyName(k int32) string      { return "key " + in.H.Keys[k] }
func (in *Inference) listString(v []int32) string { return ListString(in.H, v) }
func (in *Inference) valName(v int32) string      { return in.H.Values[v] }
