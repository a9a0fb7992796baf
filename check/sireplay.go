package check

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"

	"doppel/encode"
	"doppel/history"
)

// siEvent is one step of a snapshot-isolated execution: transaction Txn takes its
// snapshot (Commit false) or installs its appends (Commit true).
type siEvent struct {
	Txn    int32
	Commit bool
}

// siSchedule tries to replay the history as a snapshot-isolated execution, for
// histories that are snapshot isolated but not serializable (write skew), which the
// serial replay cannot explain. A transaction starts when each of its reads sees the
// committed list (plus its own appends) and each of its appends is next in the trace;
// from its start to its commit it holds the keys it appends to, since
// first-committer-wins lets no other writer of them commit in between. Started
// transactions commit earliest first, except that a commit waits while a reader that
// has not started still needs to see a key before it (write skew needs exactly that).
// As with schedule, a stuck greedy choice returns false and the solver decides; the
// events are checked by verifySI before they count.
//
// guide holds process and real-time edges, or none: with them a transaction starts
// only after those that completed before it was invoked committed (strong snapshot
// isolation, which most databases give). That is only a guide: snapshot isolation
// allows older snapshots, and verifySI does not check it. With older, a reader held
// back only by the guide starts where a commit would otherwise strand it (see
// startNeeded).
func siSchedule(h *history.History, in *encode.Inference, commit []encode.Commit, guide []encode.Edge, byCompletion, older bool, stop func() bool) ([]siEvent, bool) {
	s := newSIReplay(h, in, commit, guide)
	s.byCompletion, s.older = byCompletion, older
	s.stop = stop
	return s.run()
}

func newSIReplay(h *history.History, in *encode.Inference, commit []encode.Commit, guide []encode.Edge) *siReplay {
	r := newReplay(h, in, commit, guide)
	s := &siReplay{replay: r, holder: make([]int32, len(in.Keys))}
	for k := range s.holder {
		s.holder[k] = -1
	}
	r.holds = s.holder
	r.keyWait = make([]int32, len(in.Keys))
	for k := range r.keyWait {
		r.keyWait[k] = -1
	}
	r.pendingRW = make([]int32, len(r.pending))
	r.readWrites = make([]bool, len(h.Ops))
	for t := int32(0); t < r.n; t++ {
		tx := &h.Txns[t]
		r.epoch++
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			if h.Ops[i].Kind == history.Append {
				r.keys[h.Ops[i].Key].stamp = r.epoch // t appends to the key
			}
		}
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			if sl := r.readSlot[i]; sl >= 0 && r.keys[h.Ops[i].Key].stamp == r.epoch {
				r.readWrites[i] = true
				r.pendingRW[sl]++
			}
		}
	}
	return s
}

type siReplay struct {
	*replay
	holder  []int32 // per key: the started, uncommitted transaction appending to it, or -1
	started txnHeap // started transactions, by priority, to commit
	waiting []int32 // started transactions whose commit would strand a reader
	events  []siEvent
	// older: a reader that the guide alone holds back may start (an older snapshot
	// than the guide's, which snapshot isolation allows; startNeeded).
	older bool
	// bySeen: per key, its reads sorted by the length they saw besides their own
	// appends (built when first needed), so startNeeded visits only the reads at a
	// key's current length rather than all of them at every step.
	bySeen [][]int32
}

func (s *siReplay) run() ([]siEvent, bool) {
	r := s.replay
	for t := int32(0); t < r.n; t++ {
		r.try(t)
	}
	return s.loop()
}

// loop starts and commits transactions until every one committed or the replay is
// stuck.
func (s *siReplay) loop() ([]siEvent, bool) {
	r := s.replay
	// Start as late and commit as early as possible: holding keys longer than needed
	// would order writers (even of appends no read observed) arbitrarily.
	for !r.failed {
		if r.stopped() {
			return nil, false
		}
		if r.checkpoint != nil && r.checkpoint() {
			return nil, false
		}
		switch {
		case s.started.Len() > 0:
			t := s.started.pop().t
			if s.strandsCommit(t) {
				s.waiting = append(s.waiting, t)
				continue
			}
			s.commit(t)
		case s.startNeeded():
		case r.ready.Len() > 0:
			t := r.ready.pop().t
			if r.state[t] != rQueued {
				continue // started out of turn by startNeeded
			}
			r.state[t] = rPending
			if ok, _ := r.check(t); !ok {
				r.try(t)
				continue
			}
			if s.startStrands(t) {
				r.deferred = append(r.deferred, t)
				continue
			}
			s.start(t)
		default:
			// Stuck. Before a start or commit that strands a reader (which dooms the
			// replay, or leaves it to the repair), the optional transactions: a spare
			// may fill what a committed transaction waits for, dropping those that hold
			// back successors may release some, and an optional one whose commit would
			// strand a reader may never have committed.
			if t := r.pickSpare(); t >= 0 {
				s.start(t)
				continue
			}
			if r.dropBlockers() || s.abortOptional() {
				continue
			}
			switch {
			case r.filledBy != nil && (len(r.deferred) > 0 || len(s.waiting) > 0):
				return nil, false // stuck: the repair looks at this state (see blame)
			case len(r.deferred) > 0:
				// Only starts that take a position another writer is pinned to are left
				// (besides commits that strand readers): start the earliest.
				t := s.earliest(&r.deferred)
				if ok, _ := r.check(t); !ok {
					r.try(t)
					continue
				}
				s.start(t)
			case len(s.waiting) > 0:
				// Every commit left strands a reader that cannot start: the greedy choice
				// failed somewhere; commit the earliest and let the end check decide.
				s.commit(s.earliest(&s.waiting))
			default:
				if _, ok := r.finish(); !ok {
					return nil, false
				}
				return s.events, true
			}
		}
	}
	return nil, false
}

// abortOptional aborts, when the replay is stuck, an optional (:info) transaction
// that started and whose commit would strand a reader: it may never have committed.
// The latest invoked goes first (the likeliest to have committed after the readers,
// or not at all). Its start is undone and its keys released; the first time it is
// kept as a spare (it may still fill a position a committed transaction waits for
// later), the second time dropped. It reports whether it aborted one.
func (s *siReplay) abortOptional() bool {
	r := s.replay
	best := -1
	for i, t := range s.waiting {
		if r.commit[t] == encode.MayCommit && (best < 0 || r.h.Txns[t].Invoke > r.h.Txns[s.waiting[best]].Invoke) {
			best = i
		}
	}
	if best < 0 {
		return false
	}
	t := s.waiting[best]
	s.waiting = slices.Delete(s.waiting, best, best+1)
	if i := slices.Index(s.events, siEvent{t, false}); i >= 0 {
		s.events = slices.Delete(s.events, i, i+1)
	}
	s.releaseKeys(t)
	if r.abortedOnce == nil {
		r.abortedOnce = make([]bool, r.n)
	}
	again := r.abortedOnce[t]
	r.abortedOnce[t] = true
	if again || r.succStart[t+1] > r.succStart[t] {
		r.drop(t)
	} else {
		r.state[t] = rSpare
		r.spares = append(r.spares, t)
	}
	s.retryDeferred()
	return true
}

// startNeeded starts the earliest ready transaction that a waiting commit would strand
// (it reads a key the commit moves, at its current length), so that the commit can
// go ahead; it reports whether it started one. With s.older, a reader the guide
// alone holds back (its order predecessors have not all committed) counts as ready:
// a database whose snapshots lag (a replica) took its snapshot now, before them.
// Held back, it was stranded by the commit and the replay stuck for good (othergen's
// snapshot store with --stale).
func (s *siReplay) startNeeded() bool {
	r, in := s.replay, s.in
	best := int32(-1)
	for _, w := range s.waiting {
		for _, op := range r.h.TxnOps(int(w)) {
			if op.Kind != history.Append {
				continue
			}
			for _, ri := range s.readsAtLength(op.Key) {
				rd := &in.Reads[ri]
				if r.state[rd.Txn] == rQueued && (best < 0 || r.prio(rd.Txn) < r.prio(best)) {
					best = rd.Txn
				}
				if s.older && r.state[rd.Txn] == rPending && r.preds[rd.Txn] > 0 && (best < 0 || r.prio(rd.Txn) < r.prio(best)) && s.readyButOrder(rd.Txn) {
					best = rd.Txn
				}
			}
		}
	}
	if best < 0 {
		return s.older && s.unstartWriteOnly()
	}
	if r.preds[best] > 0 {
		s.start(best) // before its order predecessors committed: an older snapshot
		return true
	}
	if ok, _ := r.check(best); !ok {
		r.state[best] = rPending
		r.try(best)
		return true
	}
	s.start(best)
	return true
}

// unstartWriteOnly (with s.older) undoes the start of a waiting transaction that
// reads nothing, where a reader its commit would strand waits only for a key it
// holds, and starts that reader instead: the two wait on each other, and holding
// keys is its only reason to have started (it had no snapshot to take). It reports
// whether it did.
func (s *siReplay) unstartWriteOnly() bool {
	r, in := s.replay, s.in
	for i, w := range s.waiting {
		if !s.writeOnly(w) {
			continue
		}
		for _, op := range r.h.TxnOps(int(w)) {
			if op.Kind != history.Append {
				continue
			}
			for _, ri := range s.readsAtLength(op.Key) {
				rd := &in.Reads[ri]
				if st := r.state[rd.Txn]; (st != rPending && st != rQueued) || !s.readyWithout(rd.Txn, w) {
					continue
				}
				s.waiting = slices.Delete(s.waiting, i, i+1)
				if e := slices.Index(s.events, siEvent{w, false}); e >= 0 {
					s.events = slices.Delete(s.events, e, e+1)
				}
				r.state[w] = rPending
				s.releaseKeys(w)
				s.start(rd.Txn)
				r.try(w)
				return true
			}
		}
	}
	return false
}

// readyWithout reports whether t could start now, but for its order predecessors, if
// started transaction w held no keys.
func (s *siReplay) readyWithout(t, w int32) bool {
	var held []int32
	for k, h := range s.holder {
		if h == w {
			s.holder[k] = -1
			held = append(held, int32(k))
		}
	}
	ok := s.readyButOrder(t)
	for _, k := range held {
		s.holder[k] = w
	}
	return ok
}

// writeOnly reports whether t has no read a replay must place.
func (s *siReplay) writeOnly(t int32) bool {
	reads := false
	s.readBases(t, func(int32, bool) { reads = true })
	return !reads
}

// readyButOrder reports whether t could start now but for its order predecessors.
func (s *siReplay) readyButOrder(t int32) bool {
	r := s.replay
	p := r.preds[t]
	r.preds[t] = 0
	ok, _ := r.check(t)
	r.preds[t] = p
	return ok
}

// readsAtLength returns key k's reads that saw it at its current length (besides
// their transaction's own appends).
func (s *siReplay) readsAtLength(k int32) []int32 {
	in := s.in
	reads := s.readsBySeen(k)
	pos := s.keys[k].pos
	seen := func(ri int32) int32 { return in.Reads[ri].Len - in.Reads[ri].Own }
	from, _ := slices.BinarySearchFunc(reads, pos, func(ri int32, pos int32) int { return cmp.Compare(seen(ri), pos) })
	to := from
	for to < len(reads) && seen(reads[to]) == pos {
		to++
	}
	return reads[from:to]
}

// readsBySeen returns key k's reads sorted by the length each saw besides its
// transaction's own appends.
func (s *siReplay) readsBySeen(k int32) []int32 {
	if s.bySeen == nil {
		s.bySeen = make([][]int32, len(s.in.Keys))
	}
	if s.bySeen[k] == nil {
		in := s.in
		reads := slices.Clone(in.Keys[k].Reads)
		slices.SortStableFunc(reads, func(a, b int32) int {
			return cmp.Compare(in.Reads[a].Len-in.Reads[a].Own, in.Reads[b].Len-in.Reads[b].Own)
		})
		if reads == nil {
			reads = []int32{}
		}
		s.bySeen[k] = reads
	}
	return s.bySeen[k]
}

// start takes t's snapshot: its reads are done, its appended keys are held.
func (s *siReplay) start(t int32) {
	r := s.replay
	r.state[t] = rStarted
	s.events = append(s.events, siEvent{t, false})
	for _, op := range r.h.TxnOps(int(t)) {
		if op.Kind == history.Append {
			s.holder[op.Key] = t
		}
	}
	r.consumeReads(t)
	s.retryDeferred()
	s.started.push(txnPrio{t, r.prio(t)})
	for _, w := range s.waiting {
		s.started.push(txnPrio{w, r.prio(w)})
	}
	s.waiting = s.waiting[:0]
}

// startStrands reports whether starting t now would take a key position that another
// transaction that has not started is pinned to: it reads the key at that length and
// appends to it, so it must be the one appending there.
func (s *siReplay) startStrands(t int32) bool {
	return s.strandsIn(t, s.pendingRW, true)
}

// retryDeferred gives the deferred starts another chance after the state changed.
func (s *siReplay) retryDeferred() {
	r := s.replay
	d := r.deferred
	r.deferred = nil
	for _, t := range d {
		r.try(t)
	}
	r.deferred = d[:0]
}

// strandsCommit reports whether committing t now would move a key that a reader that
// has not started still needs to see at its current length.
func (s *siReplay) strandsCommit(t int32) bool {
	r := s.replay
	r.epoch++
	for _, op := range r.h.TxnOps(int(t)) {
		if op.Kind != history.Append {
			continue
		}
		// A block of several appends to the key strands a read of any length it
		// passes, not only of the current one (the read cannot end inside it).
		ks := &r.keys[op.Key]
		if ks.stamp != r.epoch {
			ks.stamp, ks.local = r.epoch, ks.pos
		}
		if sl := r.slot(op.Key, ks.local); sl >= 0 && r.pending[sl] > 0 {
			return true
		}
		ks.local++
	}
	return false
}

// commit installs t's appends, releases its keys and wakes what waits on them.
func (s *siReplay) commit(t int32) {
	r := s.replay
	s.events = append(s.events, siEvent{t, true})
	for _, w := range s.waiting {
		s.started.push(txnPrio{w, r.prio(w)})
	}
	s.waiting = s.waiting[:0]
	s.retryDeferred()
	r.install(t) // marks t done, installs, wakes the slots passed
	s.releaseKeys(t)
}

// verifySI re-executes events and reports the first way they fail to be a
// snapshot-isolated execution of the history: every :ok transaction starts and then
// commits exactly once, no :fail one does (an :info one may), each :ok read returns
// the lists committed before its transaction started plus its own earlier appends,
// and no transaction commits an append to a key that another transaction committed to
// after it started (first-committer-wins). Like verifySerial it uses the traces only as
// reference lists.
func verifySI(h *history.History, in *encode.Inference, events []siEvent, process, realtime bool) error {
	return verifySIStop(h, in, events, process, realtime, nil)
}

// verifySIStop is verifySI that asks stop (when not nil) every few milliseconds
// whether to give up, and then returns errStopped: at a million transactions it
// takes seconds.
func verifySIStop(h *history.History, in *encode.Inference, events []siEvent, process, realtime bool, stop func() bool) error {
	if err := verifySIEvents(h, in, events, stop); err != nil {
		return err
	}
	if stop != nil && (process || realtime) && stop() { // the orders' sort: a second at 1M
		return errStopped
	}
	return verifySIOrders(h, events, process, realtime)
}

// verifySIOrders checks that events, already verified as a snapshot-isolated
// execution, keep process order (when asked) and real-time order (when asked): the
// commit of the earlier transaction before the start of the later.
func verifySIOrders(h *history.History, events []siEvent, process, realtime bool) error {
	if !process && !realtime {
		return nil
	}
	startAt := make([]int32, len(h.Txns))
	commitAt := make([]int32, len(h.Txns))
	ran := make([]bool, len(h.Txns))
	for i, ev := range events {
		if ev.Commit {
			commitAt[ev.Txn] = int32(i)
			ran[ev.Txn] = true
		} else {
			startAt[ev.Txn] = int32(i)
		}
	}
	if process {
		var ids []int32
		for t := range h.Txns {
			if ran[t] && h.Txns[t].Process >= 0 {
				ids = append(ids, int32(t))
			}
		}
		encode.SortProcessOrder(h, ids)
		for i := 1; i < len(ids); i++ {
			a, b := ids[i-1], ids[i]
			if h.Txns[a].Process == h.Txns[b].Process && commitAt[a] > startAt[b] {
				return fmt.Errorf("transaction %d starts before %d, earlier in its process, commits", b, a)
			}
		}
	}
	if realtime {
		// Sweep the history's events: at each invoke, every transaction completed
		// before must have committed before the invoked one starts.
		latest := int32(-1) // the latest commit event of a completed transaction
		for _, e := range realtimeEvents(h, func(t int) bool { return ran[t] }) {
			switch {
			case e > 0:
				if startAt[e-1] <= latest {
					return fmt.Errorf("transaction %d starts before a transaction that completed before it was invoked commits", e-1)
				}
			case e < 0:
				latest = max(latest, commitAt[-e-1])
			}
		}
	}
	return nil
}

// verifySIEvents re-executes start and commit events: snapshot reads and
// first-committer-wins. A first pass checks that each transaction that runs starts
// once and then commits once; the keys are then re-executed in two independent halves
// (as verifySerial's), since it is memory-bound: a key's position and trace are a
// cache miss per operation.
func verifySIEvents(h *history.History, in *encode.Inference, events []siEvent, stop func() bool) error {
	const (
		notStarted = iota
		started
		committed
	)
	state := make([]uint8, len(h.Txns))
	startAt := make([]int32, len(h.Txns)) // the index of each transaction's start event
	for i, ev := range events {
		t := ev.Txn
		if t < 0 || int(t) >= len(h.Txns) {
			return fmt.Errorf("transaction %d out of range", t)
		}
		if h.Txns[t].Status == history.Fail {
			return fmt.Errorf("failed transaction %d runs", t)
		}
		switch {
		case !ev.Commit && state[t] != notStarted:
			return fmt.Errorf("transaction %d starts twice", t)
		case !ev.Commit:
			state[t] = started
			startAt[t] = int32(i)
		case state[t] != started:
			return fmt.Errorf("transaction %d commits without starting, or twice", t)
		default:
			state[t] = committed
		}
	}
	for t := range h.Txns {
		if h.Txns[t].Status == history.OK && state[t] != committed {
			return fmt.Errorf("committed transaction %d does not commit", t)
		}
		if state[t] == started {
			return fmt.Errorf("transaction %d starts but does not commit", t)
		}
	}
	return inHalves(func(part, parts int32, quit *atomic.Bool) error {
		return replaySnapshots(h, in, events, startAt, part, parts, quit)
	}, stop)
}

// replaySnapshots re-executes events, structurally checked, on the keys k with
// k % parts == part: each :ok read at its transaction's start sees the committed list
// plus the transaction's own earlier appends, value by value; each commit's appends
// match the trace where they land; and no key a transaction appends to was committed
// to by another after it started (first-committer-wins).
func replaySnapshots(h *history.History, in *encode.Inference, events []siEvent, startAt []int32, part, parts int32, quit *atomic.Bool) error {
	pos := make([]int32, len(in.Keys))
	// Per key, the index of the last commit event that appended to it, or -1.
	lastCommit := make([]int32, len(in.Keys))
	for k := range lastCommit {
		lastCommit[k] = -1
	}
	var own []int32
	for i, ev := range events {
		if i&(stopEvery-1) == 0 && quit.Load() {
			return errStopped
		}
		t := ev.Txn
		ops := h.TxnOps(int(t))
		if ev.Commit {
			for j := range ops {
				op := &ops[j]
				if op.Kind != history.Append || op.Key%parts != part {
					continue
				}
				if lastCommit[op.Key] > startAt[t] {
					return fmt.Errorf("transaction %d commits to a key another transaction committed to after it started", t)
				}
				L := in.Keys[op.Key].Trace
				if p := pos[op.Key]; p < int32(len(L)) && L[p] != op.Value {
					return fmt.Errorf("transaction %d appends at position %d a value other than the trace's", t, p)
				}
				pos[op.Key]++
			}
			for j := range ops {
				if op := &ops[j]; op.Kind == history.Append && op.Key%parts == part {
					lastCommit[op.Key] = int32(i)
				}
			}
			continue
		}
		if h.Txns[t].Status != history.OK {
			continue
		}
		for j := range ops {
			op := &ops[j]
			if op.Kind == history.Append || !op.Known || op.Key%parts != part {
				continue
			}
			// The snapshot's list, then t's own appends to the key so far.
			own = own[:0]
			for _, o := range ops[:j] {
				if o.Kind == history.Append && o.Key == op.Key {
					own = append(own, o.Value)
				}
			}
			L := in.Keys[op.Key].Trace
			vals := h.ReadList(op)
			base := pos[op.Key]
			if int32(len(vals)) != base+int32(len(own)) || base > int32(len(L)) {
				return fmt.Errorf("transaction %d reads %d values where its snapshot has %d and it appended %d", t, len(vals), base, len(own))
			}
			for j, v := range vals {
				if int32(j) < base && L[j] != v || int32(j) >= base && own[int32(j)-base] != v {
					return fmt.Errorf("transaction %d reads a value its snapshot does not have", t)
				}
			}
		}
	}
	return nil
}

// releaseKeys frees the keys t holds (it committed or was aborted) and wakes the
// transactions waiting for them.
func (s *siReplay) releaseKeys(t int32) {
	r := s.replay
	for _, op := range r.h.TxnOps(int(t)) {
		if op.Kind == history.Append && s.holder[op.Key] == t {
			s.holder[op.Key] = -1
			w := r.keyWait[op.Key]
			r.keyWait[op.Key] = -1
			r.wake(w)
		}
	}
}
