package history

import (
	"fmt"
	"sort"
	"strconv"
)

// ParseError is a malformed or inconsistent input, located in its file.
type ParseError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// scalar is a key, value or process as the parsers see it: an integer, or any other
// atom by its printed form (text points into the parser's scratch space and is only
// valid during one Builder.add call).
type scalar struct {
	isInt bool
	n     int64
	text  []byte
}

// rawMicro is one micro-op of an opRecord.
type rawMicro struct {
	append     bool
	key, value scalar // value: Append only
	known      bool   // Read: the value is a list, not nil
	rs, re     int32  // Read: the list is opRecord.reads[rs:re]
	line, col  int32
}

// opRecord is one :txn event, format-neutral, filled by the parsers and by Add.
// It is reused from one event to the next.
type opRecord struct {
	line, col  int32
	typ        Type
	hasProcess bool
	process    scalar
	index      int64 // -1 if absent
	hasValue   bool  // :value is present and not nil
	mops       []rawMicro
	reads      []scalar
}

func (r *opRecord) reset() {
	r.hasProcess = false
	r.process = scalar{}
	r.index = -1
	r.hasValue = false
	r.mops = r.mops[:0]
	r.reads = r.reads[:0]
}

// interner maps scalars to dense ids, integers through a map of int64 (the common,
// fast case) and other atoms through their printed form.
type interner struct {
	small   []int32 // small[n] = id+1 of integer n, 0 if not seen
	ints    map[int64]int32
	strs    map[string]int32
	printed *[]string
	scratch []byte
}

func newInterner(printed *[]string) interner {
	return interner{ints: map[int64]int32{}, strs: map[string]int32{}, printed: printed}
}

// smallInts bounds the integers interned through interner.small, a slice indexed by
// the integer itself: Jepsen keys and values are small, and this avoids hashing.
const smallInts = 1 << 20

func (in *interner) id(s *scalar) int32 {
	if s.isInt {
		small := s.n >= 0 && s.n < smallInts
		if small && s.n < int64(len(in.small)) {
			if id := in.small[s.n]; id > 0 {
				return id - 1
			}
		} else if id, ok := in.ints[s.n]; ok {
			return id
		}
		id := int32(len(*in.printed))
		if small {
			if s.n >= int64(len(in.small)) {
				in.small = append(in.small, make([]int32, max(int(s.n)+1, 2*len(in.small))-len(in.small))...)
			}
			in.small[s.n] = id + 1
		} else {
			in.ints[s.n] = id
		}
		in.scratch = strconv.AppendInt(in.scratch[:0], s.n, 10)
		*in.printed = append(*in.printed, string(in.scratch))
		return id
	}
	if id, ok := in.strs[string(s.text)]; ok {
		return id
	}
	id := int32(len(*in.printed))
	p := string(s.text)
	in.strs[p] = id
	*in.printed = append(*in.printed, p)
	return id
}

// pendingInvoke is an invoke waiting for its completion.
type pendingInvoke struct {
	pos     int32
	line    int32
	index   int64
	process int32
	ops     []MicroOp // keys interned, reads unknown; Value: index into vals (appends)
	// The appended values, interned only if the invoke's ops are used (a completion
	// normally repeats them), so that Values holds no value no transaction uses.
	vals []pendingValue
	live bool
}

type pendingValue struct {
	isInt bool
	n     int64
	text  string
}

// appendInvokeOps appends p's micro-ops to h.Ops, interning their values.
func (b *Builder) appendInvokeOps(p *pendingInvoke) {
	for _, op := range p.ops {
		if op.Kind == Append {
			v := &p.vals[op.Value]
			sc := scalar{isInt: v.isInt, n: v.n, text: []byte(v.text)}
			op.Value = b.values.id(&sc)
		}
		b.h.Ops = append(b.h.Ops, op)
	}
}

// Builder pairs invokes with completions and interns keys, values and processes.
// Both parsers and FromEvents feed one, so every source of histories follows the same
// rules (DESIGN.md section 1):
//   - a completion pairs with the latest open invoke of its :process;
//   - ops without :process pair in file order (first open invoke without process);
//   - a completion with no open invoke stands alone (Txn.Invoke = -1);
//   - an invoke never completed becomes an :info transaction (Complete = -1).
type Builder struct {
	h                  History
	keys, values, proc interner
	pos                int32 // next client-event position

	pend     []pendingInvoke
	free     []int32   // reusable slots of pend
	procOpen [][]int32 // per process id: stack of open invokes (slots of pend)
	noProc   []int32   // FIFO of open invokes without process
	noProcAt int       // head of noProc

	rec      opRecord // scratch for Add
	nextLine int32    // line numbers for Add: 1, 2, ...
	err      error
}

// NewBuilder starts an empty history; source names it in messages.
func NewBuilder(source string) *Builder {
	b := &Builder{}
	b.h.Source = source
	b.keys = newInterner(&b.h.Keys)
	b.values = newInterner(&b.h.Values)
	b.proc = newInterner(&b.h.Processes)
	return b
}

// reserve sizes the history's slices for an input of about size bytes, with ratios
// below those of real histories, so that they rarely grow (and copy) more than once.
func (b *Builder) reserve(size int64) {
	if size <= 0 || size > 1<<40 {
		return
	}
	b.h.Txns = make([]Txn, 0, size/512)
	b.h.Ops = make([]MicroOp, 0, size/48) // generated and Jepsen histories: 50–70 bytes per micro-op
	b.h.ReadValues = make([]int32, 0, size/32)
}

// FromEvents builds a History from in-memory events with exactly the parsers' pairing
// and interning. Event i is reported as line i+1 in errors and in Txn.Line.
func FromEvents(events []Event) (*History, error) {
	b := NewBuilder("events")
	for i := range events {
		if err := b.Add(&events[i]); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// Add appends one event (an :f :txn operation). Its line number is the count of
// events added so far (skipped ones included), plus one.
func (b *Builder) Add(e *Event) error {
	if b.err != nil {
		return b.err
	}
	b.nextLine++
	r := &b.rec
	r.reset()
	r.line, r.col = b.nextLine, 0
	if e.Type > TypeInfo {
		return b.fail(&ParseError{File: b.h.Source, Line: int(r.line), Msg: fmt.Sprintf("unknown event type %d", e.Type)})
	}
	r.typ = e.Type
	r.hasProcess = true
	r.process = scalar{isInt: true, n: e.Process}
	r.index = e.Index
	r.hasValue = e.Value != nil
	for i := range e.Value {
		op := &e.Value[i]
		m := rawMicro{append: op.Append, key: scalar{isInt: true, n: op.Key}, line: r.line}
		if op.Append {
			m.value = scalar{isInt: true, n: op.Value}
		} else if op.Read != nil {
			m.known = true
			m.rs = int32(len(r.reads))
			for _, v := range op.Read {
				r.reads = append(r.reads, scalar{isInt: true, n: v})
			}
			m.re = int32(len(r.reads))
		}
		r.mops = append(r.mops, m)
	}
	return b.add(r)
}

// Skip counts one event that is not a transaction (a nemesis operation, say).
func (b *Builder) Skip() {
	b.nextLine++
	b.h.Events++
}

func (b *Builder) fail(err error) error {
	b.err = err
	return err
}

func (b *Builder) errAt(line, col int32, format string, args ...any) error {
	return b.fail(&ParseError{File: b.h.Source, Line: int(line), Col: int(col), Msg: fmt.Sprintf(format, args...)})
}

// add processes one :txn event.
func (b *Builder) add(r *opRecord) error {
	if b.err != nil {
		return b.err
	}
	h := &b.h
	h.Events++
	if b.pos == 1<<31-1 {
		return b.errAt(r.line, r.col, "too many events")
	}
	pos := b.pos
	b.pos++
	process := int32(-1)
	if r.hasProcess {
		process = b.proc.id(&r.process)
		for int(process) >= len(b.procOpen) {
			b.procOpen = append(b.procOpen, nil)
		}
	}
	if r.typ == TypeInvoke {
		return b.invoke(r, pos, process)
	}

	// A completion: find its invoke.
	slot := int32(-1)
	if process >= 0 {
		if st := b.procOpen[process]; len(st) > 0 {
			slot = st[len(st)-1]
			b.procOpen[process] = st[:len(st)-1]
		}
	} else if b.noProcAt < len(b.noProc) {
		slot = b.noProc[b.noProcAt]
		b.noProcAt++
		if b.noProcAt == len(b.noProc) {
			b.noProc, b.noProcAt = b.noProc[:0], 0
		}
	}
	var inv *pendingInvoke
	tx := Txn{Process: process, Invoke: -1, Complete: pos, Index: r.index, Line: r.line}
	if slot >= 0 {
		inv = &b.pend[slot]
		tx.Invoke = inv.pos
	}
	switch r.typ {
	case TypeOK:
		tx.Status = OK
	case TypeFail:
		tx.Status = Fail
	default:
		tx.Status = Info
		tx.Complete = -1
	}
	tx.OpStart = int32(len(h.Ops))
	if r.hasValue {
		for i := range r.mops {
			m := &r.mops[i]
			op := MicroOp{Key: b.keys.id(&m.key)}
			if m.append {
				op.Kind = Append
				op.Value = b.values.id(&m.value)
			} else {
				op.Kind = Read
				if tx.Status == OK && m.known {
					op.Known = true
					op.Start = int32(len(h.ReadValues))
					for j := m.rs; j < m.re; j++ {
						h.ReadValues = append(h.ReadValues, b.values.id(&r.reads[j]))
					}
					op.End = int32(len(h.ReadValues))
				}
			}
			h.Ops = append(h.Ops, op)
		}
		if inv != nil {
			if err := b.sameShape(r, inv, h.Ops[tx.OpStart:]); err != nil {
				return err
			}
		}
	} else if inv != nil {
		// No value in the completion: the invoke's micro-ops, reads unknown.
		b.appendInvokeOps(inv)
	}
	tx.OpEnd = int32(len(h.Ops))
	if len(h.Ops) > 1<<31-1 || len(h.ReadValues) > 1<<31-1 {
		return b.errAt(r.line, r.col, "history too large (more than 2^31 micro-ops or read values)")
	}
	h.Txns = append(h.Txns, tx)
	if inv != nil {
		inv.live = false
		b.free = append(b.free, slot)
	}
	return nil
}

func (b *Builder) invoke(r *opRecord, pos, process int32) error {
	var slot int32
	if n := len(b.free); n > 0 {
		slot = b.free[n-1]
		b.free = b.free[:n-1]
	} else {
		slot = int32(len(b.pend))
		b.pend = append(b.pend, pendingInvoke{})
	}
	p := &b.pend[slot]
	p.pos, p.line, p.index, p.process, p.live = pos, r.line, r.index, process, true
	p.ops, p.vals = p.ops[:0], p.vals[:0]
	for i := range r.mops {
		m := &r.mops[i]
		op := MicroOp{Key: b.keys.id(&m.key), Kind: Read}
		if m.append {
			op.Kind = Append
			op.Value = int32(len(p.vals))
			v := pendingValue{isInt: m.value.isInt, n: m.value.n}
			if !v.isInt {
				v.text = string(m.value.text)
			}
			p.vals = append(p.vals, v)
		}
		p.ops = append(p.ops, op)
	}
	if process >= 0 {
		b.procOpen[process] = append(b.procOpen[process], slot)
	} else {
		b.noProc = append(b.noProc, slot)
	}
	return nil
}

// sameShape checks that a completion's micro-ops match its invoke's in number, kinds
// and keys.
func (b *Builder) sameShape(r *opRecord, inv *pendingInvoke, got []MicroOp) error {
	if len(got) != len(inv.ops) {
		return b.errAt(r.line, r.col, "completion has %d micro-ops but its invoke at line %d has %d", len(got), inv.line, len(inv.ops))
	}
	for i := range got {
		g, w := &got[i], &inv.ops[i]
		m := &r.mops[i]
		if g.Kind != w.Kind {
			return b.errAt(m.line, m.col, "micro-op %d is %s here but %s in its invoke at line %d", i+1, kindName(g.Kind), kindName(w.Kind), inv.line)
		}
		if g.Key != w.Key {
			return b.errAt(m.line, m.col, "micro-op %d has key %s here but key %s in its invoke at line %d", i+1, b.h.Keys[g.Key], b.h.Keys[w.Key], inv.line)
		}
	}
	return nil
}

func kindName(k Kind) string {
	if k == Append {
		return "an append"
	}
	return "a read"
}

// Finish turns invokes never completed into :info transactions (in invoke order) and
// returns the history. The Builder must not be used afterwards.
func (b *Builder) Finish() (*History, error) {
	if b.err != nil {
		return nil, b.err
	}
	var open []int32
	for i := range b.pend {
		if b.pend[i].live {
			open = append(open, int32(i))
		}
	}
	sort.Slice(open, func(i, j int) bool { return b.pend[open[i]].pos < b.pend[open[j]].pos })
	h := &b.h
	for _, slot := range open {
		p := &b.pend[slot]
		tx := Txn{Status: Info, Process: p.process, Invoke: p.pos, Complete: -1, Index: p.index, Line: p.line}
		tx.OpStart = int32(len(h.Ops))
		b.appendInvokeOps(p)
		tx.OpEnd = int32(len(h.Ops))
		h.Txns = append(h.Txns, tx)
		p.live = false
	}
	b.err = fmt.Errorf("history: Builder used after Finish")
	out := b.h
	b.h = History{}
	return &out, nil
}
