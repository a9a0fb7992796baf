package check

import (
	"math"
	"slices"
	"sync/atomic"

	"doppel/encode"
	"doppel/history"
)

// schedule tries to replay the history serially, for the serializable family: it runs
// transactions one at a time against per-key positions in the traces, always picking
// the ready transaction whose interval's midpoint comes first. A transaction is ready
// when each of its reads sees exactly the list installed so far (plus its own appends),
// each of its appends matches the trace at the current position (or lies past the
// trace), and its predecessors in order (process and real-time edges among orderEdges)
// have run or been dropped.
//
// commit says which transactions must run (Committed), may run (MayCommit: :info
// ones, run only when an append of theirs fills a trace position) or must not
// (NotCommitted). A complete replay is a serial order that explains every read; it
// returns the order, or false when the greedy choice gets stuck (the solver then
// decides). The order is checked independently by verifySerial before it counts.
//
// A stuck transaction waits on one (key, position) slot: the position its key must
// reach before the operation that stopped it can succeed. Positions only grow, so it
// is woken exactly then, not on every append to the key.
//
// stop, when not nil, is asked every few thousand steps; once it reports true the
// replay gives up (returns false).
func schedule(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge, byCompletion bool, stop func() bool) ([]int32, bool) {
	return scheduleWithin(h, in, commit, orderEdges, byCompletion, nil, stop)
}

// scheduleWithin is schedule with each :ok writer's block placed only within its window
// (package prune narrowed them; nil: anywhere): far fewer wrong choices among duplicate
// writers, and a wrong one is still caught by the verification.
func scheduleWithin(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge, byCompletion bool, win *encode.Windows, stop func() bool) ([]int32, bool) {
	r := newReplayStop(h, in, commit, orderEdges, stop)
	if r == nil {
		return nil, false
	}
	r.byCompletion = byCompletion
	r.win = win
	r.stop = stop
	return r.run()
}

// Transaction states of a replay.
const (
	rPending uint8 = iota // not run; maybe queued or waiting on a slot
	rQueued               // in the ready heap
	rDone                 // ran
	rDead                 // an optional transaction that will not run
	rStarted              // snapshot isolation: took its snapshot, not committed
	rSpare                // an optional transaction kept for when the replay is stuck
	rStale                // per read: ready only by reading an older list, kept for when stuck
)

// replayKey is a replay's state of one key.
type replayKey struct {
	pos          int32 // installed length of the list
	base, n      int32 // slot of position 0, trace length
	stamp, local int32 // check's view of one transaction: local valid when stamp == epoch
}

type replay struct {
	h      *history.History
	in     *encode.Inference
	commit []encode.Commit
	n      int32

	state []uint8
	order []int32

	// Order constraints: succ/pred in CSR form; preds[t] counts predecessors not yet
	// resolved (run, or dropped with their own predecessors resolved).
	succStart, succ []int32
	preds           []int32
	// Real-time order without its edges (the guide held encode.RealtimeGuide):
	// rtCompleted, the :ok transactions by completion; rtRan of them ran in a row from
	// the first; the transactions invoked after exactly g of them completed are
	// rtGated[rtGateStart[g]:rtGateStart[g+1]], each counting one predecessor in preds
	// until rtRan reaches g.
	rtCompleted, rtGateStart, rtGated []int32
	rtRan                             int32

	// Per key, together so that one cache line serves an operation.
	keys []replayKey
	// Slots (key, position): key k's positions 0..len(trace) are slots
	// keys[k].base+position; traceAt[slot] is the trace's value there.
	traceAt  []int32
	waitHead []int32 // per slot, the first waiting transaction (-1 none)
	// waitNext is, per transaction, the next one waiting on the same slot or key
	// (-1 none), or notParked: a transaction is linked into at most one wait list at a
	// time (linked twice, a list would loop and wake would never return).
	waitNext []int32

	// pending counts the reads still to run per slot (key, base: the length read minus
	// the reader's own earlier appends to the key): moving a key that a pending reader
	// needs at its current length would strand that reader. pendingRW counts those of
	// readers that also append to the key (snapshot isolation only).
	pending, pendingRW []int32
	readSlot           []int32 // per micro-op: its read's slot, -1 if none
	readWrites         []bool  // per micro-op: its read's transaction appends to the key (SI)

	epoch int32 // see replayKey.stamp

	// byCompletion orders ready transactions by completion rather than by the middle of
	// their interval: databases mostly serialize at commit.
	byCompletion bool

	// Snapshot isolation: holds[k] is the started transaction appending to key k (-1
	// none); others wait for its commit on keyWait[k]. nil for serial replays.
	holds   []int32
	keyWait []int32

	// win, when set, bounds where each :ok writer's block may start.
	win *encode.Windows
	// rank, when set (and win is not), orders ready transactions instead of their
	// intervals: each one's position in a serial order of the same history found
	// without order constraints (see scheduleRanked).
	rank []int64
	// avoid holds (writer, position) pairs a earlier replay of the same history got stuck
	// after (see blame): the writer's block does not start there. nil: none.
	avoid map[uint64]bool
	// filledBy is, per slot, the writer whose block starts at that position (-1 none),
	// kept only when blame may be asked (avoid not nil).
	filledBy []int32
	// checkpoint, when set, is called before every step (check/repair.go); the replay
	// halts there (stuck, in a state it can resume from) when it returns true.
	checkpoint func() bool

	// Optional (:info) transactions compete with committed ones for the trace
	// positions holding their values. Per (key, value) of keys an optional transaction
	// appends to (valueClass, sorted, key<<32 | value): demand counts the trace
	// positions not yet filled that hold the value, supply the appends of it by
	// committed transactions that have not run. An optional append is useful only
	// where demand exceeds supply: otherwise the committed appends fill every such
	// position, and one taken by the optional transaction pushes a committed append
	// past the trace, which strands the readers of the whole trace.
	optionalKey              []bool // per key: some optional transaction appends to it
	infoDuration             int64  // the mean duration of :ok transactions (see settleCertain)
	valueClass               []uint64
	classStart               []int32 // per key: its first class; classStart[k+1] ends it
	classDemand, classSupply []int32
	// wholeRead, under real-time order: per key, the earliest completion of a
	// committed read of its whole trace (MaxInt32 none). A committed writer invoked
	// after it appends past the trace, so it supplies none of the trace's values:
	// counted, it would make an optional writer that must fill a position look like a
	// thief of it. nil without real-time order.
	wholeRead []int32

	ready    txnHeap
	deferred []int32
	// spares: optional transactions that would steal trace positions committed ones
	// can fill (state rSpare). They run only when nothing else can: the committed
	// writers may be unable to fill those positions in time, when real-time order puts
	// one of them after a reader of the whole trace.
	spares []int32
	// abortedOnce: per transaction, an optional one a snapshot isolation replay aborted
	// (see abortOptional); nil until the first.
	abortedOnce []bool
	failed      bool // a transaction that must run never can
	fired       []int32

	stop  func() bool // the caller's limits, asked every stopEvery steps (nil: none)
	steps uint32

	// Per-read models (check/rcreplay.go): a read may see an older list than the
	// key's, ending where a block starts (blockStart, per slot). A transaction ready
	// only so, that appends inside a trace, waits in stale (state rStale) for when the
	// replay is stuck: taking a position now could take it from the writer whose read
	// pins it there.
	perRead    bool
	blockStart []bool
	stale      []int32
	// relaxGate: a repaired per-read or snapshot-mode replay, stuck, goes on by
	// running a kept-aside or deferred transaction (pickPerRead) only relaxes more
	// times, or when the transaction is in relaxAgain: the repair first undoes choices
	// as for a serial replay (repairLoop). relaxed lists the transactions it ran so, in
	// order.
	relaxGate bool
	pinGate   bool // per read: relaxGate holds only where a pinned read would be stranded
	pinPass   bool // ... and there the replay runs another that strands none, if any
	// pendingPin: per slot, the pending reads that show their transaction's own appends
	// (readPinned, per micro-op); nil when none.
	pendingPin []int32
	readPinned []bool
	relaxes    int
	relaxed    []int32
	relaxAgain []int32

	// Snapshot mode (check/snapreplay.go): a transaction whose reads all see the lists
	// of one earlier state, its appended keys unchanged since, runs as if it took its
	// snapshot then. Per slot (key, p): startStep, the commit (1-based) that moved the
	// key past p (0: none yet); endStep, the one that made its length p. lastWrite: per
	// key, the last commit appending to it. snapAt: per transaction, the state (commits
	// before) its snapshot shows.
	snapshot           bool
	startStep, endStep []int32
	lastWrite          []int32
	snapAt             []int32
}

func newReplay(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge) *replay {
	return newReplayStop(h, in, commit, orderEdges, nil)
}

// newReplayStop is newReplay that asks stop (when not nil) every few thousand
// transactions whether to give up, and then returns nil: at a million transactions
// the set-up takes a second or two.
func newReplayStop(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge, stop func() bool) *replay {
	// A replay of fewer transactions is never stopped in its set-up (its loop still is).
	big := stop != nil && len(h.Txns) >= stopEvery
	if big && stop() {
		return nil
	}
	r := newReplayBase(h, in, commit, orderEdges)
	if big && stop() || !r.placeReads(stop) {
		return nil
	}
	r.countValues()
	return r
}

// newReplayBase is newReplay without the reads placed (readSlot all -1, pending 0)
// and without the counts of values.
func newReplayBase(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge) *replay {
	n := int32(len(h.Txns))
	nk := len(in.Keys)
	r := &replay{h: h, in: in, commit: commit, n: n,
		keys: make([]replayKey, nk), state: make([]uint8, n), order: make([]int32, 0, n),
		preds: make([]int32, n), waitNext: make([]int32, n),
	}
	for t := range r.waitNext {
		r.waitNext[t] = notParked
	}
	// Order edges between transactions that may run, in CSR form.
	r.succStart = make([]int32, n+1)
	if slices.ContainsFunc(orderEdges, func(e encode.Edge) bool { return e.IsRealtimeGuide() }) {
		r.gateRealtime()
	}
	usable := func(e *encode.Edge) bool {
		return !e.IsRealtimeGuide() && (e.Kind == encode.Process || e.Kind == encode.Realtime) && e.G0 == e.G1 &&
			e.From < n && e.To < n && commit[e.From] != encode.NotCommitted && commit[e.To] != encode.NotCommitted
	}
	for i := range orderEdges {
		if e := &orderEdges[i]; usable(e) {
			r.succStart[e.From+1]++
			r.preds[e.To]++
		}
	}
	for t := int32(0); t < n; t++ {
		r.succStart[t+1] += r.succStart[t]
	}
	r.succ = make([]int32, r.succStart[n])
	fill := append([]int32(nil), r.succStart[:n]...)
	for i := range orderEdges {
		if e := &orderEdges[i]; usable(e) {
			r.succ[fill[e.From]] = e.To
			fill[e.From]++
		}
	}
	slots := int32(0)
	for k := range in.Keys {
		r.keys[k].base, r.keys[k].n = slots, int32(len(in.Keys[k].Trace))
		slots += r.keys[k].n + 1
	}
	r.traceAt = make([]int32, slots)
	for k := range in.Keys {
		copy(r.traceAt[r.keys[k].base:], in.Keys[k].Trace)
	}
	r.waitHead = make([]int32, slots)
	for i := range r.waitHead {
		r.waitHead[i] = -1
	}
	r.pending = make([]int32, slots)
	// Each read's slot, computed once: readSlot[op] for the history's micro-ops (-1 for
	// appends and for reads no replay places).
	r.readSlot = make([]int32, len(h.Ops))
	for i := range r.readSlot {
		r.readSlot[i] = -1
	}
	return r
}

// gateRealtime sets up real-time order as gates (see rtCompleted), once.
func (r *replay) gateRealtime() {
	if r.rtGateStart != nil {
		return
	}
	p := &encode.Problem{In: r.in, Commit: r.commit}
	completed, gate := p.RealtimeGates()
	r.rtCompleted = completed
	r.rtGateStart = make([]int32, len(completed)+2)
	for t, g := range gate {
		if g > 0 {
			r.rtGateStart[g+1]++
			r.preds[t]++
		}
	}
	for g := range len(completed) + 1 {
		r.rtGateStart[g+1] += r.rtGateStart[g]
	}
	r.rtGated = make([]int32, r.rtGateStart[len(completed)+1])
	fill := slices.Clone(r.rtGateStart)
	for t, g := range gate {
		if g > 0 {
			r.rtGated[fill[g]] = int32(t)
			fill[g]++
		}
	}
}

// passRealtime releases the transactions whose real-time predecessors have now all
// run, as resolve does the successors of an edge.
func (r *replay) passRealtime() {
	for r.rtRan < int32(len(r.rtCompleted)) && r.state[r.rtCompleted[r.rtRan]] == rDone {
		r.rtRan++
		for _, s := range r.rtGated[r.rtGateStart[r.rtRan]:r.rtGateStart[r.rtRan+1]] {
			r.preds[s]--
			if r.preds[s] != 0 {
				continue
			}
			if r.state[s] == rDead {
				r.resolve(s)
			} else {
				r.try(s)
			}
		}
	}
}

// placeReads fills readSlot and pending with the reads of every committed :ok
// transaction, each at its length minus the transaction's own earlier appends. It
// reports false, unfinished, when stop (nil: none) says to give up. From stopEvery
// transactions on, the keys of each parity are placed in a goroutine of their own (a
// key's entry is a cache miss per operation at a million keys).
func (r *replay) placeReads(stop func() bool) bool {
	if r.n < 4*stopEvery {
		return r.placeReadsOf(0, 1, nil, stop)
	}
	epoch := r.epoch
	err := inHalves(func(part, parts int32, quit *atomic.Bool) error {
		if !r.placeReadsOf(part, parts, quit, nil) {
			return errStopped
		}
		return nil
	}, stop)
	// Both halves counted the same epochs from the same start (one per transaction).
	r.epoch = epoch + r.placeEpochs()
	return err == nil
}

// placeEpochs is how many epochs placeReadsOf counts: one per committed :ok transaction.
func (r *replay) placeEpochs() int32 {
	n := int32(0)
	for t := int32(0); t < r.n; t++ {
		if r.commit[t] == encode.Committed && r.h.Txns[t].Status == history.OK {
			n++
		}
	}
	return n
}

// placeReadsOf places the reads of the keys k with k % parts == part; it gives up,
// reporting false, when quit is raised or stop says so.
func (r *replay) placeReadsOf(part, parts int32, quit *atomic.Bool, stop func() bool) bool {
	h, n, commit := r.h, r.n, r.commit
	epoch := r.epoch
	for t := int32(0); t < n; t++ {
		if t&(stopEvery-1) == 0 && t > 0 && (stop != nil && stop() || quit != nil && quit.Load()) {
			return false
		}
		if commit[t] != encode.Committed || h.Txns[t].Status != history.OK {
			continue
		}
		epoch++
		tx := &h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			if op.Key%parts != part {
				continue
			}
			if r.keys[op.Key].stamp != epoch {
				r.keys[op.Key].stamp = epoch
				r.keys[op.Key].local = 0 // own appends so far
			}
			if op.Kind == history.Append {
				r.keys[op.Key].local++
				continue
			}
			if l := op.End - op.Start; op.Known && l >= r.keys[op.Key].local {
				if s := r.slot(op.Key, l-r.keys[op.Key].local); s >= 0 {
					r.readSlot[i] = s
					r.pending[s]++
				}
			}
		}
	}
	if parts == 1 {
		r.epoch = epoch
	}
	return true
}

// countValues fills valueClass, classDemand and classSupply for the keys optional
// transactions append to.
func (r *replay) countValues() {
	in := r.in
	for t := int32(0); t < r.n; t++ {
		if r.commit[t] != encode.MayCommit {
			continue
		}
		for _, w := range in.TxnWriterIDs[in.TxnWriterStart[t]:in.TxnWriterStart[t+1]] {
			if r.optionalKey == nil {
				r.optionalKey = make([]bool, len(in.Keys))
			}
			r.optionalKey[in.Writers[w].Key] = true
		}
	}
	if r.optionalKey == nil {
		return
	}
	for k := range in.Keys {
		if r.optionalKey[k] {
			for _, v := range in.Keys[k].Trace {
				r.valueClass = append(r.valueClass, uint64(k)<<32|uint64(uint32(v)))
			}
		}
	}
	slices.Sort(r.valueClass)
	r.valueClass = slices.Compact(r.valueClass)
	// A key has few distinct values: class looks them up from the key's start instead
	// of searching all classes (millions at 1M transactions, each search cache misses).
	r.classStart = make([]int32, len(in.Keys)+1)
	for _, kv := range r.valueClass {
		r.classStart[kv>>32+1]++
	}
	for k := range in.Keys {
		r.classStart[k+1] += r.classStart[k]
	}
	r.classDemand = make([]int32, len(r.valueClass))
	r.classSupply = make([]int32, len(r.valueClass))
	if r.rtGateStart != nil {
		r.wholeRead = make([]int32, len(in.Keys))
		for k := range r.wholeRead {
			r.wholeRead[k] = math.MaxInt32
		}
		for ri := range in.Reads {
			rd := &in.Reads[ri]
			tx := &r.h.Txns[rd.Txn]
			if r.optionalKey[rd.Key] && rd.Len == int32(len(in.Keys[rd.Key].Trace)) && tx.Status == history.OK &&
				tx.Complete >= 0 && r.commit[rd.Txn] == encode.Committed {
				r.wholeRead[rd.Key] = min(r.wholeRead[rd.Key], tx.Complete)
			}
		}
	}
	for k := range in.Keys {
		if !r.optionalKey[k] {
			continue
		}
		for _, v := range in.Keys[k].Trace {
			r.classDemand[r.class(int32(k), v)]++
		}
		for _, w := range in.Keys[k].Writers {
			wr := &in.Writers[w]
			if r.commit[wr.Txn] != encode.Committed || !r.suppliesTrace(wr.Txn, int32(k)) {
				continue
			}
			for _, v := range in.WriterVals[wr.Start:wr.End] {
				if c := r.class(int32(k), v); c >= 0 {
					r.classSupply[c]++
				}
			}
		}
	}
	r.settleCertain()
}

// settleCertain runs as committed the optional transactions that must have committed:
// the only optional writer of a value that a key's trace holds more often than the
// committed appends supply. Left optional, such a transaction runs only where it is
// needed and steals nothing, so a committed writer of the same value may take a
// position that was its own (the committed one having come after the readers of the
// whole trace); committed, the two compete by interval instead. r.commit is copied
// before it changes (the caller's slice is shared).
func (r *replay) settleCertain() {
	in := r.in
	// onlyWriter[c]: the one optional transaction appending class c's value to its key,
	// -1 none, -2 several.
	onlyWriter := make([]int32, len(r.valueClass))
	for i := range onlyWriter {
		onlyWriter[i] = -1
	}
	for k := range in.Keys {
		if !r.optionalKey[k] {
			continue
		}
		for _, w := range in.Keys[k].Writers {
			wr := &in.Writers[w]
			if r.commit[wr.Txn] != encode.MayCommit {
				continue
			}
			for _, v := range in.WriterVals[wr.Start:wr.End] {
				switch c := r.class(int32(k), v); {
				case c < 0:
				case onlyWriter[c] == -1:
					onlyWriter[c] = wr.Txn
				case onlyWriter[c] != wr.Txn:
					onlyWriter[c] = -2
				}
			}
		}
	}
	copied := false
	for changed := true; changed; {
		changed = false
		for c, t := range onlyWriter {
			if t < 0 || r.classDemand[c] <= r.classSupply[c] || r.commit[t] != encode.MayCommit {
				continue
			}
			if !copied {
				r.commit = slices.Clone(r.commit)
				copied = true
			}
			r.commit[t] = encode.Committed
			changed = true
			for _, w := range in.TxnWriterIDs[in.TxnWriterStart[t]:in.TxnWriterStart[t+1]] {
				wr := &in.Writers[w]
				if !r.suppliesTrace(t, wr.Key) {
					continue
				}
				for _, v := range in.WriterVals[wr.Start:wr.End] {
					if c := r.class(wr.Key, v); c >= 0 {
						r.classSupply[c]++
					}
				}
			}
		}
	}
	if !copied {
		return
	}
	// Their interval has no end: estimate it with the mean duration of :ok ones.
	r.infoDuration = r.h.MeanOKDuration()
}

// suppliesTrace reports whether a committed t's appends to key k may fill positions of
// its trace (see wholeRead).
func (r *replay) suppliesTrace(t, k int32) bool {
	return r.wholeRead == nil || r.h.Txns[t].Invoke <= r.wholeRead[k]
}

// class returns the index of (key k, value v) in valueClass, -1 if v is not in k's
// trace (or k is not a key optional transactions append to).
func (r *replay) class(k, v int32) int32 {
	lo, hi := r.classStart[k], r.classStart[k+1]
	if i, ok := slices.BinarySearch(r.valueClass[lo:hi], uint64(k)<<32|uint64(uint32(v))); ok {
		return lo + int32(i)
	}
	return -1
}

// readBases calls f with the slot of each read of t that a replay must place (t must
// run, and its reads count), and, for snapshot isolation, whether t also appends to
// that key.
func (r *replay) readBases(t int32, f func(slot int32, writes bool)) {
	tx := &r.h.Txns[t]
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		if s := r.readSlot[i]; s >= 0 {
			f(s, r.readWrites != nil && r.readWrites[i])
		}
	}
}

// slot returns the slot of key k at position p, or -1 past the trace (no read waits
// there: every read is a prefix of the trace).
func (r *replay) slot(k, p int32) int32 {
	if ks := &r.keys[k]; p <= ks.n {
		return ks.base + p
	}
	return -1
}

// notParked marks, in waitNext, a transaction on no wait list.
const notParked = -2

// Results of check besides a slot to wait on.
const (
	waitNever = -1 // cannot run now or later
	waitPreds = -2 // predecessors in order have not run
	// waitSpare: an optional transaction that can run now but steals a trace position
	// the committed transactions can fill.
	waitSpare = -3
	// waitStale: per read, t can run now only by reading an older list, and it appends
	// inside a trace.
	waitStale = -4
	// waitKey - k: key k is held by a started transaction (snapshot isolation).
	waitKey = -5
)

// check reports whether t can run now; if not, the slot to wait on, or waitNever /
// waitPreds / waitSpare.
func (r *replay) check(t int32) (bool, int32) {
	if r.preds[t] > 0 {
		return false, waitPreds
	}
	h := r.h
	r.epoch++
	// An optional transaction runs only to fill a trace position: it is needed where
	// the committed transactions cannot fill all the positions holding the value, and
	// it steals a position where they can (a committed append then lands past the
	// trace, stranding the readers of the whole trace).
	optional := r.commit[t] != encode.Committed
	needed, steals := !optional, false
	readsCount := h.Txns[t].Status == history.OK
	stale, inside := false, false
	opStart := h.Txns[t].OpStart
	lo, hi := int32(0), int32(math.MaxInt32) // snapshot mode: the states its snapshot may show
	for i, op := range h.TxnOps(int(t)) {
		k := op.Key
		if r.keys[k].stamp != r.epoch {
			r.keys[k].stamp = r.epoch
			r.keys[k].local = r.keys[k].pos
		}
		at := r.keys[k].local
		if op.Kind == history.Append {
			if r.holds != nil && r.holds[k] >= 0 && r.holds[k] != t {
				return false, waitKey - k
			}
			if ks := &r.keys[k]; r.avoid != nil && at == ks.pos && at < ks.n && r.avoid[uint64(r.writerOf(t, k))<<32|uint64(at)] {
				return false, ks.base + at + 1 // taken by another writer of the same values this time
			}
			if ks := &r.keys[k]; r.win != nil && at == ks.pos && h.Txns[t].Status == history.OK {
				// The first append of t's block on k: inside its window.
				w := r.writerOf(t, k)
				if lo := min(r.win.Lo[w], ks.n); at < lo {
					return false, ks.base + lo
				}
				if at > r.win.Hi[w] {
					return false, waitNever
				}
				if at < ks.n && !r.win.Allowed(w, at) {
					// Wait for the next position the window allows.
					next := at + 1
					for next < ks.n && !r.win.Allowed(w, next) {
						next++
					}
					return false, ks.base + next
				}
			}
			if r.snapshot && at == r.keys[k].pos {
				lo = max(lo, r.lastWrite[k]) // no other writer of k since its snapshot
			}
			if ks := &r.keys[k]; r.perRead && at > ks.pos && at < ks.n && r.pending[ks.base+at] > 0 {
				// The block would cross the end of a read still to run: never readable.
				return false, ks.base + ks.pos + 1
			}
			if ks := &r.keys[k]; at < ks.n {
				if r.traceAt[ks.base+at] != op.Value {
					// Wait until the key reaches the next position holding this value
					// (shifted back by t's own earlier appends), or the end of the trace.
					next := at + 1
					for next < ks.n && r.traceAt[ks.base+next] != op.Value {
						next++
					}
					return false, ks.base + next - (at - ks.pos)
				}
				inside = true
				if optional {
					if c := r.class(k, op.Value); r.classDemand[c] > r.classSupply[c] {
						needed = true
					} else {
						steals = true
					}
				}
			}
			r.keys[k].local = at + 1
			continue
		}
		if !readsCount || !op.Known {
			continue
		}
		if r.perRead {
			ok, s := r.perReadCheck(opStart+int32(i), k, at, op.End-op.Start)
			if !ok {
				return false, s
			}
			stale = stale || s == waitStale
			continue
		}
		if r.snapshot {
			ks := &r.keys[k]
			q := op.End - op.Start - (at - ks.pos)
			switch {
			case q == ks.pos:
				lo = max(lo, r.lastWrite[k])
			case q > ks.pos:
				return false, r.slot(k, q)
			case at > ks.pos || r.startStep[ks.base+q] == 0:
				// Its own block starts right after what it read, or a block crossed
				// its end.
				return false, waitNever
			default:
				lo, hi = max(lo, r.endStep[ks.base+q]), min(hi, r.startStep[ks.base+q])
				stale = true
			}
			continue
		}
		if l := op.End - op.Start; l != at {
			if l < at {
				return false, waitNever // the list is already longer than this read
			}
			return false, r.slot(k, l-(at-r.keys[k].pos))
		}
	}
	switch {
	case steals:
		return false, waitSpare
	case needed && stale && lo >= hi:
		return false, waitNever // no earlier state shows all it read
	case needed && stale && inside:
		return false, waitStale
	case needed:
		return true, 0
	}
	return false, waitNever
}

// try queues t if it can run, or parks it on the slot it waits for.
func (r *replay) try(t int32) {
	if r.state[t] != rPending || r.commit[t] == encode.NotCommitted {
		return
	}
	ok, s := r.check(t)
	switch {
	case ok:
		r.state[t] = rQueued
		r.ready.push(txnPrio{t, r.prio(t)})
	case s == waitStale:
		r.state[t] = rStale
		r.stale = append(r.stale, t)
	case r.waitNext[t] != notParked && (s >= 0 || s <= waitKey):
		// Already waiting on a list: the position or key it waits for there has not
		// come either, and wake retries it when it does.
	case s >= 0:
		r.waitNext[t] = r.waitHead[s]
		r.waitHead[s] = t
	case s <= waitKey:
		k := waitKey - s
		r.waitNext[t] = r.keyWait[k]
		r.keyWait[k] = t
	case s == waitSpare:
		if r.succStart[t+1] > r.succStart[t] {
			// Parked, it would hold back its successors until the replay is stuck.
			r.drop(t)
			return
		}
		r.state[t] = rSpare
		r.spares = append(r.spares, t)
	case s == waitNever:
		if r.commit[t] == encode.Committed {
			r.failed = true
			return
		}
		r.drop(t)
	}
}

// drop gives up an optional transaction; once its own predecessors are resolved it
// stops holding back its successors.
func (r *replay) drop(t int32) {
	r.state[t] = rDead
	if r.preds[t] == 0 {
		r.resolve(t)
	}
}

// resolve releases t's successors (t ran, or was dropped with its predecessors
// resolved, so every order through t is kept).
func (r *replay) resolve(t int32) {
	stack := []int32{t}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, s := range r.succ[r.succStart[u]:r.succStart[u+1]] {
			r.preds[s]--
			if r.preds[s] != 0 {
				continue
			}
			if r.state[s] == rDead {
				stack = append(stack, s)
			} else {
				r.try(s)
			}
		}
	}
}

// prio: the middle of the transaction's interval estimates when it took effect. Within
// windows, earliest deadline first: readers that append nothing first (running a ready
// one never hurts), then writers by how few positions their tightest window leaves.
func (r *replay) prio(t int32) int64 {
	if r.rank != nil && r.win == nil {
		return r.rank[t]
	}
	if r.win != nil {
		slack := int64(1 << 20)
		appends := false
		for _, w := range r.in.TxnWriters(t) {
			appends = true
			if wr := &r.in.Writers[w]; wr.Status == history.OK {
				if hi := r.win.Hi[w]; hi < r.keys[wr.Key].n {
					slack = min(slack, int64(hi-r.keys[wr.Key].pos))
				}
			}
		}
		if !appends {
			slack = -1
		}
		return (slack+1)<<42 + r.midpoint(t)
	}
	return r.midpoint(t)
}

func (r *replay) midpoint(t int32) int64 {
	tx := &r.h.Txns[t]
	inv := int64(tx.Invoke)
	if tx.Complete >= 0 {
		if inv < 0 || r.byCompletion {
			return 2 * int64(tx.Complete)
		}
		return inv + int64(tx.Complete)
	}
	if r.commit[t] == encode.Committed && inv >= 0 {
		// An :info transaction that must have committed (settleCertain).
		if r.byCompletion {
			return 2 * (inv + r.infoDuration)
		}
		return 2*inv + r.infoDuration
	}
	if r.holds != nil {
		// Under snapshot isolation, optional ones latest invoked first: where several
		// could fill a position their value needs, one invoked long before mostly had
		// its chance at earlier positions (committed, it would mostly have filled
		// one), and taking this one leaves them for none (snapshot-zipf with :info,
		// 10K: the earliest took the position of a committed writer its real-time
		// order held back, on 4 of 6 seeds).
		return 3<<40 - 2*inv
	}
	return 2*inv + 1<<40
}

// strands reports whether running t now appends to a key that some other reader still
// needs to see at its current length.
func (r *replay) strands(t int32) bool {
	if r.perRead || r.snapshot {
		return r.strandsPerRead(t)
	}
	return r.strandsIn(t, r.pending, false)
}

// strandsIn reports whether t's appends would move a key past the length that counts
// (per slot) says other transactions still need; t's own reads do not count, and with
// writersOnly only reads by transactions that also append to the key count (as
// pendingRW does).
func (r *replay) strandsIn(t int32, counts []int32, writersOnly bool) bool {
	for _, op := range r.h.TxnOps(int(t)) {
		if op.Kind != history.Append {
			continue
		}
		s := r.slot(op.Key, r.keys[op.Key].pos)
		if s < 0 || counts[s] == 0 {
			continue
		}
		own := int32(0)
		r.readBases(t, func(rs int32, writes bool) {
			if rs == s && (writes || !writersOnly) {
				own++
			}
		})
		if counts[s] > own {
			return true
		}
	}
	return false
}

// earliest removes and returns the transaction of list with the earliest priority.
func (r *replay) earliest(list *[]int32) int32 {
	l := *list
	best := r.earliestIn(l)
	t := l[best]
	*list = append(l[:best], l[best+1:]...)
	return t
}

// earliestIn returns the index of the transaction of list with the earliest priority.
func (r *replay) earliestIn(list []int32) int {
	best := 0
	for i := range list {
		if r.prio(list[i]) < r.prio(list[best]) {
			best = i
		}
	}
	return best
}

func (r *replay) run() ([]int32, bool) {
	for t := int32(0); t < r.n; t++ {
		r.try(t)
	}
	return r.loop()
}

// loop runs transactions until every one ran or the replay is stuck.
func (r *replay) loop() ([]int32, bool) {
	for !r.failed {
		if r.stopped() {
			return nil, false
		}
		if r.checkpoint != nil && r.checkpoint() {
			return nil, false
		}
		var t int32
		switch {
		case r.ready.Len() > 0:
			t = r.ready.pop().t
			r.state[t] = rPending
			if ok, _ := r.check(t); !ok { // a position moved since it was queued
				r.try(t)
				continue
			}
			if r.strands(t) {
				r.deferred = append(r.deferred, t)
				continue
			}
		default:
			// Stuck: a spare may fill what a committed transaction waits for; dropping the
			// optional transactions that hold back successors may release some.
			if t = r.pickSpare(); t >= 0 {
				break
			}
			if r.dropBlockers() {
				continue
			}
			if r.perRead || r.snapshot {
				var queued bool
				if t, queued = r.pickPerRead(); queued {
					continue
				} else if t >= 0 {
					break
				}
			}
			if len(r.deferred) == 0 {
				return r.finish()
			}
			if r.filledBy != nil {
				return nil, false // stuck: the repair looks at this state (see blame)
			}
			// Only appends that strand a reader are left: run the earliest (the replay
			// fails; finish says so).
			t = r.earliest(&r.deferred)
			if ok, _ := r.check(t); !ok {
				r.try(t)
				continue
			}
		}
		r.runTxn(t)
	}
	return nil, false
}

// runTxn runs t: its reads are done, then its appends installed.
func (r *replay) runTxn(t int32) {
	r.consumeReads(t)
	for _, d := range r.deferred {
		r.try(d)
	}
	r.deferred = r.deferred[:0]
	r.install(t)
}

// consumeReads records that t's reads no longer wait for their lengths.
func (r *replay) consumeReads(t int32) {
	if r.pendingPin != nil {
		tx := &r.h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			if r.readPinned[i] {
				r.pendingPin[r.readSlot[i]]--
			}
		}
	}
	r.readBases(t, func(s int32, writes bool) {
		r.pending[s]--
		if writes && r.pendingRW != nil {
			r.pendingRW[s]--
		}
	})
}

// install applies t's appends, wakes the transactions waiting on the positions they
// pass, and releases t's successors.
func (r *replay) install(t int32) {
	r.state[t] = rDone
	r.order = append(r.order, t)
	r.fired = r.fired[:0]
	if r.snapshot {
		r.takeSnapshot(t)
	}
	if r.blockStart != nil {
		for _, w := range r.in.TxnWriters(t) {
			k := r.in.Writers[w].Key
			if r.keys[k].pos <= r.keys[k].n {
				r.blockStart[r.keys[k].base+r.keys[k].pos] = true
			}
		}
	}
	if r.filledBy != nil {
		for _, w := range r.in.TxnWriters(t) {
			if k := r.in.Writers[w].Key; r.keys[k].pos < r.keys[k].n {
				r.filledBy[r.keys[k].base+r.keys[k].pos] = w
			}
		}
	}
	for _, op := range r.h.TxnOps(int(t)) {
		if op.Kind == history.Append {
			if k := op.Key; r.optionalKey != nil && r.optionalKey[k] {
				if p := r.keys[k].pos; p < r.keys[k].n {
					r.classDemand[r.class(k, r.traceAt[r.keys[k].base+p])]--
				}
				if c := r.class(k, op.Value); c >= 0 && r.commit[t] == encode.Committed && r.suppliesTrace(t, k) {
					r.classSupply[c]--
				}
			}
			r.keys[op.Key].pos++
			if s := r.slot(op.Key, r.keys[op.Key].pos); s >= 0 {
				r.fired = append(r.fired, s)
			}
		}
	}
	if r.snapshot {
		r.stepInstalled(t)
	}
	for _, s := range r.fired {
		w := r.waitHead[s]
		r.waitHead[s] = -1
		r.wake(w)
	}
	r.resolve(t)
	if r.rtGateStart != nil {
		r.passRealtime()
	}
}

// wake retries a list of waiting transactions.
func (r *replay) wake(w int32) {
	for w >= 0 {
		next := r.waitNext[w]
		r.waitNext[w] = notParked
		r.try(w)
		w = next
	}
}

// pickSpare returns the spare to run when the replay is stuck, or -1: one whose
// appends take a key to a position a committed transaction waits for (any other would only
// steal a position), preferably one also needed elsewhere (a pure thief more likely
// never committed), then the earliest. Spares that would strand a reader are passed
// over; those that no longer fill a position are dropped.
func (r *replay) pickSpare() int32 {
	best, bestNeeded := int32(-1), false
	kept := r.spares[:0]
	for _, t := range r.spares {
		r.state[t] = rPending
		ok, s := r.check(t)
		if !ok && s != waitSpare {
			r.try(t) // parks it on a slot, or drops it
			continue
		}
		r.state[t] = rSpare
		kept = append(kept, t)
		if r.spareStrands(t) {
			continue
		}
		waited, needed := false, false
		for _, op := range r.h.TxnOps(int(t)) {
			if op.Kind != history.Append {
				continue
			}
			k, at := op.Key, r.keys[op.Key].pos
			if sl := r.slot(k, at+1); sl >= 0 && !waited {
				for w := r.waitHead[sl]; w >= 0 && !waited; w = r.waitNext[w] {
					waited = r.commit[w] == encode.Committed
				}
			}
			if c := r.class(k, op.Value); c >= 0 && at < r.keys[k].n && r.classDemand[c] > r.classSupply[c] {
				needed = true
			}
		}
		if waited && (best < 0 || needed && !bestNeeded || needed == bestNeeded && r.prio(t) < r.prio(best)) {
			best, bestNeeded = t, needed
		}
	}
	r.spares = kept
	if best >= 0 {
		r.spares = slices.DeleteFunc(r.spares, func(t int32) bool { return t == best })
		r.state[best] = rPending
	}
	return best
}

// spareStrands reports whether running spare t now would strand a reader. Under
// snapshot isolation only its start runs now, which strands only a reader pinned to
// the position it takes (startStrands); its commit waits while it would strand one,
// and the reader may start first.
func (r *replay) spareStrands(t int32) bool {
	if r.holds != nil {
		return r.strandsIn(t, r.pendingRW, true)
	}
	return r.strands(t)
}

// dropBlockers drops the optional transactions that still hold back successors, when
// nothing else can run; it reports whether it dropped any.
func (r *replay) dropBlockers() bool {
	dropped := false
	for t := int32(0); t < r.n; t++ {
		if r.state[t] == rPending && r.commit[t] == encode.MayCommit && r.succStart[t+1] > r.succStart[t] {
			r.drop(t)
			dropped = true
		}
	}
	return dropped
}

// finish checks that every transaction that must run ran and every trace is installed.
func (r *replay) finish() ([]int32, bool) {
	for t := int32(0); t < r.n; t++ {
		if r.commit[t] == encode.Committed && r.state[t] != rDone {
			return nil, false
		}
	}
	for k := range r.in.Keys {
		if r.keys[k].pos < int32(len(r.in.Keys[k].Trace)) {
			return nil, false
		}
	}
	return r.order, true
}

type txnPrio struct {
	t    int32
	prio int64
}

// txnHeap is a binary min-heap on prio (typed: container/heap would box every push).
type txnHeap []txnPrio

func (q txnHeap) Len() int { return len(q) }

func (q *txnHeap) push(x txnPrio) {
	*q = append(*q, x)
	h := *q
	i := len(h) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if h[parent].prio <= h[i].prio {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func (q *txnHeap) pop() txnPrio {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h[r].prio < h[l].prio {
			m = r
		}
		if h[i].prio <= h[m].prio {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// writerOf returns t's writer id on key k (t appends to k).
func (r *replay) writerOf(t, k int32) int32 { return r.in.KeyWriter(t, k) }
