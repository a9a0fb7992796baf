package history

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

var typeNames = [...]string{TypeInvoke: "invoke", TypeOK: "ok", TypeFail: "fail", TypeInfo: "info"}

func typeName(t Type) (string, error) {
	if int(t) >= len(typeNames) {
		return "", fmt.Errorf("history: unknown event type %d", t)
	}
	return typeNames[t], nil
}

// WriteEDN writes e as one line of a Jepsen EDN history, e.g.
// {:index 0, :time 10, :type :invoke, :process 0, :f :txn, :value [[:append 1 2] [:r 3 nil]]}
func WriteEDN(w io.Writer, e *Event) error {
	buf, err := appendEventEDN(nil, e)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// WriteJSON writes e as one line of JSON in elle-cli's shape, e.g.
// {"index":0,"time":10,"type":"invoke","process":0,"f":"txn","value":[["append",1,2],["r",3,null]]}
func WriteJSON(w io.Writer, e *Event) error {
	buf, err := appendEventJSON(nil, e)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

func appendEventEDN(b []byte, e *Event) ([]byte, error) {
	tn, err := typeName(e.Type)
	if err != nil {
		return b, err
	}
	b = append(b, "{:index "...)
	b = strconv.AppendInt(b, e.Index, 10)
	b = append(b, ", :time "...)
	b = strconv.AppendInt(b, e.Time, 10)
	b = append(b, ", :type :"...)
	b = append(b, tn...)
	if e.IsNemesis() {
		b = append(b, ", :process :nemesis, :f :"...)
		b = append(b, e.F...)
		b = append(b, ", :value "...)
		if e.Note == "" {
			b = append(b, "nil"...)
		} else {
			b = appendQuoted(b, e.Note)
		}
		return append(b, "}\n"...), nil
	}
	b = append(b, ", :process "...)
	b = strconv.AppendInt(b, e.Process, 10)
	b = append(b, ", :f :txn, :value ["...)
	for i := range e.Value {
		op := &e.Value[i]
		if i > 0 {
			b = append(b, ' ')
		}
		if op.Append {
			b = append(b, "[:append "...)
			b = strconv.AppendInt(b, op.Key, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, op.Value, 10)
			b = append(b, ']')
			continue
		}
		b = append(b, "[:r "...)
		b = strconv.AppendInt(b, op.Key, 10)
		if op.Read == nil {
			b = append(b, " nil]"...)
			continue
		}
		b = append(b, " ["...)
		for j, v := range op.Read {
			if j > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, "]]"...)
	}
	b = append(b, ']')
	if e.Error != "" {
		b = append(b, ", :error "...)
		b = appendQuoted(b, e.Error)
	}
	return append(b, "}\n"...), nil
}

func appendEventJSON(b []byte, e *Event) ([]byte, error) {
	tn, err := typeName(e.Type)
	if err != nil {
		return b, err
	}
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, e.Index, 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, e.Time, 10)
	b = append(b, `,"type":"`...)
	b = append(b, tn...)
	if e.IsNemesis() {
		b = append(b, `","process":"nemesis","f":`...)
		b = appendQuoted(b, e.F)
		b = append(b, `,"value":`...)
		if e.Note == "" {
			b = append(b, "null"...)
		} else {
			b = appendQuoted(b, e.Note)
		}
		return append(b, "}\n"...), nil
	}
	b = append(b, `","process":`...)
	b = strconv.AppendInt(b, e.Process, 10)
	b = append(b, `,"f":"txn","value":[`...)
	for i := range e.Value {
		op := &e.Value[i]
		if i > 0 {
			b = append(b, ',')
		}
		if op.Append {
			b = append(b, `["append",`...)
			b = strconv.AppendInt(b, op.Key, 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, op.Value, 10)
			b = append(b, ']')
			continue
		}
		b = append(b, `["r",`...)
		b = strconv.AppendInt(b, op.Key, 10)
		if op.Read == nil {
			b = append(b, ",null]"...)
			continue
		}
		b = append(b, ",["...)
		for j, v := range op.Read {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, "]]"...)
	}
	b = append(b, ']')
	if e.Error != "" {
		b = append(b, `,"error":`...)
		b = appendQuoted(b, e.Error)
	}
	return append(b, "}\n"...), nil
}

// appendQuoted quotes s the way the parsers print strings: JSON-style, escaping only
// ", \ and control characters (valid in both EDN and JSON).
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
			b = append(b, c)
			i++
			continue
		}
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		i++
	}
	return append(b, '"')
}

// historyEvent is one event re-emitted from a History: the invoke or the completion
// of transaction txn.
type historyEvent struct {
	txn      int32
	complete bool
	index    bool // write the transaction's :index on this event
}

// historyEvents orders the events of h so that parsing them gives h back. Invokes and
// :ok/:fail completions go to their positions. Positions left free were :info
// completions (Complete is -1 for those), which come in the order of h.Txns. The
// :info transactions left over completed after every other event, or never; the
// longest tail of them in invoke order is written as never completed (invoke only),
// the others get an :info completion at the end, in the order of h.Txns.
func historyEvents(h *History) ([]historyEvent, error) {
	n := 0
	for i := range h.Txns {
		tx := &h.Txns[i]
		n = max(n, int(tx.Invoke)+1, int(tx.Complete)+1)
	}
	slots := make([]historyEvent, n)
	taken := make([]bool, n)
	put := func(pos int32, ev historyEvent) error {
		if taken[pos] {
			return fmt.Errorf("history: two events at position %d", pos)
		}
		taken[pos] = true
		slots[pos] = ev
		return nil
	}
	var infos []int32
	for i := range h.Txns {
		tx := &h.Txns[i]
		if tx.Invoke >= 0 {
			if err := put(tx.Invoke, historyEvent{txn: int32(i)}); err != nil {
				return nil, err
			}
		}
		if tx.Complete >= 0 {
			if err := put(tx.Complete, historyEvent{txn: int32(i), complete: true, index: true}); err != nil {
				return nil, err
			}
		} else {
			infos = append(infos, int32(i))
		}
	}
	out := make([]historyEvent, 0, 2*len(h.Txns))
	for pos := range slots {
		if taken[pos] {
			out = append(out, slots[pos])
		} else if len(infos) > 0 {
			out = append(out, historyEvent{txn: infos[0], complete: true, index: true})
			infos = infos[1:]
		}
	}
	never := len(infos)
	for never > 0 {
		tx := &h.Txns[infos[never-1]]
		if tx.Invoke < 0 || never < len(infos) && tx.Invoke > h.Txns[infos[never]].Invoke {
			break
		}
		never--
	}
	for _, t := range infos[never:] {
		slots[h.Txns[t].Invoke].index = true
	}
	for i := range out {
		if !out[i].complete && slots[h.Txns[out[i].txn].Invoke].index {
			out[i].index = true
		}
	}
	for _, t := range infos[:never] {
		out = append(out, historyEvent{txn: t, complete: true, index: true})
	}
	return out, nil
}

// WriteHistoryEDN re-emits h as an EDN history, keys and values in their printed forms:
// each transaction's invoke (reads nil) and completion, in the order of their
// positions. Parsing the output gives back h (except Source, Line and Events).
func WriteHistoryEDN(w io.Writer, h *History) error {
	return writeHistory(w, h, false)
}

// WriteHistoryJSON is WriteHistoryEDN in JSON; keywords are written as ":kw" strings.
func WriteHistoryJSON(w io.Writer, h *History) error {
	return writeHistory(w, h, true)
}

func writeHistory(w io.Writer, h *History, json bool) error {
	if err := h.Validate(); err != nil {
		return err
	}
	evs, err := historyEvents(h)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	for _, ev := range evs {
		tx := &h.Txns[ev.txn]
		typ := "invoke"
		if ev.complete {
			typ = tx.Status.String()
		}
		index := int64(-1)
		if ev.index {
			index = tx.Index
		}
		b = b[:0]
		if json {
			b = append(b, '{')
			if index >= 0 {
				b = append(b, `"index":`...)
				b = strconv.AppendInt(b, index, 10)
				b = append(b, ',')
			}
			b = append(b, `"type":"`...)
			b = append(b, typ...)
			b = append(b, '"')
			if tx.Process >= 0 {
				b = append(b, `,"process":`...)
				b = appendJSONAtom(b, h.Processes[tx.Process])
			}
			b = append(b, `,"f":"txn","value":[`...)
		} else {
			b = append(b, '{')
			if index >= 0 {
				b = append(b, ":index "...)
				b = strconv.AppendInt(b, index, 10)
				b = append(b, ", "...)
			}
			b = append(b, ":type :"...)
			b = append(b, typ...)
			if tx.Process >= 0 {
				b = append(b, ", :process "...)
				b = append(b, h.Processes[tx.Process]...)
			}
			b = append(b, ", :f :txn, :value ["...)
		}
		first := true
		for _, op := range h.Ops[tx.OpStart:tx.OpEnd] {
			if tx.Status == OK && op.Kind == Read && !op.Known {
				continue // nil would read back as the empty list
			}
			if !first {
				if json {
					b = append(b, ',')
				} else {
					b = append(b, ' ')
				}
			}
			first = false
			b = appendMicroOp(b, h, &op, json, ev.complete)
		}
		b = append(b, "]}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendMicroOp writes op; reads are nil in invokes and when unknown.
func appendMicroOp(b []byte, h *History, op *MicroOp, json, complete bool) []byte {
	sep := byte(' ')
	if json {
		sep = ','
	}
	if op.Kind == Append {
		if json {
			b = append(b, `["append",`...)
			b = appendJSONAtom(b, h.Keys[op.Key])
			b = append(b, ',')
			b = appendJSONAtom(b, h.Values[op.Value])
		} else {
			b = append(b, "[:append "...)
			b = append(b, h.Keys[op.Key]...)
			b = append(b, ' ')
			b = append(b, h.Values[op.Value]...)
		}
		return append(b, ']')
	}
	if json {
		b = append(b, `["r",`...)
		b = appendJSONAtom(b, h.Keys[op.Key])
	} else {
		b = append(b, "[:r "...)
		b = append(b, h.Keys[op.Key]...)
	}
	b = append(b, sep)
	if !complete || !op.Known {
		if json {
			return append(b, "null]"...)
		}
		return append(b, "nil]"...)
	}
	b = append(b, '[')
	for i, v := range h.ReadValues[op.Start:op.End] {
		if i > 0 {
			b = append(b, sep)
		}
		if json {
			b = appendJSONAtom(b, h.Values[v])
		} else {
			b = append(b, h.Values[v]...)
		}
	}
	return append(b, "]]"...)
}

// appendJSONAtom writes a printed EDN atom as JSON: numbers, strings (already
// JSON-quoted) and true/false as they are, anything else (keywords, symbols) as a
// string, which ParseJSON reads back as the keyword when it starts with ":".
func appendJSONAtom(b []byte, printed string) []byte {
	if printed == "" {
		return append(b, `""`...)
	}
	if printed[0] == '"' || printed == "true" || printed == "false" || jsonNumber([]byte(printed)) {
		return append(b, printed...)
	}
	return appendQuoted(b, printed)
}

// FormatOps prints transaction t's micro-ops in EDN, e.g. [[:append 1 2] [:r 3 [1 2]]].
func (h *History) FormatOps(t int) string {
	tx := &h.Txns[t]
	b := []byte{'['}
	for i, op := range h.Ops[tx.OpStart:tx.OpEnd] {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendMicroOp(b, h, &op, false, true)
	}
	return string(append(b, ']'))
}

// Validate checks that every id and range of h is in bounds and that the transaction
// fields are consistent; parsed histories always pass.
func (h *History) Validate() error {
	for i := range h.Txns {
		tx := &h.Txns[i]
		if tx.OpStart < 0 || tx.OpStart > tx.OpEnd || int(tx.OpEnd) > len(h.Ops) {
			return fmt.Errorf("history: txn %d: ops [%d:%d] out of range", i, tx.OpStart, tx.OpEnd)
		}
		if tx.Process < -1 || int(tx.Process) >= len(h.Processes) {
			return fmt.Errorf("history: txn %d: process %d out of range", i, tx.Process)
		}
		if tx.Status > Fail {
			return fmt.Errorf("history: txn %d: unknown status %d", i, tx.Status)
		}
		if tx.Invoke < -1 || tx.Complete < -1 {
			return fmt.Errorf("history: txn %d: bad positions %d, %d", i, tx.Invoke, tx.Complete)
		}
		if tx.Complete >= 0 && tx.Invoke >= tx.Complete {
			return fmt.Errorf("history: txn %d: invoked at %d, not before its completion at %d", i, tx.Invoke, tx.Complete)
		}
		if tx.Status == Info && tx.Complete != -1 {
			return fmt.Errorf("history: txn %d: :info with completion position %d", i, tx.Complete)
		}
		if tx.Status != Info && tx.Complete < 0 {
			return fmt.Errorf("history: txn %d: %s without completion position", i, tx.Status)
		}
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Key < 0 || int(op.Key) >= len(h.Keys) {
			return fmt.Errorf("history: op %d: key %d out of range", i, op.Key)
		}
		switch op.Kind {
		case Append:
			if op.Value < 0 || int(op.Value) >= len(h.Values) {
				return fmt.Errorf("history: op %d: value %d out of range", i, op.Value)
			}
		case Read:
			if op.Known && (op.Start < 0 || op.Start > op.End || int(op.End) > len(h.ReadValues)) {
				return fmt.Errorf("history: op %d: read [%d:%d] out of range", i, op.Start, op.End)
			}
		default:
			return fmt.Errorf("history: op %d: unknown kind %d", i, op.Kind)
		}
	}
	for i, v := range h.ReadValues {
		if v < 0 || int(v) >= len(h.Values) {
			return fmt.Errorf("history: read value %d: id %d out of range", i, v)
		}
	}
	for _, names := range [][]string{h.Keys, h.Values, h.Processes} {
		for _, s := range names {
			if s == "" {
				return fmt.Errorf("history: bad printed form %q", s)
			}
		}
	}
	return nil
}
