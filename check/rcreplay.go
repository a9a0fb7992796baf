package check

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"doppel/encode"
	"doppel/history"
)

// A replay for the per-read models (read committed): their graph has ww and wr edges
// only, so a commit order in which every key's blocks are installed in trace order and
// every read sees a prefix already committed (ending at a block boundary; right up to
// the reader's own block when the read shows its own appends) is a topological order
// of some attribution's ww and wr edges: a proof. Reads need not see the latest state,
// which is what makes histories that are neither serializable nor snapshot isolated
// (lost updates, non-repeatable reads) replayable here. Like every replay it counts only
// after verifyPerRead, an independent re-execution, accepts it.
//
// It is the serial replay (schedule.go) with reads relaxed, so that it inherits its
// waiting on slots, its deferral of appends that would strand a reader and its
// repairs (repair.go): a transaction runs as in a serial order while it can; a read
// that sees fewer values than its key has (and no own appends) is allowed where a block
// started. A transaction ready only so that appends inside a trace is kept aside until
// the replay is stuck (pickPerRead): its block could take a position from the writer
// whose read pins it there (a lost update's loser is such a transaction: its block
// belongs past the trace). Repaired (runRepaired), it is gated: stuck where the serial
// replay would be, it first undoes choices as the serial repair does, and only when
// none gets it further goes on by reading older lists (repairLoop): going on at once
// would run past the point where the wrong choice is visible. When that fails, it is
// repaired gated only where a pinned read would be stranded (perReadSchedulePinGated),
// as a database's read-committed run needs.

// newPerReadReplay is newReplay for in, a per-read inference: the reads it places are
// in.Reads (a read that misses its transaction's own appends is ignored). A read before
// the transaction's own block on the key, where the trace does not hold the block's
// first value, can never be read exactly (the block cannot start there): it is not
// pending (nothing is deferred to keep it exact; it reads an older list), its slot
// marked readOld. pendingRW counts the pending reads of transactions whose block can
// start right there: at most one of them reads exactly.
func newPerReadReplay(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge) *replay {
	r := newReplayBase(h, in, commit, orderEdges)
	r.perRead = true
	r.blockStart = make([]bool, len(r.traceAt))
	for k := range r.keys {
		r.blockStart[r.keys[k].base] = true
	}
	r.pendingRW = make([]int32, len(r.pending))
	r.readWrites = make([]bool, len(h.Ops))
	for i := range in.Reads {
		rd := &in.Reads[i]
		if r.commit[rd.Txn] != encode.Committed || rd.Version {
			continue // a version read waits for nothing: the verification checks it
		}
		s := r.slot(rd.Key, rd.Len-rd.Own)
		if s < 0 {
			continue
		}
		if rd.Own == 0 && rd.Writes {
			ks := &r.keys[rd.Key]
			if q := rd.Len; q < ks.n && r.traceAt[s] != in.Vals(r.writerOf(rd.Txn, rd.Key))[0] {
				r.readSlot[rd.Op] = readOld
				continue
			}
			r.readWrites[rd.Op] = true
			r.pendingRW[s]++
		}
		r.readSlot[rd.Op] = s
		r.pending[s]++
		if rd.Own > 0 {
			if r.pendingPin == nil {
				r.pendingPin = make([]int32, len(r.pending))
				r.readPinned = make([]bool, len(h.Ops))
			}
			r.readPinned[rd.Op] = true
			r.pendingPin[s]++
		}
	}
	r.countValues()
	return r
}

// strandsPin reports whether t's appends would move a key past the length a pending
// read that shows its own transaction's appends needs: such a read pins its
// transaction's block there and can never be read once the key is past it.
func (r *replay) strandsPin(t int32) bool {
	if r.pendingPin == nil {
		return false
	}
	for _, w := range r.in.TxnWriters(t) {
		k := r.in.Writers[w].Key
		s := r.slot(k, r.keys[k].pos)
		if s < 0 || r.pendingPin[s] == 0 {
			continue
		}
		own := int32(0)
		tx := &r.h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			if r.readPinned[i] && r.readSlot[i] == s {
				own++
			}
		}
		if r.pendingPin[s] > own {
			return true
		}
	}
	return false
}

// readOld marks, in a per-read replay's readSlot, a read that counts but is never
// pending (see newPerReadReplay).
const readOld = -2

// strandsPerRead is strands for the per-read replay: t's appends would move a key past
// the length a pending read needs, not counting t's own reads nor, when t's block
// starts where it read, the reads of the others whose block could start there too
// (one of them is read older whoever runs).
func (r *replay) strandsPerRead(t int32) bool {
	for _, w := range r.in.TxnWriters(t) {
		k := r.in.Writers[w].Key
		s := r.slot(k, r.keys[k].pos)
		if s < 0 || r.pending[s] == 0 {
			continue
		}
		own, ownRW := int32(0), int32(0)
		r.readBases(t, func(rs int32, writes bool) {
			if rs == s {
				own++
				if writes {
					ownRW++
				}
			}
		})
		others := r.pending[s] - own
		if ownRW > 0 {
			others -= r.pendingRW[s] - ownRW
		}
		if others > 0 {
			return true
		}
	}
	return false
}

// perReadCheck is check's verdict on the read op (of key k, l values, at the
// transaction's view position at): true when it can be read now; waitStale with true
// when only as an older list.
func (r *replay) perReadCheck(op, k, at, l int32) (bool, int32) {
	if r.readSlot[op] == -1 {
		return true, 0 // not one of the per-read inference's reads
	}
	ks := &r.keys[k]
	own := at - ks.pos
	q := l - own
	switch {
	case q == ks.pos:
		return true, 0
	case q > ks.pos:
		return false, r.slot(k, q)
	case own > 0 || !r.blockStart[ks.base+q]:
		// Its own block starts right after what it read, or a block crossed its end.
		return false, waitNever
	}
	return true, waitStale
}

// pickPerRead is the per-read replay's move when it is stuck: it retries the
// transactions kept aside (some are now ready; true means something was queued) and
// returns the one to run, or -1: a kept-aside transaction whose appends take a key to a
// position a committed transaction waits for, else the earliest deferred one (its
// appends strand readers, which then read older lists), else the earliest kept aside;
// gated (relaxGate), -1 unless mayRelax allows it.
func (r *replay) pickPerRead() (int32, bool) {
	queued := r.ready.Len()
	best := int32(-1)
	kept := r.stale[:0]
	for _, t := range r.stale {
		r.state[t] = rPending
		ok, s := r.check(t)
		if ok || s != waitStale {
			r.try(t)
			continue
		}
		r.state[t] = rStale
		kept = append(kept, t)
		if r.strandsPerRead(t) || best >= 0 && r.prio(t) >= r.prio(best) {
			continue
		}
		for _, op := range r.h.TxnOps(int(t)) {
			if op.Kind != history.Append {
				continue
			}
			if sl := r.slot(op.Key, r.keys[op.Key].pos+1); sl >= 0 && r.waitHead[sl] >= 0 {
				best = t
				break
			}
		}
	}
	r.stale = kept
	if r.ready.Len() > queued {
		return -1, true
	}
	deferred := best < 0 && len(r.deferred) > 0
	if deferred {
		best = r.deferred[r.earliestIn(r.deferred)]
	} else if best < 0 && len(r.stale) > 0 {
		best = r.stale[r.earliestIn(r.stale)]
	}
	if best >= 0 && !r.mayRelax(best) && r.pinPass {
		// Gated on pins, passing them: another that strands no pinned read, the earliest.
		best, deferred = -1, false
		for i, list := range [][]int32{r.deferred, r.stale} {
			for _, t := range list {
				if !r.strandsPin(t) && (best < 0 || r.prio(t) < r.prio(best)) {
					best, deferred = t, i == 0
				}
			}
		}
	}
	if best < 0 || !r.mayRelax(best) {
		return -1, false
	}
	if deferred {
		r.deferred = slices.DeleteFunc(r.deferred, func(t int32) bool { return t == best })
		if ok, _ := r.check(best); !ok {
			r.try(best)
			return -1, true
		}
	} else {
		r.stale = slices.DeleteFunc(r.stale, func(t int32) bool { return t == best })
		r.state[best] = rPending
	}
	if r.relaxGate {
		r.relaxes = max(0, r.relaxes-1)
		r.relaxed = append(r.relaxed, best)
	}
	return best, false
}

// mayRelax reports whether the replay may go on by running t, which reads older lists
// or strands readers: always unless gated (see relaxGate).
func (r *replay) mayRelax(t int32) bool {
	return !r.relaxGate || r.relaxes > 0 || slices.Contains(r.relaxAgain, t) || r.pinGate && !r.strandsPin(t)
}

// perReadSchedule replays h read by read (ready transactions by interval midpoint, or
// by completion), with the stuck replay repaired unless noRepair. It returns the commit
// order and how many repairs it took.
func perReadSchedule(h *history.History, in *encode.Inference, orderEdges []encode.Edge, byCompletion, repair bool, stop func() bool) ([]int32, bool, int) {
	commit := commitsOf(h)
	r := newPerReadReplay(h, in, commit, orderEdges)
	r.byCompletion, r.stop = byCompletion, stop
	return r.runOrder(repair, stop)
}

// perReadSchedulePinGated is perReadSchedule repaired with relaxGate narrowed: stuck,
// it goes on by running a kept-aside or deferred transaction at once unless that
// strands a read showing its own transaction's appends (strandsPin: that read pins its
// block and can never be read once the key is past it). There, with pass, it runs the
// earliest kept-aside or deferred transaction that strands no such read instead;
// without, or where none is left, the repair starts. The full gate suits histories
// where older reads are few (an anomaly's transactions among serial ones); on a
// database's read-committed run (each statement its own snapshot) most transactions
// read older lists, and the gated repair stopped at nearly every one and spent its work
// within the first few hundred (a PostgreSQL kill-conn run: 128 of 4,250 transactions).
// Neither way of meeting a pin is the better one (on seven PostgreSQL kill-conn runs,
// each replayed four, five together), and each is cheap (a tenth of a second at 4K).
func perReadSchedulePinGated(h *history.History, in *encode.Inference, orderEdges []encode.Edge, pass bool, stop func() bool) ([]int32, bool, int) {
	r := newPerReadReplay(h, in, commitsOf(h), orderEdges)
	r.stop, r.pinGate, r.pinPass = stop, true, pass
	return r.runOrder(true, stop)
}

// perReadReplays runs the read-by-read replays guided by guide until one completes:
// by midpoint, by completion, then (unless !repair) repaired gated, and repaired
// gated on pins only (meeting them, then passing them). out says when the limits are reached. It returns the order (unverified)
// and the repairs taken.
func perReadReplays(h *history.History, in *encode.Inference, guide []encode.Edge, repair bool, stop, out func() bool) ([]int32, bool, int) {
	return perReadReplaysAfter(h, in, guide, repair, false, stop, out)
}

// perReadReplaysAfter is perReadReplays, without the first repaired replay when
// repairedFailed (provePerReadGuidedRepair ran it on the same inputs and it got stuck).
func perReadReplaysAfter(h *history.History, in *encode.Inference, guide []encode.Edge, repair, repairedFailed bool, stop, out func() bool) ([]int32, bool, int) {
	order, ok, _ := perReadSchedule(h, in, guide, false, false, stop)
	if !ok && !out() {
		order, ok, _ = perReadSchedule(h, in, guide, true, false, stop)
	}
	if ok || out() || !repair {
		return order, ok, 0
	}
	n := 0
	if !repairedFailed {
		order, ok, n = perReadSchedule(h, in, guide, false, true, stop)
	}
	for _, pass := range []bool{false, true} {
		if ok || out() {
			break
		}
		var m int
		order, ok, m = perReadSchedulePinGated(h, in, guide, pass, stop)
		n += m
	}
	return order, ok, n
}

// verifyPerRead re-executes order against real lists: every :ok transaction once and no
// :fail one; each transaction's appends extend its keys' lists at its commit; each
// known read that ends with the transaction's own earlier appends shows, before those,
// a prefix of the list as committed so far that ends where some block ended — the whole
// list when the read shows own appends; each known read that does not (a version read)
// shows a prefix of the final list that ends where some block ended or inside its own
// transaction's block. With process (and realtime), the order also keeps process (and
// real-time) order.
func verifyPerRead(h *history.History, order []int32, process, realtime bool) error {
	at, err := verifyPerReadLists(h, encode.InferPerRead(h), order)
	if err != nil {
		return err
	}
	return verifyOrders(h, at, process, realtime)
}

// errVersionRead marks a verification's rejection on a version read (a read that misses
// its transaction's own appends): the read-by-read replay leaves those reads to the
// verification (newPerReadReplay), so such a rejection is expected there, not a bug.
var errVersionRead = errors.New("version read")

// verifyPerReadLists is verifyPerRead without the orders; it returns the positions of
// orderPositions. Like verifySerial it uses each key's trace only as a reference list
// (appends landing inside it must match it, reads are compared with it value by value),
// and two goroutines re-execute half of the keys each.
func verifyPerReadLists(h *history.History, in *encode.Inference, order []int32) ([]int32, error) {
	at, err := orderPositions(h, order)
	if err != nil {
		return nil, err
	}
	return at, inHalves(func(part, parts int32, _ *atomic.Bool) error { return replayPerReadReads(h, in, order, part, parts) }, nil)
}

// replayPerReadReads re-executes order on the keys k with k % parts == part, each
// transaction's appends installed at its commit: appends must match the trace where
// they land inside it; each :ok read that ends with the transaction's own earlier
// appends must show before them a prefix of the list committed so far that ends where
// a block ended (the whole list when there are own appends).
func replayPerReadReads(h *history.History, in *encode.Inference, order []int32, part, parts int32) error {
	pos := make([]int32, len(in.Keys))
	ends := make([][]bool, len(in.Keys)) // ends[k][p]: a block ends at p (p <= trace length)
	var ownK, ownV, o []int32            // t's appends so far (key, value); o: those to one key
	// Version reads, checked once every list is complete: the read op, and its
	// transaction's block on the key (start, end), known at the transaction's commit.
	type versionRead struct{ txn, op, start, end int32 }
	var versions []versionRead
	for _, t := range order {
		ops := h.TxnOps(int(t))
		ownK, ownV = ownK[:0], ownV[:0]
		first := len(versions)
		for i := range ops {
			op := &ops[i]
			if op.Key%parts != part {
				continue
			}
			if op.Kind == history.Append {
				ownK, ownV = append(ownK, op.Key), append(ownV, op.Value)
				continue
			}
			if h.Txns[t].Status != history.OK || !op.Known {
				continue
			}
			o = o[:0]
			for j, k := range ownK {
				if k == op.Key {
					o = append(o, ownV[j])
				}
			}
			r := h.ReadList(op)
			q := len(r) - len(o)
			if q < 0 || !slices.Equal(r[q:], o) {
				// Misses its own write: a version read, checked at the end.
				versions = append(versions, versionRead{txn: t, op: h.Txns[t].OpStart + int32(i), start: -1, end: -1})
				continue
			}
			L, p := in.Keys[op.Key].Trace, int(pos[op.Key])
			switch {
			case len(o) > 0 && q != p:
				return fmt.Errorf("transaction %d shows its own appends to a key after %d values, where %d are committed", t, q, p)
			case q > p || q > len(L) || !slices.Equal(r[:q], L[:q]):
				return fmt.Errorf("transaction %d reads a list that is not a committed prefix", t)
			case q > 0 && (ends[op.Key] == nil || !ends[op.Key][q]):
				return fmt.Errorf("transaction %d reads a list that ends inside a block", t)
			}
		}
		// Commit: the appends in program order (each key's block is contiguous), then
		// each block's end.
		for i := first; i < len(versions); i++ {
			v := &versions[i]
			k := h.Ops[v.op].Key
			v.start, v.end = pos[k], pos[k]
			for _, x := range ownK {
				if x == k {
					v.end++
				}
			}
		}
		for j, k := range ownK {
			L := in.Keys[k].Trace
			if p := pos[k]; p < int32(len(L)) && L[p] != ownV[j] {
				return fmt.Errorf("transaction %d appends at position %d a value other than the trace's", t, p)
			}
			pos[k]++
		}
		for _, k := range ownK {
			if L := in.Keys[k].Trace; pos[k] <= int32(len(L)) {
				if ends[k] == nil {
					ends[k] = make([]bool, len(L)+1)
				}
				ends[k][pos[k]] = true
			}
		}
	}
	for _, v := range versions {
		op := &h.Ops[v.op]
		r, L, q := h.ReadList(op), in.Keys[op.Key].Trace, int32(op.End-op.Start)
		switch {
		case q > pos[op.Key] || q > int32(len(L)) || !slices.Equal(r, L[:q]):
			return fmt.Errorf("%w: a read of transaction %d that misses its own appends is not a prefix of the final list", errVersionRead, v.txn)
		case q > 0 && (ends[op.Key] == nil || !ends[op.Key][q]) && !(v.start < q && q < v.end):
			return fmt.Errorf("%w: a read of transaction %d that misses its own appends ends inside another transaction's block", errVersionRead, v.txn)
		}
	}
	return nil
}

// provePerRead tries the per-read replay and reports the models of names it proves.
// Guided by process and real-time order first, whether or not a model asked needs
// them (a transaction considered only after those that completed before it was
// invoked mostly runs on its first try), then unguided; each as perReadReplays.
func (c *checker) provePerRead(in *encode.Inference, names []string) {
	c.provePerReadPass(in, names, !c.opts.Solver.NoRepair)
}

// provePerReadPass is provePerRead with the repairs only when repair: without them it
// is a first pass (a few plain replays, linear in the history) that leaves
// perReadTried unset, so that the whole replay still runs later.
func (c *checker) provePerReadPass(in *encode.Inference, names []string, repair bool) {
	whole := repair || c.opts.Solver.NoRepair
	if whole {
		c.perReadTried = true
	}
	h := c.h
	var guides [][]encode.Edge
	if !c.budget.out() {
		guides = append(guides, orderGuide(in, commitsOf(h)))
	}
	guides = append(guides, nil)
	for _, guide := range guides {
		c.progress("replaying read by read")
		// The guided replay's first repaired run may have got stuck already.
		repairedFailed := guide != nil && c.guidedRepairFailed == in
		order, ok, n := perReadReplaysAfter(h, in, guide, repair, repairedFailed, c.budget.stop, c.budget.out)
		c.res.Stats.Repairs += n
		if ok && c.acceptPerRead(in, order, names) {
			return
		}
	}
	if whole {
		c.proveMergedChains(in, names)
	}
}

// provePerReadGuidedRepair runs the guided read-by-read replay with its repairs, alone
// (the first of provePerReadPass's repaired replays), and proves the models of names
// its verified order proves. It is cheap (15-40 ms at 2K-5K transactions) where the
// witnesses that come before the whole pass may not be: on a serializable store's
// history with a G-single injected (2K transactions of 10 micro-ops, 1,000 keys, 5%
// :info) the strong witness searched 11 s for an order under real time, where this
// replay needed 3 repairs.
func (c *checker) provePerReadGuidedRepair(in *encode.Inference, names []string) {
	if c.opts.Solver.NoRepair || c.budget.out() {
		return
	}
	c.progress("replaying read by read with repairs")
	order, ok, n := perReadSchedule(c.h, in, orderGuide(in, commitsOf(c.h)), false, true, c.budget.stop)
	c.res.Stats.Repairs += n
	if !ok && !c.budget.out() {
		c.guidedRepairFailed = in // the whole repaired pass does not run it again
	}
	if ok {
		c.acceptPerRead(in, order, names)
	}
}

// acceptPerRead verifies a read-by-read replay's order and proves the models of names
// whose orders it keeps; it reports whether every one is proved.
func (c *checker) acceptPerRead(in *encode.Inference, order []int32, names []string) bool {
	c.progress("verifying a read-by-read replay")
	at, err := verifyPerReadLists(c.h, in, order)
	switch {
	case errors.Is(err, errVersionRead):
		c.res.Stats.VersionReadRejected++ // left to the verification by design
		return false
	case err != nil:
		c.res.Stats.ReplayRejected++ // the replay's bookkeeping disagrees: a bug
		return false
	}
	return c.proveOrdered(at, names)
}

// proveOrdered proves each model of names not proven yet whose process and real-time
// orders hold for a verified order (at: verifyPerReadLists's positions), and reports
// whether every one is proved.
func (c *checker) proveOrdered(at []int32, names []string) bool {
	all := true
	for _, m := range names {
		spec := models[m]
		if c.proven[m] {
			continue
		}
		if verifyOrders(c.h, at, spec.process, spec.realtime) != nil {
			all = false
			continue
		}
		c.proven[m] = true
		c.res.Stats.Witnessed++
		c.res.Stats.Replayed++
	}
	return all
}
