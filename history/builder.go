package history

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// scalar is a key, value or process as the parsers see it: an integer n (te == 0), or
// any other atom by its printed form opRecord.text[ts:te] (never empty).
type scalar struct {
	n      int64
	ts, te int32
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
	// The printed forms of the scalars that are not integers. It points into the
	// parser's scratch space or input buffer: valid during one Builder.add call only.
	text []byte
}

func (r *opRecord) reset() {
	r.hasProcess = false
	r.process = scalar{}
	r.index = -1
	r.hasValue = false
	r.mops = r.mops[:0]
	r.reads = r.reads[:0]
	r.text = nil
}

// interner maps scalars to dense ids. Non-negative integers below a bound that grows
// with the number of ids go through a slice indexed by the integer itself (Jepsen keys
// and values are small integers, and this avoids hashing); other integers through a
// map of int64, and other atoms through their printed form.
//
// The printed forms of integers are made only by finish, all in one string: until
// then the interner keeps the integers themselves, in chunks that are never copied.
type interner struct {
	// dense[n] = id+1 of integer n, 0 if not seen. Every interned integer in
	// [0, len(dense)) is here, never in ints.
	dense []int32
	ints  map[int64]int32
	strs  map[string]int32
	count int32 // ids given
	// The integer of each id (0 for other atoms): nums[id/numChunk][id%numChunk].
	nums  [][]int64
	texts map[int32]string // the printed form of each id that is not an integer
}

// numChunk is the size of interner.nums's chunks (but for the first, which grows to
// it, so that small interners stay small).
const numChunk = 1 << 16

func newInterner() interner {
	return interner{ints: map[int64]int32{}, strs: map[string]int32{}, texts: map[int32]string{}}
}

// add gives the next id to integer n (to another atom if text).
func (in *interner) add(n int64) int32 {
	id := in.count
	if id%numChunk == 0 && id > 0 {
		in.nums = append(in.nums, make([]int64, 0, numChunk))
	} else if id == 0 {
		in.nums = append(in.nums, nil)
	}
	c := &in.nums[len(in.nums)-1]
	*c = append(*c, n)
	in.count++
	return id
}

// name returns the printed form of id.
func (in *interner) name(id int32) string {
	if s, ok := in.texts[id]; ok {
		return s
	}
	return strconv.FormatInt(in.nums[id/numChunk][id%numChunk], 10)
}

// finish returns the printed forms of all ids, in order (nil if none). It asks stop
// (when not nil) before each chunk of ids but the first whether to give up, and then
// returns false.
func (in *interner) finish(stop func() bool) ([]string, bool) {
	if in.count == 0 {
		return nil, true
	}
	out := make([]string, in.count)
	// All integers printed in one string, which out's strings share.
	size := 0
	for _, c := range in.nums {
		for _, n := range c {
			size += decimalLen(n)
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	var scratch [24]byte
	ends := make([]int32, 0, min(int(in.count), numChunk)) // a chunk's ends in sb
	id := 0
	for ci, c := range in.nums {
		if stop != nil && ci > 0 && stop() {
			return nil, false
		}
		start := sb.Len()
		ends = ends[:0]
		for _, n := range c {
			sb.Write(strconv.AppendInt(scratch[:0], n, 10))
			ends = append(ends, int32(sb.Len()-start))
		}
		s := sb.String()[start:]
		from := 0
		for _, e := range ends {
			out[id] = s[from:e]
			from = int(e)
			id++
		}
	}
	for id, s := range in.texts {
		out[id] = s
	}
	in.nums = nil
	return out, true
}

// decimalLen returns the length of n in decimal.
func decimalLen(n int64) int {
	l := 1
	u := uint64(n)
	if n < 0 {
		l, u = 2, -u
	}
	for ; u >= 10; u /= 10 {
		l++
	}
	return l
}

// An integer n >= 0 is interned through interner.dense if n < max(minDense,
// denseFactor*(ids+1)). The slice, which at most doubles each time it grows, then
// costs at most 8*denseFactor bytes an id, about what a map entry costs.
const (
	minDense    = 1 << 16
	denseFactor = 4
)

// id interns s, whose printed form, if it is not an integer, is in text.
func (in *interner) id(s *scalar, text []byte) int32 {
	if s.te == 0 {
		return in.intID(s.n)
	}
	return in.strID(text[s.ts:s.te])
}

// strID interns the atom printed p.
func (in *interner) strID(p []byte) int32 {
	if id, ok := in.strs[string(p)]; ok {
		return id
	}
	s := string(p)
	id := in.add(0)
	in.strs[s] = id
	in.texts[id] = s
	return id
}

// known sets out[j] to the id of ss[j] if it is an integer already interned through
// dense, else to -1. The accesses to dense, often cache misses, are independent, so
// the processor overlaps them.
func (in *interner) known(ss []scalar, out []int32) {
	d := in.dense
	for j := range ss {
		s := &ss[j]
		id := int32(-1)
		if s.te == 0 && uint64(s.n) < uint64(len(d)) {
			id = d[s.n] - 1
		}
		out[j] = id
	}
}

// intID interns integer n.
func (in *interner) intID(n int64) int32 {
	if uint64(n) < uint64(len(in.dense)) {
		if id := in.dense[n]; id > 0 {
			return id - 1
		}
	} else if len(in.ints) > 0 {
		if id, ok := in.ints[n]; ok {
			return id
		}
	}
	return in.newInt(n)
}

// newInt gives integer n, not seen before, the next id.
func (in *interner) newInt(n int64) int32 {
	id := in.count
	if n >= 0 && (n < int64(len(in.dense)) || n < max(minDense, denseFactor*(int64(id)+1))) {
		if n >= int64(len(in.dense)) {
			in.growDense(int(n) + 1)
		}
		in.dense[n] = id + 1
	} else {
		in.ints[n] = id
	}
	return in.add(n)
}

// growDense extends dense to at least n entries, moving the integers it now covers
// out of the map.
func (in *interner) growDense(n int) {
	old := len(in.dense)
	n = max(n, 2*old)
	d := make([]int32, n)
	copy(d, in.dense)
	in.dense = d
	for k, id := range in.ints {
		if k >= int64(old) && k < int64(n) {
			d[k] = id + 1
			delete(in.ints, k)
		}
	}
}

// pendingInvoke is an invoke waiting for its completion.
type pendingInvoke struct {
	pos     int32
	line    int32
	index   int64
	process int32
	ops     []MicroOp // keys interned, reads unknown; Value: index into vals (appends)
	// The integer keys of ops as written (intKey false for other keys), so that a
	// completion repeating them reuses their ids without interning them again.
	keys []intKey
	// The appended values, interned only if the invoke's ops are used (a completion
	// normally repeats them), so that Values holds no value no transaction uses.
	vals []pendingValue
	live bool
}

type intKey struct {
	n     int64
	isInt bool
}

type pendingValue struct {
	isInt bool
	n     int64
	text  string // not an integer: the printed form
}

// appendInvokeOps appends p's micro-ops to h.Ops, interning their values.
func (b *Builder) appendInvokeOps(p *pendingInvoke) {
	b.room(len(p.ops), 0)
	for _, op := range p.ops {
		if op.Kind == Append {
			v := &p.vals[op.Value]
			if v.isInt {
				op.Value = b.values.intID(v.n)
			} else {
				op.Value = b.values.strID([]byte(v.text))
			}
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
	scratch  []int32  // the value ids of one completion's reads, before storeRead
	lists    []keyList
	nextLine int32 // line numbers for Add: 1, 2, ...
	err      error

	prog progress
}

// progress is how far the parser is in its input, for sizing the history's slices
// (see Builder.room).
type progress struct {
	size      int64 // the input's size in bytes, 0 if unknown
	done      int64 // bytes read so far, set before each Builder.add
	nextCheck int64 // done at the next check
	lastCheck int64 // done at the last check
	// The lengths of Ops, ReadValues and Txns at the last check.
	lastOps, lastReads, lastTxns int
}

// estimate extrapolates n, the length of a slice after done bytes of input (last at
// the last check), to the whole input, plus 5%. It takes the rate of growth since the
// last check if higher than the mean (read lists, say, grow longer as a history goes
// on), at most twice the mean. It returns 0 before 1/64 of the input.
func (p *progress) estimate(n, last int) int {
	if p.size <= 0 || p.done >= p.size || p.done < p.size/64 {
		return 0
	}
	rate := float64(n) / float64(p.done)
	if d := p.done - p.lastCheck; d > 0 && p.lastCheck > 0 {
		rate = max(rate, min(float64(n-last)/float64(d), 2*rate))
	}
	return int(min((float64(n)+float64(p.size-p.done)*rate)*1.05, 1<<31))
}

// growSlice returns s with room for more elements: grown by half at least, and to
// the size the whole input will likely need (see progress.estimate), so that it is
// copied only a few times.
func growSlice[T any](s []T, more int, p *progress, last int) []T {
	need := len(s) + more
	return resize(s, max(need, cap(s)+cap(s)/2, 256, p.estimate(need, last)))
}

// resize returns s with capacity c.
func resize[T any](s []T, c int) []T {
	n := make([]T, len(s), c)
	copy(n, s)
	return n
}

// keyList is where a key's longest read so far lies in History.ReadValues: [start,
// start+n), with room for start+room values before the next region.
type keyList struct{ start, n, room int32 }

// storeRead stores the values of a read of key and returns where they lie in
// History.ReadValues. A read that is a prefix of the key's longest read so far shares
// its storage, and one that extends it extends it, in place while its region has room:
// in a history that keeps its promise every read of a key is a prefix of the next
// longer one, so ReadValues holds each key's list about once instead of once per read
// (a 100K-transaction history with lists of 300 values reads 60M values; their
// storage was most of the checker's fresh memory, each page of which costs a fault).
func (b *Builder) storeRead(key int32, vals []int32) (start, end int32) {
	h := &b.h
	n := int32(len(vals))
	if n < shareMin {
		at := b.reserveReads(n)
		copy(h.ReadValues[at:], vals)
		return at, at + n
	}
	if int(key) >= len(b.lists) {
		b.lists = append(b.lists, make([]keyList, int(key)+1-len(b.lists))...)
	}
	l := &b.lists[key]
	c := commonPrefix(h.ReadValues[l.start:l.start+l.n], vals)
	switch {
	case c == n:
		return l.start, l.start + n
	case c == l.n && n <= l.room:
		copy(h.ReadValues[l.start+l.n:l.start+n], vals[c:])
		l.n = n
		return l.start, l.start + n
	default:
		// Stored at the end of ReadValues with room to grow by half, as the key's list
		// from now on: the old region stays for the reads that share it. A read that
		// diverges takes the list's place too, so that one read showing a value the
		// others never show (an invalid history) costs one copy, not one per later
		// read.
		room := max(n+n/2, 8)
		at := b.reserveReads(room)
		copy(h.ReadValues[at:], vals)
		*l = keyList{start: at, n: n, room: room}
		return at, at + n
	}
}

// shareMin is the length from which a read is shared with its key's list: a shorter
// one is stored as it comes. Looking up the key's list costs a cache miss or two (at a
// million keys, seconds in all), more than copying a few values, and saves little.
const shareMin = 16

// reserveReads extends ReadValues by n values (zero until written) and returns where
// they start.
func (b *Builder) reserveReads(n int32) int32 {
	h := &b.h
	at := len(h.ReadValues)
	if at+int(n) > cap(h.ReadValues) {
		h.ReadValues = growSlice(h.ReadValues, int(n), &b.prog, b.prog.lastReads)
	}
	h.ReadValues = h.ReadValues[:at+int(n)]
	return int32(at)
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []int32) int32 {
	n := min(len(a), len(b))
	if n > 0 && &a[0] == &b[0] {
		return int32(n)
	}
	a, b = a[:n], b[:n]
	for i := range a {
		if a[i] != b[i] {
			return int32(i)
		}
	}
	return int32(n)
}

// NewBuilder starts an empty history; source names it in messages.
func NewBuilder(source string) *Builder {
	b := &Builder{}
	b.h.Source = source
	b.keys = newInterner()
	b.values = newInterner()
	b.proc = newInterner()
	return b
}

// reserve sizes the history's slices for an input of about size bytes, with ratios
// below those of real histories, so that they rarely grow (and copy) more than once.
func (b *Builder) reserve(size int64) {
	if size <= 0 || size > 1<<40 {
		return
	}
	b.prog.size = size
	b.prog.nextCheck = max(size/64, 1)
	b.h.Txns = make([]Txn, 0, size/512)
	b.h.Ops = make([]MicroOp, 0, size/48) // generated and Jepsen histories: 50–70 bytes per micro-op
	b.h.ReadValues = make([]int32, 0, size/32)
}

// room makes sure that ops more micro-ops and reads more read values fit in the
// history's slices. When the input's size is known, it also checks, after 1/64 of the
// input, 1/32, ..., 1/2, 3/4, 7/8, ..., that ReadValues will hold what the whole input
// likely needs, and grows it now if not: the earlier, the less there is to copy. (Read
// lists grow longer as a history goes on, so the initial reservation often falls
// short; micro-ops and transactions come at a steadier rate.)
func (b *Builder) room(ops, reads int) {
	h := &b.h
	p := &b.prog
	if p.size > 0 && p.done >= p.nextCheck {
		if e := p.estimate(len(h.ReadValues), p.lastReads); e > cap(h.ReadValues) {
			h.ReadValues = resize(h.ReadValues, max(e, cap(h.ReadValues)+cap(h.ReadValues)/2))
		}
		p.lastCheck, p.lastOps, p.lastReads, p.lastTxns = p.done, len(h.Ops), len(h.ReadValues), len(h.Txns)
		p.nextCheck = min(2*p.done, p.done+(p.size-p.done)/2)
		if p.size-p.nextCheck < p.size/64 {
			p.nextCheck = p.size + 1 // close enough to the end
		}
	}
	if len(h.Ops)+ops > cap(h.Ops) {
		h.Ops = growSlice(h.Ops, ops, p, p.lastOps)
	}
	if len(h.ReadValues)+reads > cap(h.ReadValues) {
		h.ReadValues = growSlice(h.ReadValues, reads, p, p.lastReads)
	}
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

// Add appends one event: an :f :txn operation, or a nemesis action, which is skipped
// as the parsers skip it. Its line number is the count of events added so far
// (skipped ones included), plus one.
func (b *Builder) Add(e *Event) error {
	if b.err != nil {
		return b.err
	}
	if e.IsNemesis() {
		b.Skip()
		return nil
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
	r.process = scalar{n: e.Process}
	r.index = e.Index
	r.hasValue = e.Value != nil
	for i := range e.Value {
		op := &e.Value[i]
		m := rawMicro{append: op.Append, key: scalar{n: op.Key}, line: r.line}
		if op.Append {
			m.value = scalar{n: op.Value}
		} else if op.Read != nil {
			m.known = true
			m.rs = int32(len(r.reads))
			for _, v := range op.Read {
				r.reads = append(r.reads, scalar{n: v})
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
		process = b.proc.id(&r.process, r.text)
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
		// Known reads are kept only in :ok completions. Their values, r.reads, are
		// interned into b.scratch, then stored (or shared) read by read: storeRead.
		nreads := 0
		if tx.Status == OK {
			nreads = len(r.reads)
		}
		b.room(len(r.mops), 0)
		if cap(b.scratch) < nreads {
			b.scratch = make([]int32, nreads, max(nreads, 2*cap(b.scratch)))
		}
		rv := b.scratch[:nreads]
		// First the values interned before, in one pass; then the others, in order.
		b.values.known(r.reads[:nreads], rv)
		var invKeys []intKey
		if inv != nil {
			invKeys = inv.keys
		}
		for i := range r.mops {
			m := &r.mops[i]
			var op MicroOp
			if i < len(invKeys) && m.key.te == 0 && invKeys[i].isInt && invKeys[i].n == m.key.n {
				// The invoke's key, already interned.
				op.Key = inv.ops[i].Key
			} else {
				op.Key = b.keys.id(&m.key, r.text)
			}
			if m.append {
				op.Kind = Append
				op.Value = b.values.id(&m.value, r.text)
			} else {
				op.Kind = Read
				switch {
				case tx.Status == OK && m.known:
					op.Known = true
					for j := m.rs; j < m.re; j++ {
						if rv[j] < 0 {
							rv[j] = b.values.id(&r.reads[j], r.text)
						}
					}
					op.Start, op.End = b.storeRead(op.Key, rv[m.rs:m.re])
				case tx.Status == OK:
					// An :ok read of nil observed the key's initial state, the empty list,
					// as Elle reads it (a missing row); only invocations and :info
					// completions carry nil for "not known".
					op.Known = true
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
	if len(h.Txns) == cap(h.Txns) {
		h.Txns = growSlice(h.Txns, 1, &b.prog, b.prog.lastTxns)
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
	n := len(r.mops)
	p.ops, p.keys, p.vals = slices.Grow(p.ops[:0], n)[:n], slices.Grow(p.keys[:0], n)[:n], p.vals[:0]
	// First the keys interned before, in one pass (see interner.known); then the
	// others, in order.
	d := b.keys.dense
	for i := range r.mops {
		m := &r.mops[i]
		id := int32(-1)
		if m.key.te == 0 && uint64(m.key.n) < uint64(len(d)) {
			id = d[m.key.n] - 1
		}
		p.ops[i] = MicroOp{Key: id, Kind: Read}
		p.keys[i] = intKey{n: m.key.n, isInt: m.key.te == 0}
	}
	for i := range r.mops {
		m := &r.mops[i]
		op := &p.ops[i]
		if op.Key < 0 {
			op.Key = b.keys.id(&m.key, r.text)
		}
		if m.append {
			op.Kind = Append
			op.Value = int32(len(p.vals))
			v := pendingValue{isInt: m.value.te == 0, n: m.value.n}
			if !v.isInt {
				v.text = string(r.text[m.value.ts:m.value.te])
			}
			p.vals = append(p.vals, v)
		}
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
			return b.errAt(m.line, m.col, "micro-op %d has key %s here but key %s in its invoke at line %d", i+1, b.keys.name(g.Key), b.keys.name(w.Key), inv.line)
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
	h, _, err := b.finish(nil)
	return h, err
}

// finish is Finish that asks stop (when not nil) every so often whether to give up
// (at a million keys and values, naming them takes a second), and then reports false.
func (b *Builder) finish(stop func() bool) (*History, bool, error) {
	if b.err != nil {
		return nil, true, b.err
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
	var ok bool
	if h.Keys, ok = b.keys.finish(stop); !ok {
		return nil, false, nil
	}
	if h.Values, ok = b.values.finish(stop); !ok {
		return nil, false, nil
	}
	if h.Processes, ok = b.proc.finish(stop); !ok {
		return nil, false, nil
	}
	out := b.h
	b.h = History{}
	return &out, true, nil
}
