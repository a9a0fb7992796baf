package check

import (
	"slices"
	"unsafe"

	"doppel/encode"
	"doppel/history"
)

// A greedy replay gets stuck when it gave a trace position to the wrong one of several
// writers of the same values: the right one, blocked at that moment by its other keys,
// later finds its values only past a position that a transaction it must precede
// fills, and the two wait on each other. blame names the choices that may have been
// wrong (a transaction stuck only on one key, whose block fits at an earlier position
// another writer took), and the replay resumes from a copy taken before that choice
// with that (writer, position) avoided, keeping the choice that gets it furthest. The
// repaired replay is still only a candidate: it counts after its verification, like
// every replay.

// maxRepairs bounds the repairs of one replay.
const maxRepairs = 200

// maxStalled is how many repairs in a row may fail to get the replay further.
const maxStalled = 2

// repairWork bounds the events the repairs of one replay run again, in replays of the
// whole history.
var repairWork = 2

// progressCredit is the events the repairs may run again for each event by which they
// got the replay further: repairs that keep getting further are worth their cost (on
// commit-anywhere windows at 10K, a valid history's repairs need 2.1-2.3 replays'
// worth), while those that stall end early either way.
const progressCredit = 4

// perReadRepairWork is repairWork for the read-by-read replay (see runRepaired).
var perReadRepairWork = 4

// repairWidth is how many undone choices a repair tries.
const repairWidth = 8

// repairRun is a replay the repair loop can copy and resume: serial or snapshot
// isolation.
type repairRun interface {
	base() *replay
	copyRun() repairRun
	resume() bool // continue until done (true) or stuck
	steps() int   // events so far
	firstStep(t int32) int
}

// snap is a copy of a replay taken before its step-th event; extra: taken by catchUp
// off the every-snapEvery grid.
type snap struct {
	step  int
	run   repairRun
	extra bool
}

// replaySnaps holds a replay's copies, every snapEvery events.
type replaySnaps struct {
	every, next int
	list        []snap
}

// checkpointer returns the hook that copies run every snapEvery events.
func checkpointer(run repairRun, sn *replaySnaps) func() bool {
	return func() bool {
		if st := run.steps(); st >= sn.next {
			sn.list = append(sn.list, snap{st, run.copyRun(), false})
			sn.next = st + sn.every
		}
		return false
	}
}

// catchUpMin is the distance from the last copy to the earliest undone choice above
// which the repair first replays up to that choice once (catchUp).
const catchUpMin = 32

// catchUp adds to sn a copy of the replay taken at step m, replayed from the last copy
// before it, and returns the events that cost. Every undone choice then resumes from
// there instead of replaying the same events again: the copies are n/8 events apart,
// and on a history whose replay gets stuck every few hundred events (long lists of
// few values) each of the 8 choices replayed most of that distance, so the repair's
// work ran out after a few repairs.
func catchUp(sn *replaySnaps, m int) int {
	from := -1
	for i, s := range sn.list {
		if s.step <= m {
			from = i
		}
	}
	if from < 0 || m-sn.list[from].step < catchUpMin {
		return 0
	}
	run := sn.list[from].run.copyRun()
	run.base().checkpoint = func() bool { return run.steps() >= m }
	if run.resume() || run.steps() != m {
		return run.steps() - sn.list[from].step // did not halt at m (done, or stuck before)
	}
	run.base().checkpoint = nil
	cost := m - sn.list[from].step
	// A fresh list (others may share this one's array), keeping only this extra copy:
	// one per repair would hold up to maxRepairs copies of the replay (at 1M
	// transactions, tens of MB each).
	list := make([]snap, 0, len(sn.list)+1)
	for i, s := range sn.list {
		if !s.extra {
			list = append(list, s)
		}
		if i == from {
			list = append(list, snap{m, run, true})
		}
	}
	sn.list = list
	return cost
}

// repairLoop resumes copies of first, each with one more (writer, position) avoided
// that blame names, until one completes, blame finds nothing to undo, the undone
// choices stop getting the replay further, maxRepairs is reached or stop says to give
// up; it returns the completed run and how many repairs it took. A gated read-by-read
// run (relaxGate) stops where a serial one would be stuck; when no undone choice gets
// it further, it goes on from there by reading older lists (one move: relaxes), which
// is new ground, not work done again.
func repairLoop(first repairRun, sn *replaySnaps, maxWork int, stop func() bool) (repairRun, int, bool) {
	avoid := map[uint64]bool{}
	first.base().avoid = avoid
	r, runSnaps := first, sn
	if r.resume() {
		return r, 0, true
	}
	// Work: events replayed again by the resumed copies, bounded by a few replays'
	// worth (a repair that cannot succeed must not cost much more than the replay)
	// plus progressCredit for each event gained.
	furthest, stalled, work := r.steps(), 0, 0
	stuckAt, baseWork := furthest, maxWork
	for repairs := 0; repairs < maxRepairs; repairs++ {
		if stop != nil && stop() {
			return nil, repairs, false
		}
		if onRepairStep != nil {
			onRepairStep(r)
		}
		if r.steps() > furthest {
			furthest, stalled = r.steps(), 0
			maxWork = baseWork + progressCredit*(furthest-stuckAt)
		} else if stalled++; stalled > maxStalled {
			return nil, repairs, false // the undone choices lead nowhere: not this kind of mistake
		}
		cands := r.base().blame()
		// Look ahead: take the first undone choice whose replay gets further, else
		// the one that gets furthest.
		var best repairRun
		var bestSnaps *replaySnaps
		var bestKeys []uint64
		singles := make([][]uint64, 0, repairWidth)
		for _, c := range cands[:min(len(cands), repairWidth)] {
			singles = append(singles, []uint64{c})
		}
		// A transaction behind on several keys names choices to undo together; tried
		// first, since each of them alone leaves it stuck.
		choices := append(r.base().behindGroups(), singles...)
		if len(choices) > 1 {
			m := r.steps()
			for _, cs := range choices {
				for _, c := range cs {
					m = min(m, r.firstStep(r.base().in.Writers[int32(c>>32)].Txn))
				}
			}
			work += catchUp(runSnaps, m)
		}
		// lookAhead tries the undone choices (each one or more (writer, position)
		// pairs avoided together); carry lets each copy go on again by reading older
		// lists where the stuck run did since (read by read).
		lookAhead := func(choices [][]uint64, carry bool) (repairRun, bool) {
			for _, cs := range choices {
				at := r.steps()
				for _, c := range cs {
					at = min(at, r.firstStep(r.base().in.Writers[int32(c>>32)].Txn))
				}
				from := -1
				for i, s := range runSnaps.list {
					if s.step <= at {
						from = i
					}
				}
				if from < 0 {
					return nil, false
				}
				for _, c := range cs {
					avoid[c] = true
				}
				try := runSnaps.list[from].run.copyRun()
				if carry {
					tb := try.base()
					// The copy is r's ancestor: r's moves since are those after its own.
					rel := r.base().relaxed
					tb.relaxAgain = slices.Clone(rel[min(len(tb.relaxed), len(rel)):])
				}
				trySnaps := &replaySnaps{every: runSnaps.every, next: runSnaps.list[from].step + runSnaps.every,
					list: slices.Clip(runSnaps.list[:from+1])}
				try.base().checkpoint = checkpointer(try, trySnaps)
				ok := try.resume()
				work += try.steps() - runSnaps.list[from].step
				for _, c := range cs {
					delete(avoid, c)
				}
				if ok {
					for _, c := range cs {
						avoid[c] = true
					}
					return try, true
				}
				if best == nil || try.steps() > best.steps() {
					best, bestSnaps, bestKeys = try, trySnaps, cs
				}
				if best.steps() > r.steps() || work > maxWork {
					break
				}
			}
			return nil, false
		}
		done, ok := lookAhead(choices, false)
		if ok {
			return done, repairs + 1, true
		}
		if (best == nil || best.steps() <= r.steps()) && work <= maxWork {
			// No single undone choice gets further: two that must be undone together
			// (two transactions waiting on each other, each for a key the other must
			// move first, where the trace's next position for each was taken by
			// another writer of the same values).
			keep, keepSnaps, keepKeys := best, bestSnaps, bestKeys
			best = nil
			groups := slices.DeleteFunc(r.base().mutualWaits(), func(g []uint64) bool {
				return len(g) == 1 && slices.ContainsFunc(singles, func(c []uint64) bool { return c[0] == g[0] })
			})
			done, ok := lookAhead(groups, false)
			if ok {
				return done, repairs + 1, true
			}
			if best == nil || best.steps() <= r.steps() {
				best, bestSnaps, bestKeys = keep, keepSnaps, keepKeys
			}
		}
		rb := r.base()
		if rb.relaxGate && len(rb.relaxed) > 0 && (best == nil || best.steps() <= r.steps()) && work <= maxWork {
			// None gets further as a serial replay would: again, each copy going on
			// by reading older lists where this run did (a lost update's loser, one
			// side of a write skew); kept only if it gets further.
			keep, keepSnaps, keepKeys := best, bestSnaps, bestKeys
			best = nil
			done, ok := lookAhead(singles, true)
			if ok {
				return done, repairs + 1, true
			}
			if best == nil || best.steps() <= r.steps() {
				best, bestSnaps, bestKeys = keep, keepSnaps, keepKeys
			}
		}
		if work > maxWork {
			return nil, repairs, false
		}
		if rb.relaxGate && (best == nil || best.steps() <= r.steps()) {
			// No undone choice gets further: go on by reading older lists.
			try := r.copyRun()
			try.base().relaxes = 1
			trySnaps := &replaySnaps{every: runSnaps.every, next: runSnaps.next, list: slices.Clip(runSnaps.list)}
			try.base().checkpoint = checkpointer(try, trySnaps)
			ok := try.resume()
			if ok {
				return try, repairs + 1, true
			}
			if try.steps() > r.steps() {
				r, runSnaps = try, trySnaps
				continue
			}
		}
		if best == nil {
			return nil, repairs, false
		}
		for _, c := range bestKeys {
			avoid[c] = true
		}
		r, runSnaps = best, bestSnaps
	}
	return nil, maxRepairs, false
}

// serialRun is a serial replay for repairLoop.
type serialRun struct {
	r     *replay
	order []int32
}

func (s *serialRun) base() *replay { return s.r }
func (s *serialRun) steps() int    { return len(s.r.order) }
func (s *serialRun) resume() bool {
	var ok bool
	s.order, ok = s.r.loop()
	return ok
}
func (s *serialRun) firstStep(t int32) int {
	if i := slices.Index(s.r.order, t); i >= 0 {
		return i
	}
	return len(s.r.order)
}
func (s *serialRun) copyRun() repairRun { return &serialRun{r: s.r.copyReplay()} }

// siRun is a snapshot isolation replay for repairLoop.
type siRun struct {
	s      *siReplay
	events []siEvent
}

func (s *siRun) base() *replay { return s.s.replay }
func (s *siRun) steps() int    { return len(s.s.events) }
func (s *siRun) resume() bool {
	var ok bool
	s.events, ok = s.s.loop()
	return ok
}
func (s *siRun) firstStep(t int32) int {
	for i, e := range s.s.events {
		if e.Txn == t {
			return i
		}
	}
	return len(s.s.events)
}
func (s *siRun) copyRun() repairRun {
	c := *s.s
	c.replay = s.s.replay.copyReplay()
	c.holder = slices.Clone(s.s.holder)
	c.replay.holds = c.holder
	c.started = slices.Clone(s.s.started)
	c.waiting = slices.Clone(s.s.waiting)
	c.events = slices.Clone(s.s.events)
	return &siRun{s: &c}
}

// copyReplay copies everything a replay changes as it runs (the rest is shared).
func (r *replay) copyReplay() *replay {
	c := *r
	c.state = slices.Clone(r.state)
	c.order = slices.Clone(r.order)
	c.preds = slices.Clone(r.preds)
	c.keys = slices.Clone(r.keys)
	c.waitHead = slices.Clone(r.waitHead)
	c.waitNext = slices.Clone(r.waitNext)
	c.pending = slices.Clone(r.pending)
	c.pendingRW = slices.Clone(r.pendingRW)
	c.pendingPin = slices.Clone(r.pendingPin)
	c.keyWait = slices.Clone(r.keyWait)
	c.classDemand = slices.Clone(r.classDemand)
	c.classSupply = slices.Clone(r.classSupply)
	c.ready = slices.Clone(r.ready)
	c.deferred = slices.Clone(r.deferred)
	c.spares = slices.Clone(r.spares)
	c.fired = nil
	c.filledBy = slices.Clone(r.filledBy)
	c.blockStart = slices.Clone(r.blockStart)
	c.stale = slices.Clone(r.stale)
	c.relaxed = slices.Clone(r.relaxed)
	c.relaxAgain = slices.Clone(r.relaxAgain)
	c.startStep = slices.Clone(r.startStep)
	c.endStep = slices.Clone(r.endStep)
	c.lastWrite = slices.Clone(r.lastWrite)
	c.snapAt = slices.Clone(r.snapAt)
	c.abortedOnce = slices.Clone(r.abortedOnce)
	c.checkpoint = nil
	return &c
}

// copyBytes is about how many bytes copyReplay copies.
func (r *replay) copyBytes() int64 {
	n := int64(len(r.state)) + 4*int64(len(r.order)+len(r.preds)+len(r.waitNext)) +
		int64(len(r.keys))*int64(unsafe.Sizeof(replayKey{})) +
		4*int64(len(r.waitHead)+len(r.pending)+len(r.pendingRW)+len(r.pendingPin)+len(r.keyWait)+len(r.filledBy)) +
		4*int64(len(r.classDemand)+len(r.classSupply)+len(r.startStep)+len(r.endStep)+len(r.lastWrite)+len(r.snapAt)) +
		int64(len(r.blockStart)) + int64(len(r.ready))*int64(unsafe.Sizeof(txnPrio{}))
	return n
}

// maxRepairCopy bounds the copy of a replay a repair may make: a repair copies the
// replay a dozen times or more (snapEvery, repairWidth), and on this kind of machine
// fresh memory costs about 4 ms per MiB. At a million transactions a copy is about
// 150 MiB: the repairs of a stuck :info history took 17 GB and ended the check
// (unknown), where the replays within narrowed windows prove it.
var maxRepairCopy int64 = 96 << 20

// snapEvery is how many events pass between two copies of a replay being repaired:
// a repair resumes from the last copy before the choice it undoes.
func snapEvery(n int32) int { return max(256, int(n)/8) }

// scheduleRepaired is scheduleWithin, resumed with the choices blame names avoided
// until it completes (at most maxRepairs times).
func scheduleRepaired(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge, byCompletion bool, win *encode.Windows, stop func() bool) ([]int32, bool, int) {
	r := newReplayStop(h, in, commit, orderEdges, stop)
	if r == nil {
		return nil, false, 0
	}
	r.byCompletion, r.win, r.stop = byCompletion, win, stop
	return r.runOrder(true, stop)
}

// runOrder runs the fresh replay r (serial or read by read) to its commit order,
// repaired when it gets stuck if repair is set; it returns the order and how many
// repairs it took.
func (r *replay) runOrder(repair bool, stop func() bool) ([]int32, bool, int) {
	if !repair {
		order, ok := r.run()
		return order, ok, 0
	}
	done, n, ok := r.runRepaired(stop)
	if !ok {
		return nil, false, n
	}
	return done.order, true, n
}

// scheduleRanked is schedule guided by orderEdges, repaired when stuck unless
// !repair, with ready transactions taken in the order of unordered, a serial order of
// the same history found without order constraints (those it left out, :info ones,
// after every other, by interval): the guided replay then follows that order's choices
// among writers of the same values wherever the order constraints allow, instead of
// choosing by interval midpoint. On commit-anywhere windows the replay guided by real
// time got stuck where the unguided one did not (win 10K, seed 70: 19 repairs, then
// stalled), and the narrowing of strict serializability cost 2.5 CPU-s; this replay
// ran through at once. The order still counts only after verification.
func scheduleRanked(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge, unordered []int32, repair bool, stop func() bool) ([]int32, bool, int) {
	r := newReplayStop(h, in, commit, orderEdges, stop)
	if r == nil {
		return nil, false, 0
	}
	r.stop = stop
	r.rank = make([]int64, r.n)
	for t := range r.rank {
		r.rank[t] = int64(len(unordered)) + r.midpoint(int32(t))
	}
	for i, t := range unordered {
		r.rank[t] = int64(i)
	}
	return r.runOrder(repair, stop)
}

// runRepaired runs the fresh replay r (any mode: serial, read by read, snapshot) to
// the end, repairing it when stuck (at most maxRepairs times). It returns the run that
// completed (r or a repaired copy) and how many repairs it took.
func (r *replay) runRepaired(stop func() bool) (*serialRun, int, bool) {
	if r.copyBytes()+4*int64(len(r.traceAt)) > maxRepairCopy {
		return nil, 0, false
	}
	r.filledBy = newFilledBy(len(r.traceAt))
	r.avoid = map[uint64]bool{}
	for t := int32(0); t < r.n; t++ {
		r.try(t)
	}
	r.relaxGate = r.perRead || r.snapshot
	run := &serialRun{r: r}
	sn := &replaySnaps{every: snapEvery(r.n)}
	r.checkpoint = checkpointer(run, sn)
	maxWork := repairWork * int(r.n)
	if r.perRead || r.snapshot {
		// Each stuck state's choices are looked ahead twice (see repairLoop), and a
		// small history's copies are far apart (snapEvery): a repair may cost more.
		maxWork = max(perReadRepairWork*int(r.n), 32*snapEvery(r.n))
	}
	done, n, ok := repairLoop(run, sn, maxWork, stop)
	if !ok {
		return nil, n, false
	}
	return done.(*serialRun), n, true
}

// siScheduleRepaired is siSchedule (within win, nil: anywhere), resumed with the
// choices blame names avoided until it completes (at most maxRepairs times).
func siScheduleRepaired(h *history.History, in *encode.Inference, commit []encode.Commit, guide []encode.Edge, byCompletion, older bool, win *encode.Windows, stop func() bool) ([]siEvent, bool, int) {
	if siCopyFloor(h, in) > maxRepairCopy {
		// Not built at all: at a million transactions the replay's set-up alone takes
		// seconds, and it asks no limit.
		return nil, false, 0
	}
	s := newSIReplay(h, in, commit, guide)
	if s.copyBytes()+4*int64(len(s.traceAt)) > maxRepairCopy {
		return nil, false, 0
	}
	s.byCompletion, s.older, s.win, s.stop = byCompletion, older, win, stop
	s.filledBy = newFilledBy(len(s.traceAt))
	s.avoid = map[uint64]bool{}
	for t := int32(0); t < s.n; t++ {
		s.try(t)
	}
	run := &siRun{s: s}
	sn := &replaySnaps{every: snapEvery(s.n)}
	s.checkpoint = checkpointer(run, sn)
	done, n, ok := repairLoop(run, sn, repairWork*int(s.n), stop)
	if !ok {
		return nil, false, n
	}
	return done.(*siRun).events, true, n
}

// siCopyFloor is a lower bound of what a snapshot isolation replay of h copies
// (copyBytes, with its traces and filledBy), known before it is built: per
// transaction its state, predecessors and wait link; per key its entry and
// wait list; per slot its trace value, waiters, pending reads (twice) and filler.
func siCopyFloor(h *history.History, in *encode.Inference) int64 {
	slots := int64(len(in.Keys))
	for k := range in.Keys {
		slots += int64(len(in.Keys[k].Trace))
	}
	return 9*int64(len(h.Txns)) + int64(len(in.Keys))*(int64(unsafe.Sizeof(replayKey{}))+4) + 20*slots
}

func newFilledBy(slots int) []int32 {
	f := make([]int32, slots)
	for i := range f {
		f[i] = -1
	}
	return f
}

// lateRead returns a key that committed transaction t reads with fewer values than
// the key already holds (with t's own earlier appends), and the read's length without
// them; -1 if none.
func (r *replay) lateRead(t int32) (int32, int32) {
	h := r.h
	if h.Txns[t].Status != history.OK {
		return -1, 0
	}
	r.epoch++
	for i, op := range h.TxnOps(int(t)) {
		k := op.Key
		ks := &r.keys[k]
		if ks.stamp != r.epoch {
			ks.stamp = r.epoch
			ks.local = ks.pos
		}
		if op.Kind == history.Append {
			ks.local++
		} else if op.Known && op.End-op.Start < ks.local {
			if r.perRead {
				// Read by read, an older list where a block started is no late read.
				if _, s := r.perReadCheck(h.Txns[t].OpStart+int32(i), k, ks.local, op.End-op.Start); s == waitStale || r.readSlot[h.Txns[t].OpStart+int32(i)] == -1 {
					continue
				}
			}
			return k, op.End - op.Start - (ks.local - ks.pos)
		}
	}
	return -1, 0
}

// passedBy returns the block (writer, start) that moved key k past position l, where a
// read of k's first l values waits: undone, its writer's block starts elsewhere. -1 if
// it is pinned there or avoided.
func (r *replay) passedBy(k, l int32) (int32, int32) {
	ks := &r.keys[k]
	for p := min(l, ks.n-1); p >= 0; p-- {
		x := r.filledBy[ks.base+p]
		if x < 0 {
			continue
		}
		wr := &r.in.Writers[x]
		if p+wr.End-wr.Start <= l || r.pinnedAt(wr.Txn, k, p) || r.avoid[uint64(x)<<32|uint64(p)] {
			return -1, -1
		}
		return x, p
	}
	return -1, -1
}

// blame lists, for a stuck replay, the choices that may have been wrong, as writer<<32 |
// position, nearest to the key's current position first: where a committed transaction
// that could run but for one key (its values are not the trace's at that key's
// position), or that is deferred (its append would strand a reader), or that reads a
// key already passed, would have fit at an earlier position that another writer's
// block took.
func (r *replay) blame() []uint64 {
	if r.filledBy == nil {
		return nil
	}
	var stuck []int32
	for t := int32(0); t < r.n; t++ {
		if r.commit[t] == encode.Committed && r.state[t] != rDone && r.state[t] != rStarted {
			stuck = append(stuck, t)
		}
	}
	type cand struct {
		w, p, dist int32
		mid        int64
	}
	var cs []cand
	add := func(t, k int32) {
		if w, p := r.takenFrom(t, k); w >= 0 {
			cs = append(cs, cand{w, p, r.keys[k].pos - p, r.midpoint(t)})
		}
	}
	for _, t := range stuck {
		// A read already passed: t's own block due earlier, or the block that moved
		// the key past it.
		if k, l := r.lateRead(t); k >= 0 {
			add(t, k)
			if x, p := r.passedBy(k, l); x >= 0 {
				cs = append(cs, cand{x, p, r.keys[k].pos - p, r.midpoint(t)})
			}
		}
		// Runnable but for one key, whose block fits only at an earlier position
		// another writer of the same values took.
		if ks := r.behindOn(t, 1); len(ks) == 1 {
			add(t, ks[0])
			for _, c := range r.takenFromPerRead(t, ks[0]) {
				cs = append(cs, cand{int32(c >> 32), int32(c), r.keys[ks[0]].pos - int32(c), r.midpoint(t)})
			}
		}
	}
	// Snapshot isolation: a transaction of the frontier waits for a key that a started
	// transaction w holds and will move; w's commit, which it waits for, strands
	// it elsewhere, or w's block there is the wrong one: another writer of the same
	// values should have taken those positions (w's blocks at the keys' current
	// positions).
	if r.holds != nil {
		for _, t := range stuck {
			if r.state[t] != rPending || r.preds[t] > 0 {
				continue
			}
			ok, sl := r.check(t)
			var k int32
			switch {
			case ok:
				continue
			case sl >= 0:
				k = r.slotKey(sl)
			case sl <= waitKey:
				// Its own block's key, held by w at the position t's block was due
				// (othergen's snapshot store at 8K: the guided replay's repairs had
				// nothing to undo there and gave up; 1.35 → 0.11 CPU-s).
				k = waitKey - sl
			default:
				continue
			}
			w := r.holds[k]
			if w < 0 || w == t {
				continue
			}
			for _, x := range r.in.TxnWriters(w) {
				wk := r.in.Writers[x].Key
				if p := r.keys[wk].pos; p < r.keys[wk].n {
					cs = append(cs, cand{x, p, 0, r.midpoint(t)})
				}
			}
		}
	}
	// An optional transaction aborted (snapshot isolation: its commit would strand a
	// reader) and not run since: where its block would fit earlier, the writer there
	// may have taken its position (its commit would then strand nobody).
	for t, ab := range r.abortedOnce {
		if ab && r.state[t] != rDone {
			for _, w := range r.in.TxnWriters(int32(t)) {
				add(int32(t), r.in.Writers[w].Key)
			}
		}
	}
	// Snapshot isolation: started, its commit would strand a reader of the key at its
	// current length (it waits), so its block was due earlier, as a deferred one's.
	if r.holds != nil {
		for t := int32(0); t < r.n; t++ {
			if r.state[t] != rStarted || r.commit[t] != encode.Committed {
				continue
			}
			for _, w := range r.in.TxnWriters(t) {
				k := r.in.Writers[w].Key
				if s := r.slot(k, r.keys[k].pos); s >= 0 && r.pending[s] > 0 {
					add(t, k)
				}
			}
		}
	}
	// Ready but deferred: appending now would strand a reader of the key at its current
	// length, so the block was due earlier.
	for _, t := range r.deferred {
		for _, w := range r.in.TxnWriters(t) {
			k := r.in.Writers[w].Key
			if s := r.slot(k, r.keys[k].pos); s >= 0 && r.pending[s] > 0 {
				add(t, k)
			}
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.dist != b.dist {
			return int(a.dist - b.dist)
		}
		switch {
		case a.mid < b.mid:
			return -1
		case a.mid > b.mid:
			return 1
		}
		return 0
	})
	var out []uint64
	for _, c := range cs {
		key := uint64(c.w)<<32 | uint64(c.p)
		if !r.avoid[key] && !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	return out
}

// behindOn returns the keys on which committed transaction t is behind, when its reads
// all see the installed lists and its appends all fit the traces but for its blocks on
// those keys (the trace's values at such a key's position are not the block's, or the
// block is avoided there), at most limit of them; nil if t is not so.
func (r *replay) behindOn(t int32, limit int) []int32 {
	h := r.h
	r.epoch++
	var bad []int32
	for i, op := range h.TxnOps(int(t)) {
		k := op.Key
		ks := &r.keys[k]
		if ks.stamp != r.epoch {
			ks.stamp = r.epoch
			ks.local = ks.pos
		}
		at := ks.local
		if op.Kind == history.Append {
			if slices.Contains(bad, k) {
				continue
			}
			// Any append of the block may be the one that does not fit (not only the
			// first); an avoided position is taken, and read by read a block may not
			// cross the end of a read still to run, as check says.
			if at < ks.n && (r.traceAt[ks.base+at] != op.Value ||
				at == ks.pos && r.avoid[uint64(r.writerOf(t, k))<<32|uint64(at)] ||
				r.perRead && at > ks.pos && r.pending[ks.base+at] > 0) {
				if len(bad) == limit {
					return nil
				}
				bad = append(bad, k)
				continue
			}
			ks.local = at + 1
			continue
		}
		if h.Txns[t].Status != history.OK || !op.Known {
			continue
		}
		if slices.Contains(bad, k) {
			return nil
		}
		if r.perRead {
			// Read by read, an older list where a block started is read as it is now.
			if ok, s := r.perReadCheck(h.Txns[t].OpStart+int32(i), k, at, op.End-op.Start); !ok && s != waitStale {
				return nil
			}
			continue
		}
		if op.End-op.Start != at {
			return nil
		}
	}
	return bad
}

// takenFrom returns the writer whose block starts at the last position of key k before
// its current one where t's block would fit (the trace holds t's values there), and
// that position; -1 if none (or the writer there is pinned by its own read of k).
func (r *replay) takenFrom(t, k int32) (int32, int32) {
	return r.takenFromIf(t, k, func(x, p int32) bool { return !r.pinnedAt(r.in.Writers[x].Txn, k, p) })
}

// takenFromIf is takenFrom among the blocks (writer x at p) that ok accepts.
func (r *replay) takenFromIf(t, k int32, ok func(x, p int32) bool) (int32, int32) {
	in := r.in
	w := r.writerOf(t, k)
	if w < 0 {
		return -1, -1
	}
	wr := &in.Writers[w]
	vals := in.WriterVals[wr.Start:wr.End]
	ks := &r.keys[k]
	for p := min(ks.pos, ks.n) - 1; p >= 0; p-- {
		x := r.filledBy[ks.base+p]
		if x < 0 || x == w || p+int32(len(vals)) > ks.n ||
			!slices.Equal(vals, r.traceAt[ks.base+p:ks.base+p+int32(len(vals))]) {
			continue
		}
		if r.avoid[uint64(x)<<32|uint64(p)] || !ok(x, p) {
			continue
		}
		return x, p
	}
	return -1, -1
}

// takenFromPerRead returns, read by read, the other blocks blame names for t behind on
// key k besides takenFrom's: the nearest one pinned by its writer's read of the list
// before it (pinnedAt; read committed does not hold such a block there: on a
// database's run a transaction mostly reads a key, then appends to it after others did) and the nearest one of an optional (:info) writer
// (it runs wherever the committed writers leave its value's positions unfilled, not
// where it did: a killed connection's transaction may have committed later or never).
// Each is writer<<32 | position.
func (r *replay) takenFromPerRead(t, k int32) []uint64 {
	if !r.perRead && r.holds == nil {
		return nil
	}
	var out []uint64
	if x, p := r.takenFromIf(t, k, func(x, p int32) bool { return r.pinnedAt(r.in.Writers[x].Txn, k, p) }); r.perRead && x >= 0 {
		out = append(out, uint64(x)<<32|uint64(p))
	}
	if x, p := r.takenFromIf(t, k, func(x, _ int32) bool { return r.commit[r.in.Writers[x].Txn] != encode.Committed }); x >= 0 {
		out = append(out, uint64(x)<<32|uint64(p))
	}
	return out
}

// pinnedAt reports whether t's block on key k, started at p, is pinned there: t reads k
// before its first append to it, the whole list before p (read by read, a read of an
// older list does not pin the block).
func (r *replay) pinnedAt(t, k, p int32) bool {
	for _, op := range r.h.TxnOps(int(t)) {
		if op.Key != k {
			continue
		}
		return op.Kind != history.Append && op.Known && (!r.perRead || op.End-op.Start == p)
	}
	return false
}

// pinnedTwice reports whether two committed transactions read a key at the same length
// before appending to it (inside the trace): both blocks would start at that position,
// so no serial or snapshot-isolated replay exists (a lost update) and repairing one is
// wasted work.
func pinnedTwice(h *history.History, in *encode.Inference) bool {
	seen := map[uint64]int32{}
	for i := range in.Reads {
		r := &in.Reads[i]
		if !r.Writes || h.Txns[r.Txn].Status != history.OK || r.Len-r.Own >= int32(len(in.Keys[r.Key].Trace)) {
			continue
		}
		at := uint64(r.Key)<<32 | uint64(r.Len-r.Own)
		if t, ok := seen[at]; ok && t != r.Txn {
			return true
		}
		seen[at] = r.Txn
	}
	return false
}

// mutualWaits finds, in a stuck replay, two transactions a and b that wait on each
// other: a waits for key ka to move (a read of a longer list, or its values further
// on), and b's append is the one that moves ka now; b waits for kb, which a's append
// moves. Both cannot run now: one of them should have run earlier, where its blocks
// on both keys fit at positions other writers of the same values took since. Undoing
// one of those choices alone leaves the other key in the way; it returns, per
// transaction of each such pair, the choices to undo together (its blocks' earlier
// positions on ka and kb).
func (r *replay) mutualWaits() [][]uint64 {
	if r.filledBy == nil {
		return nil
	}
	// The frontier: committed transactions not run whose order predecessors have.
	type wait struct{ t, k int32 }
	var waits []wait
	for t := int32(0); t < r.n; t++ {
		if r.commit[t] != encode.Committed || r.state[t] != rPending || r.preds[t] > 0 {
			continue
		}
		if ok, s := r.check(t); !ok && s >= 0 {
			waits = append(waits, wait{t, r.slotKey(s)})
		}
	}
	if len(waits) > maxMutualFrontier {
		waits = waits[:maxMutualFrontier]
	}
	var out [][]uint64
	seen := map[uint64]bool{}
	group := func(t int32, ks ...int32) {
		var g []uint64
		for _, k := range ks {
			if w, p := r.takenFrom(t, k); w >= 0 {
				c := uint64(w)<<32 | uint64(p)
				if !slices.Contains(g, c) {
					g = append(g, c)
				}
			}
		}
		slices.Sort(g)
		if len(g) == 0 {
			return
		}
		key := g[0]*31 + g[len(g)-1]
		if !seen[key] {
			seen[key] = true
			out = append(out, g)
		}
	}
	for _, a := range waits {
		for _, b := range waits {
			if a.t == b.t || a.k == b.k || !r.moves(b.t, a.k) || !r.moves(a.t, b.k) {
				continue
			}
			group(a.t, a.k, b.k)
			group(b.t, b.k, a.k)
		}
	}
	return out[:min(len(out), repairWidth)]
}

// maxBehind is how many keys a transaction may be behind on for behindGroups.
const maxBehind = 3

// behindGroups finds, in a stuck replay, the transactions of the frontier (committed,
// not run, their order predecessors run) that could run but for their blocks on two or
// three keys, each of which fits at an earlier position another writer of the same
// values took: undoing one of those choices alone leaves the transaction stuck on the
// others (the replay ran a concurrent writer first, which took the positions of several
// of its blocks). It returns, per such transaction, the choices to undo together.
func (r *replay) behindGroups() [][]uint64 {
	if r.filledBy == nil {
		return nil
	}
	var out [][]uint64
	for t := int32(0); t < r.n && len(out) < repairWidth; t++ {
		if r.commit[t] != encode.Committed || r.state[t] != rPending || r.preds[t] > 0 {
			continue
		}
		ks := r.behindOn(t, maxBehind)
		if len(ks) < 2 {
			continue
		}
		g := make([]uint64, 0, len(ks))
		for _, k := range ks {
			w, p := r.takenFrom(t, k)
			if w < 0 {
				g = nil // that block fits at no earlier position: t waits for the key
				break
			}
			if c := uint64(w)<<32 | uint64(p); !slices.Contains(g, c) {
				g = append(g, c)
			}
		}
		if len(g) > 0 {
			slices.Sort(g)
			out = append(out, g)
		}
	}
	return out
}

// maxMutualFrontier bounds the waiting transactions mutualWaits pairs up.
const maxMutualFrontier = 64

// slotKey returns the key of slot s.
func (r *replay) slotKey(s int32) int32 {
	k, _ := slices.BinarySearchFunc(r.keys, s, func(ks replayKey, s int32) int {
		switch {
		case ks.base+ks.n < s:
			return -1
		case ks.base > s:
			return 1
		}
		return 0
	})
	return int32(k)
}

// moves reports whether t's first append to key k is the trace's value at k's
// current position.
func (r *replay) moves(t, k int32) bool {
	ks := &r.keys[k]
	if ks.pos >= ks.n {
		return false
	}
	for _, op := range r.h.TxnOps(int(t)) {
		if op.Kind == history.Append && op.Key == k {
			return op.Value == r.traceAt[ks.base+ks.pos]
		}
	}
	return false
}

// onRepairStep, when set (the diagnostics only: check.TestDiagnoseSIReplay), sees each
// stuck run the repair loop is about to repair.
var onRepairStep func(r repairRun)
