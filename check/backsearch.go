package check

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"doppel/encode"
	"doppel/history"
)

// searchSerialBackward looks for a serial order from its end: the state is the set of
// transactions not yet placed, and each step picks the one that runs last among them.
// A transaction may run last when every key it appends to ends with its values (each
// key's position is the number of appends left to it; a position past the trace's end
// takes any value) and each of its reads sees exactly the position left below it.
//
// It is the forward search (searchSerial) mirrored, and it decides other histories:
// on snapshot-isolation histories checked as serializable (five clients, values 1..2
// on every key), the forward search takes a transaction early that a valid order runs
// far later (one was postponed over 41 levels, the subtrees in between failing after
// 400K nodes), where from the end the first choice is almost always right: 2K and 4K
// histories the solver left unknown after 20 s take ~0.6 nodes per transaction.
//
// The rules mirror the forward ones:
//   - a read-only transaction that may run last is placed at once (it moves no key);
//   - the choices are the transactions appending, latest midpoint first;
//   - lowering a key below a position its readers still need (a reader left must see
//     exactly its length: positions only fall) fails the step;
//   - a (key, value) with fewer appends left than the trace's positions below the key's
//     position holding it fails the step;
//   - states searched in full are remembered (a Zobrist hash of the set placed).
//
// :info transactions never run here (an order without them is one a replay may run);
// so where one must fill a trace position the search finds nothing. Like searchSerial
// it only proves: the order goes to verifySerial, and an exhausted search proves
// nothing (the hash may collide). maxWork bounds the transactions examined.
func searchSerialBackward(h *history.History, in *encode.Inference, commit []encode.Commit, maxWork int64, stop func() bool) ([]int32, bool) {
	s := newBackSearch(h, in, commit)
	if s == nil {
		return nil, false
	}
	s.maxWork, s.stop = maxWork, stop
	if !s.dfs() {
		return nil, false
	}
	order := slices.Clone(s.placed)
	slices.Reverse(order)
	return order, true
}

type backSearch struct {
	h *history.History

	// Per key: the appends left to it (its position), its trace's length and its first
	// slot (positions 0..total appends of the key are slots base+position).
	pos, traceLen, base []int32
	trace               [][]int32 // per key, its trace
	slotClass           []int32   // per slot, the class of the trace's value there (-1: past it)
	// readers[readerStart[sl]:readerStart[sl+1]]: the transactions with a known read that
	// needs their key at slot sl's position while they are the last left; pending counts
	// those reads left, per slot.
	readerStart, readers, pending []int32
	// readSlots[readSlotStart[t]:readSlotStart[t+1]]: the slots of t's known reads.
	readSlotStart, readSlots []int32
	// tops[topStart[b]:topStart[b+1]]: per bucket (a key and a value), the
	// transactions whose last append to the key without reading it appends the value;
	// bucketsOf[bucketStart[k]:bucketStart[k+1]]: key k's buckets. slotTop: per slot at
	// position p >= 1 of its key, the bucket of the trace's value at p-1 (noBucket: none;
	// everyBucket past the trace, where any value may end the key).
	topStart, tops         []int32
	bucketStart, bucketsOf []int32
	slotTop                []int32
	// Per (key, value) the trace holds (class): demand, its positions below the key's
	// position; supply, the appends of it left. opClass: per micro-op, its append's
	// class (-1: none).
	demand, supply []int32
	opClass        []int32

	left      []bool // per transaction: must run and is not placed yet
	appends   []bool // per transaction: it appends
	leftCount int
	placed    []int32
	prio      []int64
	zob       []uint64
	hash      uint64
	failed    stateSet

	own, stamp []int32 // per key, scratch of fits: t's appends to it (stamp == epoch)
	epoch      int32
	seen       []int32 // per transaction, the last node that listed it
	node       int32
	choices    []int32

	work, maxWork, nextStop int64
	stop                    func() bool
	aborted                 bool
}

func newBackSearch(h *history.History, in *encode.Inference, commit []encode.Commit) *backSearch {
	n := int32(len(h.Txns))
	nk := int32(len(in.Keys))
	s := &backSearch{h: h,
		pos: make([]int32, nk), traceLen: make([]int32, nk), base: make([]int32, nk),
		own: make([]int32, nk), stamp: make([]int32, nk),
		left: make([]bool, n), appends: make([]bool, n), prio: make([]int64, n), zob: make([]uint64, n),
		seen:    make([]int32, n),
		opClass: make([]int32, len(h.Ops)),
	}
	for t := int32(0); t < n; t++ {
		tx := &h.Txns[t]
		if tx.Status != history.OK || commit[t] != encode.Committed {
			continue
		}
		s.left[t] = true
		s.leftCount++
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			if h.Ops[i].Kind == history.Append {
				s.pos[h.Ops[i].Key]++
				s.appends[t] = true
			}
		}
	}
	slots := int32(0)
	classOf := map[uint64]int32{}
	s.trace = make([][]int32, nk)
	for k := int32(0); k < nk; k++ {
		s.trace[k] = in.Keys[k].Trace
		s.traceLen[k] = int32(len(in.Keys[k].Trace))
		if s.pos[k] < s.traceLen[k] {
			return nil // too few appends for the trace (an :info one must fill it)
		}
		s.base[k] = slots
		slots += s.pos[k] + 1
	}
	s.slotClass = make([]int32, slots)
	for k := int32(0); k < nk; k++ {
		for p := int32(0); p <= s.pos[k]; p++ {
			s.slotClass[s.base[k]+p] = -1
		}
		for p, v := range in.Keys[k].Trace {
			c, ok := classOf[uint64(k)<<32|uint64(uint32(v))]
			if !ok {
				c = int32(len(s.demand))
				classOf[uint64(k)<<32|uint64(uint32(v))] = c
				s.demand = append(s.demand, 0)
			}
			s.slotClass[s.base[k]+int32(p)] = c
			s.demand[c]++
		}
	}
	s.supply = make([]int32, len(s.demand))
	s.pending = make([]int32, slots)
	readersAt := make([][]int32, slots)
	var topLists [][]int32
	topOf := map[uint64]int32{} // per (key, value), its bucket
	keyBuckets := make([][]int32, nk)
	s.readSlotStart = make([]int32, n+1)
	rng := rand.New(rand.NewPCG(3, 4))
	for t := int32(0); t < n; t++ {
		s.zob[t] = rng.Uint64()
		s.readSlotStart[t+1] = int32(len(s.readSlots))
		if !s.left[t] {
			continue
		}
		tx := &h.Txns[t]
		s.prio[t] = int64(tx.Invoke) + int64(tx.Complete)
		// Each key's appends by t in all (own), then its reads: a read at micro-op i
		// sees the position below t plus t's appends before i, and t is last when the
		// key stands at the position below t plus all of t's appends to it.
		own, before := map[int32]int32{}, map[int32]int32{}
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			if h.Ops[i].Kind == history.Append {
				own[h.Ops[i].Key]++
			}
		}
		readKeys := []int32{}
		// Per key t appends to, in the order of its first append: the last value it
		// appends there and whether t also reads the key.
		var tops []backTop
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			k := op.Key
			if op.Kind == history.Append {
				before[k]++
				if j := slices.IndexFunc(tops, func(e backTop) bool { return e.key == k }); j >= 0 {
					tops[j].value = op.Value
				} else {
					tops = append(tops, backTop{key: k, value: op.Value})
				}
				s.opClass[i] = -1
				if c, ok := classOf[uint64(k)<<32|uint64(uint32(op.Value))]; ok {
					s.opClass[i] = c
					s.supply[c]++
				}
				continue
			}
			if !op.Known {
				continue
			}
			readKeys = append(readKeys, k)
			at := op.End - op.Start - before[k] // the key's position below t
			p := at + own[k]
			if at < 0 || p > s.pos[k] {
				return nil // a read no position gives
			}
			sl := s.base[k] + p
			readersAt[sl] = append(readersAt[sl], t)
			s.pending[sl]++
			s.readSlots = append(s.readSlots, sl)
		}
		s.readSlotStart[t+1] = int32(len(s.readSlots))
		for _, e := range tops {
			k := e.key
			if slices.Contains(readKeys, k) {
				continue // found through its read's slot
			}
			key := uint64(k)<<32 | uint64(uint32(e.value))
			b, ok := topOf[key]
			if !ok {
				b = int32(len(topLists))
				topOf[key] = b
				topLists = append(topLists, nil)
				keyBuckets[k] = append(keyBuckets[k], b)
			}
			topLists[b] = append(topLists[b], t)
		}
	}
	for c := range s.demand {
		if s.supply[c] < s.demand[c] {
			return nil
		}
	}
	s.readerStart, s.readers = flatten(readersAt)
	s.topStart, s.tops = flatten(topLists)
	s.bucketStart, s.bucketsOf = flatten(keyBuckets)
	s.slotTop = make([]int32, slots)
	for k := int32(0); k < nk; k++ {
		for p := int32(1); p <= s.pos[k]; p++ {
			top := int32(everyBucket)
			if p <= s.traceLen[k] {
				top = noBucket
				if b, ok := topOf[uint64(k)<<32|uint64(uint32(s.trace[k][p-1]))]; ok {
					top = b
				}
			}
			s.slotTop[s.base[k]+p] = top
		}
	}
	return s
}

// slotTop's marks besides a bucket.
const (
	noBucket    = -1
	everyBucket = -2
)

// backTop is a key a transaction appends to and the last value it appends there.
type backTop struct{ key, value int32 }

// flatten lays lists end to end: list i is flat[start[i]:start[i+1]].
func flatten(lists [][]int32) (start, flat []int32) {
	start = make([]int32, len(lists)+1)
	for i, l := range lists {
		start[i+1] = start[i] + int32(len(l))
		flat = append(flat, l...)
	}
	return start, flat
}

// fits reports whether t may run last among the transactions left: each append lands
// on its key's value (or past the trace) and each known read sees its length.
func (s *backSearch) fits(t int32) bool {
	h := s.h
	tx := &h.Txns[t]
	s.work++
	s.epoch++
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		if k := h.Ops[i].Key; h.Ops[i].Kind == history.Append {
			if s.stamp[k] != s.epoch {
				s.stamp[k], s.own[k] = s.epoch, 0
			}
			s.own[k]++
		}
	}
	// own becomes each key's position as t's micro-ops reach it.
	s.epoch++
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		op := &h.Ops[i]
		k := op.Key
		switch s.stamp[k] {
		case s.epoch - 1:
			s.stamp[k], s.own[k] = s.epoch, s.pos[k]-s.own[k]
		case s.epoch:
		default:
			s.stamp[k], s.own[k] = s.epoch, s.pos[k]
		}
		at := s.own[k]
		if op.Kind == history.Append {
			if at < s.traceLen[k] && s.trace[k][at] != op.Value {
				return false
			}
			s.own[k] = at + 1
			continue
		}
		if op.Known && op.End-op.Start != at {
			return false
		}
	}
	return true
}

// place takes t as the last of those left (it fits). It reports false when that
// leaves a reader without its position or a (key, value) without the appends its
// positions below need; undo reverts it either way.
func (s *backSearch) place(t int32) bool {
	h := s.h
	tx := &h.Txns[t]
	s.left[t] = false
	s.leftCount--
	s.placed = append(s.placed, t)
	s.hash ^= s.zob[t]
	for _, sl := range s.readSlots[s.readSlotStart[t]:s.readSlotStart[t+1]] {
		s.pending[sl]--
	}
	ok := true
	// Appends from the last: each takes its key's top position.
	for i := tx.OpEnd - 1; i >= tx.OpStart; i-- {
		op := &h.Ops[i]
		if op.Kind != history.Append {
			continue
		}
		k := op.Key
		if s.pending[s.base[k]+s.pos[k]] > 0 {
			ok = false // a reader left needs the key where it stands
		}
		s.pos[k]--
		c := s.opClass[i]
		if c >= 0 {
			s.supply[c]--
		}
		if sc := s.slotClass[s.base[k]+s.pos[k]]; sc >= 0 {
			s.demand[sc]--
		} else if c >= 0 && s.supply[c] < s.demand[c] {
			ok = false // its value is needed below, and it went past the trace
		}
	}
	return ok
}

// undo reverts the last place.
func (s *backSearch) undo() {
	h := s.h
	t := s.placed[len(s.placed)-1]
	s.placed = s.placed[:len(s.placed)-1]
	tx := &h.Txns[t]
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		op := &h.Ops[i]
		if op.Kind != history.Append {
			continue
		}
		k := op.Key
		if sc := s.slotClass[s.base[k]+s.pos[k]]; sc >= 0 {
			s.demand[sc]++
		}
		if c := s.opClass[i]; c >= 0 {
			s.supply[c]++
		}
		s.pos[k]++
	}
	for _, sl := range s.readSlots[s.readSlotStart[t]:s.readSlotStart[t+1]] {
		s.pending[sl]++
	}
	s.hash ^= s.zob[t]
	s.left[t] = true
	s.leftCount++
}

func (s *backSearch) undoTo(mark int) {
	for len(s.placed) > mark {
		s.undo()
	}
}

// dfs places the read-only transactions that fit, then tries each appending one that
// fits as the last, latest midpoint first.
func (s *backSearch) dfs() bool {
	if s.failed.has(s.hash) {
		return false
	}
	entry := s.hash
	mark := len(s.placed)
	for k := range s.pos {
		sl := s.base[k] + s.pos[k]
		for _, t := range s.readers[s.readerStart[sl]:s.readerStart[sl+1]] {
			if s.left[t] && !s.appends[t] && s.fits(t) && !s.place(t) {
				s.undoTo(mark)
				s.failed.add(entry)
				return false
			}
		}
	}
	if s.leftCount == 0 {
		return true
	}
	if s.failed.has(s.hash) {
		s.undoTo(mark)
		s.failed.add(entry)
		return false
	}
	if s.work >= s.nextStop {
		s.nextStop = s.work + stopEveryWork
		if s.stop != nil && s.stop() {
			s.aborted = true
		}
	}
	if s.maxWork > 0 && s.work > s.maxWork {
		s.aborted = true
	}
	if s.aborted {
		s.undoTo(mark)
		return false
	}
	s.node++
	start := len(s.choices)
	consider := func(t int32) {
		if s.left[t] && s.appends[t] && s.seen[t] != s.node {
			s.seen[t] = s.node
			if s.fits(t) {
				s.choices = append(s.choices, t)
			}
		}
	}
	for k := range s.pos {
		p := s.pos[k]
		sl := s.base[k] + p
		for _, t := range s.readers[s.readerStart[sl]:s.readerStart[sl+1]] {
			consider(t)
		}
		if p == 0 || s.slotTop[sl] == noBucket {
			continue
		}
		for _, b := range s.bucketsOf[s.bucketStart[k]:s.bucketStart[k+1]] {
			if top := s.slotTop[sl]; top != everyBucket && b != top {
				continue
			}
			for _, t := range s.tops[s.topStart[b]:s.topStart[b+1]] {
				consider(t)
			}
		}
	}
	ch := s.choices[start:]
	slices.SortFunc(ch, func(a, b int32) int { return cmp.Compare(s.prio[b], s.prio[a]) })
	for i := start; i < len(s.choices) && !s.aborted; i++ {
		t := s.choices[i]
		if s.failed.has(s.hash ^ s.zob[t]) {
			continue
		}
		if s.place(t) && s.dfs() {
			return true
		}
		s.undo()
	}
	s.choices = s.choices[:start]
	if !s.aborted {
		s.failed.add(s.hash)
		s.failed.add(entry)
	}
	s.undoTo(mark)
	return false
}
