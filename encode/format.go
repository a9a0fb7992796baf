package encode

import (
	"slices"
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
// last values around an ellipsis, with its length (the full list is on the
// transaction's line of the history, which every report names).
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

// OpsString prints transaction t's micro-ops as EDN, long reads cut as ShortList cuts
// them (a read of a 200K-element key would otherwise fill a report by itself).
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
			b.WriteString(ShortList(h, h.ReadValues[op.Start:op.End]))
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
func (in *Inference) listString(v []int32) string { return ShortList(in.H, v) }
func (in *Inference) valName(v int32) string      { return in.H.Values[v] }

// ListAround prints a list for an explanation, cut around the positions that matter
// (0-based): whole when short, else a few values on each side of each position, "…"
// for the rest, and which positions are shown (1-based), so that one anomaly on a long
// key prints a line, not megabytes.
func ListAround(h *history.History, vals []int32, focus ...int) string {
	const (
		whole  = 12 // lists this short are printed whole
		around = 2  // values shown on each side of a focus position
		most   = 4  // windows shown at most
	)
	if len(vals) <= whole {
		return ListString(h, vals)
	}
	if len(focus) == 0 {
		return ShortList(h, vals)
	}
	fs := slices.Clone(focus)
	slices.Sort(fs)
	// Merge the windows [p-around, p+around] that touch.
	type window struct{ lo, hi int }
	var ws []window
	for _, p := range fs {
		if p < 0 || p >= len(vals) {
			continue
		}
		lo, hi := max(p-around, 0), min(p+around, len(vals)-1)
		if n := len(ws); n > 0 && lo <= ws[n-1].hi+1 {
			ws[n-1].hi = max(ws[n-1].hi, hi)
			continue
		}
		ws = append(ws, window{lo, hi})
	}
	if len(ws) == 0 {
		return ShortList(h, vals)
	}
	more := len(ws) > most
	ws = ws[:min(len(ws), most)]
	var b, where strings.Builder
	b.WriteByte('[')
	for i, w := range ws {
		if w.lo > 0 && (i == 0 || w.lo > ws[i-1].hi+1) {
			b.WriteString("… ")
		}
		for p := w.lo; p <= w.hi; p++ {
			b.WriteString(h.Values[vals[p]])
			if p < w.hi {
				b.WriteByte(' ')
			}
		}
		if i < len(ws)-1 || w.hi < len(vals)-1 {
			b.WriteByte(' ')
		}
		if i > 0 {
			where.WriteString(", ")
		}
		where.WriteString(strconv.Itoa(w.lo + 1))
		if w.hi > w.lo {
			where.WriteString("-" + strconv.Itoa(w.hi+1))
		}
	}
	if ws[len(ws)-1].hi < len(vals)-1 {
		b.WriteString("…")
	}
	b.WriteString("] (positions " + where.String())
	if more {
		b.WriteString(", …")
	}
	b.WriteString(" of " + strconv.Itoa(len(vals)) + ", counted from 1)")
	return b.String()
}
