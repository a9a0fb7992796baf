package uncommitted

import (
	"encoding/binary"
	"slices"
	"sort"

	"doppel/history"
	"doppel/internal/ordersearch"
)

// The serial search (DESIGN.md, "Read uncommitted", "Deciding"): an exact decision of
// the strong forms of read uncommitted when every key's longest read is unique and only
// :ok transactions append the values it shows (so every position holds a committed
// writer's append, and every ww edge of a key chains its positions). Then in an
// acyclic attribution each writer's appends in L are contiguous (a writer between two
// of them closes a ww chain back to it), the writers in L follow one another as L
// shows them, and a writer with an append in no position follows the last block: a
// topological order of ww ∪ process (∪ real time) runs each key's writers in L order,
// each taking the next positions, which show its values (in any order: Elle's edges
// ignore program order), until the key is full; the writer that fills it may leave
// some of its appends out, and every writer after it appends only what L leaves out.
// Conversely such an order is an attribution whose ww edges it orders. So the model
// holds iff some order of the :ok writers that keeps process (real-time) order runs
// every key so, and a depth-first search over the next transaction of each process
// decides it. Its state (how far each process got, which keys are full and what their
// late writers left out) fixes every key's position, so a state that failed once fails
// again: remembered, the search visits each once. Every order it finds is checked again
// as an attribution by the cycle search before it counts.

// serialMemoBytes bounds the failed states the serial search remembers; past it the
// search gives up (unknown).
const serialMemoBytes = 256 << 20

// serialMaxStates bounds the failed states the serial search visits (a few seconds);
// past it the search gives up and the exact search over attributions goes on.
const serialMaxStates = 1 << 21

// serialMaxChains: with more processes the states are too large to remember.
const serialMaxChains = 4096

type serialBlock struct {
	key  int32   // index into the search's keys
	vals []int32 // the writer's values on the key, as local ids, sorted
}

type serialSearch struct {
	h        *history.History
	realtime bool
	keys     []int32   // the history's keys searched
	ls       [][]int32 // per key: its longest read, as local value ids
	exc      [][]int32 // per key, per local value: appends by :ok writers minus L's count
	blocks   [][]serialBlock
	writers  []int32   // :ok transactions appending to a searched key
	chains   [][]int32 // indexes into writers, per process in process order
	inv      []int32   // per writer
	comp     []int32
	head     []int32 // per chain: the next writer's index in it
	pos      []int32 // per key: positions filled
	full     []bool
	unp      [][]int32 // per key, per local value: appends left out (full keys)
	stop     func() bool
	chainOf  []int32        // per writer: its chain
	undo     []serialAction // what the writers in order changed
	marks    []int32        // per writer in order: where its actions start in undo
	order    []int32        // writers run, in order
	deepest  int            // the most writers any order ran
	// At the deepest state: each process's next writer and each key's position.
	deepHead []int32
	deepPos  []int32
	deepFull []bool
	orig     [][]int32 // per key: its longest read, as the history's value ids
	states   int       // failed states remembered
}

// serialAction records how running writer w changed one key (its block b), to undo it.
type serialAction struct {
	w, b int32
	kind uint8 // 0: placed; 1: filled the key, leaving the rest out; 2: left out (key full)
	from int32 // the key's position before
}

// newSerialSearch returns nil when the search does not apply: a key with several
// longest reads, a position an uncommitted append could take, or too many processes.
func newSerialSearch(h *history.History, realtime bool, stop func() bool) *serialSearch {
	nkeys := len(h.Keys)
	longest, several := longestReads(h)
	s := &serialSearch{h: h, realtime: realtime, stop: stop}
	keyIdx := make([]int32, nkeys)
	local := make([]map[int32]int32, 0)
	for k := range keyIdx {
		keyIdx[k] = -1
		if len(longest[k]) == 0 {
			continue // no read shows a value: no ww edge
		}
		if several[k] {
			return nil
		}
		keyIdx[k] = int32(len(s.keys))
		l, m := localValues(longest[k])
		s.keys = append(s.keys, int32(k))
		s.ls = append(s.ls, l)
		s.orig = append(s.orig, longest[k])
		local = append(local, m)
		exc := make([]int32, len(m))
		for _, v := range l {
			exc[v]--
		}
		s.exc = append(s.exc, exc)
	}
	writerOf := map[int32]int32{}
	for t := range h.Txns {
		tx := &h.Txns[t]
		bl := txnBlocks(h, int32(t), keyIdx, local)
		for _, b := range bl {
			for _, v := range b.vals {
				switch {
				case v < 0: // a value L never shows: always left out
				case tx.Status != history.OK:
					return nil // it can take a position and break the key's chain
				default:
					s.exc[b.key][v]++
				}
			}
		}
		if len(bl) == 0 || tx.Status != history.OK {
			continue
		}
		writerOf[int32(t)] = int32(len(s.writers))
		s.writers = append(s.writers, int32(t))
		s.blocks = append(s.blocks, bl)
		s.inv = append(s.inv, tx.Invoke)
		s.comp = append(s.comp, tx.Complete)
	}
	for _, e := range s.exc {
		for _, c := range e {
			if c < 0 {
				return nil // a read shows a value more often than it was appended: a finding
			}
		}
	}
	s.chains, s.chainOf = processChains(h, s.writers, writerOf)
	if len(s.chains) > serialMaxChains {
		return nil
	}
	s.head = make([]int32, len(s.chains))
	s.pos = make([]int32, len(s.keys))
	s.full = make([]bool, len(s.keys))
	s.unp = make([][]int32, len(s.keys))
	for k := range s.unp {
		s.unp[k] = make([]int32, len(s.exc[k]))
	}
	return s
}

// The search (internal/ordersearch) moves through these: a process's next writer runs
// when every key it appends to takes it, and is undone from the actions recorded.

// Candidates appends the processes whose next writer may run (real time allowing),
// earliest invocation first.
func (s *serialSearch) Candidates(buf []int32) []int32 {
	from := len(buf)
	minComp := int32(-1)
	if s.realtime {
		for c, ch := range s.chains {
			if int(s.head[c]) < len(ch) {
				if cp := s.comp[ch[s.head[c]]]; cp >= 0 && (minComp < 0 || cp < minComp) {
					minComp = cp
				}
			}
		}
	}
	for c, ch := range s.chains {
		if int(s.head[c]) >= len(ch) {
			continue
		}
		w := ch[s.head[c]]
		if minComp >= 0 && s.inv[w] >= 0 && minComp < s.inv[w] {
			continue // a writer that completed before it was invoked has not run
		}
		buf = append(buf, int32(c))
	}
	cands := buf[from:]
	sort.Slice(cands, func(i, j int) bool {
		a, b := s.chains[cands[i]][s.head[cands[i]]], s.chains[cands[j]][s.head[cands[j]]]
		return s.inv[a] < s.inv[b]
	})
	return buf
}

// Run runs process c's next writer on every key it appends to; false when some key
// cannot take it.
func (s *serialSearch) Run(c int32) bool {
	w := s.chains[c][s.head[c]]
	mark := len(s.undo)
	var ok bool
	if s.undo, ok = s.apply(w, s.undo); !ok {
		s.undoTo(s.undo[mark:])
		s.undo = s.undo[:mark]
		return false
	}
	s.marks = append(s.marks, int32(mark))
	s.head[c]++
	s.order = append(s.order, w)
	if len(s.order) > s.deepest {
		s.deepest = len(s.order)
		s.deepHead = append(s.deepHead[:0], s.head...)
		s.deepPos = append(s.deepPos[:0], s.pos...)
		s.deepFull = append(s.deepFull[:0], s.full...)
	}
	return true
}

// Undo reverts the last writer run.
func (s *serialSearch) Undo() {
	w := s.order[len(s.order)-1]
	s.order = s.order[:len(s.order)-1]
	mark := s.marks[len(s.marks)-1]
	s.marks = s.marks[:len(s.marks)-1]
	s.undoTo(s.undo[mark:])
	s.undo = s.undo[:mark]
	s.head[s.chainOf[w]]--
}

// Done reports whether every writer has run and every key is full.
func (s *serialSearch) Done() bool {
	for c, ch := range s.chains {
		if int(s.head[c]) < len(ch) {
			return false
		}
	}
	for k := range s.keys {
		if int(s.pos[k]) < len(s.ls[k]) {
			return false
		}
	}
	return true
}

// run reports Valid (s.order is an order that runs every key), Invalid (none does) or
// Unknown (stopped, or too many states to remember).
func (s *serialSearch) run() Verdict {
	r := ordersearch.Search(s, ordersearch.Limits{MaxStates: serialMaxStates, MaxBytes: serialMemoBytes, Stop: s.stop})
	s.states = r.States
	switch r.Outcome {
	case ordersearch.Found:
		return Valid
	case ordersearch.Exhausted:
		return Invalid
	}
	return Unknown
}

// apply runs writer w on every key it appends to, recording in undo what it changed;
// false when some key cannot take it (undo then holds what to revert).
func (s *serialSearch) apply(w int32, undo []serialAction) ([]serialAction, bool) {
	for bi, b := range s.blocks[w] {
		k := b.key
		l := s.ls[k]
		n := int32(len(l))
		p := s.pos[k]
		if s.full[k] {
			if !s.leaveOut(k, b.vals) {
				return undo, false
			}
			undo = append(undo, serialAction{w: w, b: int32(bi), kind: 2, from: p})
			continue
		}
		m := int32(len(b.vals))
		if p+m <= n {
			if !sameMultiset(l[p:p+m], b.vals) {
				return undo, false
			}
			s.pos[k] = p + m
			undo = append(undo, serialAction{w: w, b: int32(bi), kind: 0, from: p})
			continue
		}
		// It fills the key: what L has left must be among its values, the rest is
		// left out.
		rest, ok := subtractMultiset(b.vals, l[p:])
		if !ok || !s.leaveOut(k, rest) {
			return undo, false
		}
		s.pos[k], s.full[k] = n, true
		undo = append(undo, serialAction{w: w, b: int32(bi), kind: 1, from: p})
	}
	return undo, true
}

// leaveOut counts vals as left out of key k's list; false (nothing counted) when some
// value would be left out more often than L allows.
func (s *serialSearch) leaveOut(k int32, vals []int32) bool {
	for i, v := range vals {
		if v < 0 {
			continue
		}
		if s.unp[k][v]++; s.unp[k][v] > s.exc[k][v] {
			for _, u := range vals[:i+1] {
				if u >= 0 {
					s.unp[k][u]--
				}
			}
			return false
		}
	}
	return true
}

// undoTo reverts actions, the last first.
func (s *serialSearch) undoTo(actions []serialAction) {
	for i := len(actions) - 1; i >= 0; i-- {
		a := actions[i]
		b := s.blocks[a.w][a.b]
		k := b.key
		switch a.kind {
		case 0:
			s.pos[k] = a.from
		case 1:
			rest, _ := subtractMultiset(b.vals, s.ls[k][a.from:])
			for _, v := range rest {
				if v >= 0 {
					s.unp[k][v]--
				}
			}
			s.pos[k], s.full[k] = a.from, false
		case 2:
			for _, v := range b.vals {
				if v >= 0 {
					s.unp[k][v]--
				}
			}
		}
	}
}

// State encodes what decides the rest of the search: how far each process got, and
// for each full key what its late writers left out (an open key's position follows
// from the processes').
func (s *serialSearch) State(buf []byte) []byte {
	for _, hd := range s.head {
		buf = binary.AppendUvarint(buf, uint64(hd))
	}
	for k, f := range s.full {
		if !f {
			continue
		}
		buf = binary.AppendUvarint(buf, uint64(k)+1)
		for _, c := range s.unp[k] {
			buf = binary.AppendUvarint(buf, uint64(c))
		}
	}
	return buf
}

// longestReads returns each key's longest read of an :ok transaction, and whether
// another read of that length differs.
func longestReads(h *history.History) (longest [][]int32, several []bool) {
	nkeys := len(h.Keys)
	longest, several = make([][]int32, nkeys), make([]bool, nkeys)
	for t := range h.Txns {
		if h.Txns[t].Status != history.OK {
			continue
		}
		ops := h.TxnOps(t)
		for i := range ops {
			op := &ops[i]
			if op.Kind != history.Read || !op.Known || int(op.Key) >= nkeys {
				continue
			}
			l := h.ReadList(op)
			switch cur := longest[op.Key]; {
			case len(l) > len(cur):
				longest[op.Key], several[op.Key] = l, false
			case len(l) == len(cur) && len(l) > 0 && !slices.Equal(l, cur):
				several[op.Key] = true
			}
		}
	}
	return longest, several
}

// txnBlocks returns transaction t's appends to the searched keys (keyIdx: a key's
// index, -1 when not searched) grouped by key, as local value ids (local, per
// searched key; -1: a value the key's longest read never shows), each block sorted.
func txnBlocks(h *history.History, t int32, keyIdx []int32, local []map[int32]int32) []serialBlock {
	var bl []serialBlock
	for _, op := range h.TxnOps(int(t)) {
		if op.Kind != history.Append || int(op.Key) >= len(keyIdx) || keyIdx[op.Key] < 0 {
			continue
		}
		ki := keyIdx[op.Key]
		v, shown := local[ki][op.Value]
		if !shown {
			v = -1
		}
		j := slices.IndexFunc(bl, func(b serialBlock) bool { return b.key == ki })
		if j < 0 {
			bl = append(bl, serialBlock{key: ki})
			j = len(bl) - 1
		}
		bl[j].vals = append(bl[j].vals, v)
	}
	for i := range bl {
		slices.Sort(bl[i].vals)
	}
	return bl
}

// localValues returns l with its values as local ids (0, 1, ... in order of first
// appearance), and the map from the history's ids.
func localValues(l []int32) ([]int32, map[int32]int32) {
	m := map[int32]int32{}
	out := make([]int32, len(l))
	for p, v := range l {
		id, ok := m[v]
		if !ok {
			id = int32(len(m))
			m[v] = id
		}
		out[p] = id
	}
	return out, m
}

// processChains groups writers (transactions; writerOf gives each one's index) by
// process, each chain in the order the process edges take (orderEdges), and returns
// each writer's chain too.
func processChains(h *history.History, writers []int32, writerOf map[int32]int32) (chains [][]int32, chainOf []int32) {
	byProc := byProcess(h, writers)
	for i, t := range byProc {
		p := h.Txns[t].Process
		if i == 0 || p < 0 || p != h.Txns[byProc[i-1]].Process {
			chains = append(chains, nil)
		}
		chains[len(chains)-1] = append(chains[len(chains)-1], writerOf[t])
	}
	chainOf = make([]int32, len(writers))
	for c, ch := range chains {
		for _, w := range ch {
			chainOf[w] = int32(c)
		}
	}
	return chains, chainOf
}

// sameMultiset reports whether a (any order) holds the values of sorted.
func sameMultiset(a, sorted []int32) bool {
	if len(a) == 1 {
		return a[0] == sorted[0]
	}
	var tmp [8]int32
	c := append(tmp[:0], a...)
	slices.Sort(c)
	return slices.Equal(c, sorted)
}

// subtractMultiset returns sorted less the values of part (any order), false when part
// is not within it.
func subtractMultiset(sorted, part []int32) ([]int32, bool) {
	c := slices.Clone(part)
	slices.Sort(c)
	var rest []int32
	j := 0
	for _, v := range sorted {
		if j < len(c) && c[j] == v {
			j++
			continue
		}
		rest = append(rest, v)
	}
	return rest, j == len(c)
}

// SerialProof is the serial search's proof that no order runs every key (Invalid):
// Writers :ok writers, of which no order that keeps the model's order runs more than
// Deepest (after States failed states); at such a state Stuck says why each process's
// next writer cannot run.
type SerialProof struct {
	Writers []int32
	Deepest int
	States  int
	Stuck   []StuckWriter
}

// StuckWriter is a process's next writer at the deepest state: on Key, whose longest
// read is Length long and filled up to Position (0-based), it appends Values while the
// read shows Shown there (Full: the key is full and its late writers already left out
// every value L leaves out that it appends); Blocked: a writer that completed before
// it was invoked has not run (real time), Blocker.
type StuckWriter struct {
	Txn, Key         int32
	Position, Length int32
	Values, Shown    []int32
	Full, Blocked    bool
	Blocker          int32
}

// Serial decides the strong forms of read uncommitted (process order, and real time
// with realtime) by the serial search: Valid when an order it finds passes the cycle
// search as an attribution, Invalid with the proof when no order exists, Unknown when
// the search does not apply (a key with several longest reads, or whose values an
// uncommitted transaction appends) or was stopped.
func (x *Index) Serial(realtime bool, stop func() bool) (Verdict, *SerialProof) {
	v, proof, _ := x.serial(realtime, stop)
	return v, proof
}

// addStates adds n failed states to the caller's count (States), if any.
func (x *Index) addStates(n int) {
	if x.States != nil {
		*x.States += int64(n)
	}
}

// serial is Serial, and reports whether the search applied.
func (x *Index) serial(realtime bool, stop func() bool) (Verdict, *SerialProof, bool) {
	s := newSerialSearch(x.h, realtime, stop)
	if s == nil {
		return Unknown, nil, false
	}
	v := s.run()
	x.addStates(s.states)
	switch v {
	case Valid:
		if s.verify(realtime) {
			return Valid, nil, true
		}
	case Invalid:
		return Invalid, s.proof(), true
	}
	return Unknown, nil, true
}

// verify checks the order found as an attribution: each key's positions given to the
// writers as they ran, ww edges between consecutive positions of different writers and
// from the last one to each writer with an append in no position, with the model's
// orders: the cycle search must find none.
func (s *serialSearch) verify(realtime bool) bool {
	h := s.h
	d := &decider{h: h, n: len(h.Txns)}
	d.orderEdges(true, realtime)
	owner := make([][]int32, len(s.keys))
	for k := range owner {
		owner[k] = make([]int32, 0, len(s.ls[k]))
	}
	var left [][]int32 = make([][]int32, len(s.keys)) // per key: writers with appends in no position
	for _, w := range s.order {
		t := s.writers[w]
		for _, b := range s.blocks[w] {
			k := b.key
			n := len(s.ls[k])
			take := min(len(b.vals), n-len(owner[k]))
			for i := 0; i < take; i++ {
				owner[k] = append(owner[k], t)
			}
			if take < len(b.vals) {
				left[k] = append(left[k], t)
			}
		}
	}
	for k, o := range owner {
		if len(o) != len(s.ls[k]) {
			return false
		}
		l := s.orig[k]
		for p := 1; p < len(o); p++ {
			if o[p-1] != o[p] {
				d.push(o[p-1], edge{to: o[p], kind: WW, key: s.keys[k], prev: l[p-1], val: l[p]})
			}
		}
		last := o[len(o)-1]
		for _, t := range left[k] {
			if t != last {
				d.push(last, edge{to: t, kind: WW, key: s.keys[k], prev: l[len(l)-1], val: -1})
			}
		}
	}
	return d.findCycle() == nil
}

// proof says why the search failed at its deepest state.
func (s *serialSearch) proof() *SerialProof {
	p := &SerialProof{Deepest: s.deepest, States: s.states}
	for _, t := range s.writers {
		p.Writers = append(p.Writers, t)
	}
	if s.deepHead == nil {
		s.deepHead = make([]int32, len(s.chains))
		s.deepPos = make([]int32, len(s.keys))
		s.deepFull = make([]bool, len(s.keys))
	}
	// The earliest completion among the next writers: real time blocks those invoked
	// after it.
	blocker := int32(-1)
	if s.realtime {
		for c, ch := range s.chains {
			if hd := s.deepHead[c]; int(hd) < len(ch) {
				if w := ch[hd]; s.comp[w] >= 0 && (blocker < 0 || s.comp[w] < s.comp[blocker]) {
					blocker = w
				}
			}
		}
	}
	for c, ch := range s.chains {
		hd := s.deepHead[c]
		if int(hd) >= len(ch) {
			continue
		}
		w := ch[hd]
		if blocker >= 0 && s.inv[w] >= 0 && s.comp[blocker] < s.inv[w] {
			p.Stuck = append(p.Stuck, StuckWriter{Txn: s.writers[w], Key: -1, Blocked: true, Blocker: s.writers[blocker]})
			continue
		}
		// The first of its keys that cannot take it (on the deepest state's
		// positions; a key full there takes only values L leaves out).
		for _, b := range s.blocks[w] {
			k := b.key
			l := s.ls[k]
			pos := s.deepPos[k]
			sw := StuckWriter{Txn: s.writers[w], Key: s.keys[k], Position: pos, Length: int32(len(l)), Full: s.deepFull[k]}
			for _, v := range b.vals {
				sw.Values = append(sw.Values, s.value(k, v))
			}
			m := min(int(pos)+len(b.vals), len(l))
			for _, v := range l[pos:m] {
				sw.Shown = append(sw.Shown, s.value(k, v))
			}
			if s.deepFull[k] || int(pos)+len(b.vals) > len(l) || !sameMultiset(l[pos:m], b.vals) {
				p.Stuck = append(p.Stuck, sw)
				break
			}
		}
	}
	return p
}

// value is the history's value id of key k's local value v (-1: one L never shows).
func (s *serialSearch) value(k int32, v int32) int32 {
	if v < 0 {
		return -1
	}
	for p, u := range s.ls[k] {
		if u == v {
			return s.orig[k][p]
		}
	}
	return -1
}
