package check

import (
	"math/rand/v2"
	"slices"

	"doppel/encode"
	"doppel/history"
)

// searchSnapshot looks for a snapshot-isolated execution (start and commit events, as
// siSchedule's) by a backtracking search over its states, where the greedy snapshot
// replays got stuck on a wrong choice among writers of the same values: the snapshot
// counterpart of searchSerial.
//
// A state is the set of transactions started and the set committed; each key's
// position (its committed length) and holder (the started writer that has not
// committed: first-committer-wins lets no other writer of the key start before it
// commits) follow from them. A transaction may start when each of its reads sees its
// key's position (plus its own earlier appends) and each of its appends lands where
// the trace holds its value; its appends' positions are then fixed, since it holds
// their keys until it commits. Within that:
//   - a read-only transaction starts and commits at once, and so does a commit that
//     strands no reader (no transaction still to start reads the key at a position the
//     commit moves past): committing then is never worse than later, since the
//     committed writer's keys had no other use;
//   - a writer whose reads fix nothing starts only where its commit strands no reader
//     (its snapshot may as well be taken right before its commit);
//   - the choices are the writers that may start, tried in the order of their
//     intervals' midpoints, among the first snapshotSearchWindow transactions that must
//     run and have not started (a snapshot lags by a few commits, not by thousands);
//   - a state searched in full without success is remembered (a Zobrist hash of both
//     sets), and one where some (key, value) has fewer appends left than the trace's
//     positions still to fill is given up.
//
// A stale snapshot needs no rule of its own: its reader holds back the commits that
// would move its keys past what it read until it starts. The search only proves: it
// returns events for verifySI to check, or false when it found none within maxWork
// (or stop said so).
//
// With realtime, a transaction starts only once every transaction that completed before
// it was invoked committed (strong snapshot isolation, which most databases give): the
// choices are then the transactions in flight, and a writer far ahead of its time
// cannot take a position (on othergen's snapshot store with :info the search without
// the gates wandered among those).
func searchSnapshot(h *history.History, in *encode.Inference, commit []encode.Commit, gates snapGates, maxWork int64, stop func() bool) ([]siEvent, bool) {
	events, ok, _ := searchSnapshotWork(h, in, commit, gates, maxWork, stop)
	return events, ok
}

// searchSnapshotWork is searchSnapshot that also reports whether it ended on its work
// bound (not having searched every state, nor stopped).
func searchSnapshotWork(h *history.History, in *encode.Inference, commit []encode.Commit, gates snapGates, maxWork int64, stop func() bool) (events []siEvent, ok, outOfWork bool) {
	s := newSnapSearch(h, in, commit, gates)
	if s == nil {
		return nil, false, false
	}
	s.stop = stop
	if s.runs(maxWork) {
		return slices.Clone(s.events), true, false
	}
	return nil, false, s.aborted && !s.stopped && maxWork > 0 && s.work >= maxWork
}

// runs searches in runs of the depth-first search within maxWork (0: one exhaustive
// run); on success s.events is a complete execution.
func (s *snapSearch) runs(maxWork int64) bool {
	// Runs: after each that fails, the deepest state it reached names the writers that
	// took the positions a transaction stuck there needed (blameCandidates), and the
	// next run keeps one of them out of that position. A ban is kept when the run got
	// deeper; otherwise it is lifted (with the states remembered under it) and the next
	// candidate tried. A run stops once it got no deeper in snapshotStall units of
	// work (the last run, or one after which there is nothing to blame, does not);
	// all share maxWork. On othergen's stale snapshots at 10K (seed 3) the one
	// run got stuck 80 events below a wrong choice between two concurrent writers;
	// banning the one blamed, the second run went through.
	var cands [][3]int32
	next, deepest := 0, -1
	var last [3]int32
	for r := 0; ; r++ {
		s.aborted = false
		s.maxWork = maxWork
		s.best, s.low, s.bestWork = s.best[:0], 0, s.work
		if s.dfs() {
			return true
		}
		if !s.aborted || s.stopped || maxWork > 0 && s.work >= maxWork {
			return false
		}
		if r >= snapshotRuns-2 {
			s.stall = maxWork // the last run: no stall
		}
		if len(s.best) > deepest {
			deepest = len(s.best)
			cands, next = s.blameCandidates(), 0
		} else {
			delete(s.banned, last) // no deeper: lift it, try the next
			s.failed.clear()
		}
		for next < len(cands) {
			if _, ok := s.banned[cands[next]]; !ok {
				break
			}
			next++
		}
		if next == len(cands) {
			if s.stall >= maxWork {
				return false
			}
			// Nothing (more) to blame: a last run without the stall, on what work is
			// left (a stall is not always a dead end: on othergen's snapshot store
			// with :info at 7K the one run stalled past 2M units and then went through).
			s.stall = maxWork
			continue
		}
		last = cands[next]
		next++
		if s.banned == nil {
			s.banned = map[[3]int32]struct{}{}
		}
		s.banned[last] = struct{}{}
	}
}

// snapGates are the real-time gates searchSnapshot keeps.
type snapGates struct {
	on bool // a transaction starts once those that completed before its invoke committed
	// lag moves every gate back by this many history positions: a snapshot may lag its
	// invoke by that much (a replica's).
	lag int32
	// soft: a transaction whose gate is still closed may start where its reads fix its
	// snapshot (a snapshot older than its invoke), among the first snapshotClaimAhead
	// that must run past the first closed gate.
	soft bool
	// ahead (soft; 0: snapshotClaimAhead) is how many of those past the first closed
	// gate may start so and claim positions.
	ahead int
}

// snapshotGates are the relaxed gates searchSnapshot tries in turn where an execution
// need not keep real-time order (snapshot isolation): the gates keep the search near
// each transaction's interval, and a lagging snapshot needs them relaxed, by how much
// no one knows. On stale snapshots with :info transactions (doppel gen's and
// othergen's lagging stores, 10K and 2K) each alone left 4 or 5 of 19 histories
// unknown, and no history all three; without gates the search (trySI's, run before
// these) wandered among the :info transactions on all 19. None without durations.
func snapshotGates(h *history.History) []snapGates {
	var d []int32
	for i := range h.Txns {
		if tx := &h.Txns[i]; tx.Status == history.OK && tx.Invoke >= 0 && tx.Complete >= 0 {
			d = append(d, tx.Complete-tx.Invoke)
		}
	}
	if len(d) == 0 {
		return nil
	}
	slices.Sort(d)
	med := max(d[len(d)/2], 1)
	return []snapGates{{on: true, lag: 4 * med}, {on: true, soft: true}, {on: true, soft: true, lag: 2 * med},
		{on: true, soft: true, ahead: snapshotClaimFar}}
}

// relaxedGateWork: the relaxed gates (snapshotGates) search with this many times
// snapshotSearchWork. Where they find an execution it took up to 31M units at 10K
// (lagging snapshots with :info, doppel gen's and othergen's); where the history is
// not snapshot isolated their searches mostly run out of states long before the bound
// (0.1-1.5M units on a faulty store's intermediate reads at 10K, where the search
// without gates used its whole 20M).
const relaxedGateWork int64 = 4

// relaxedGateMoreWork: a relaxed gate whose search ran out of work searches again with
// this many times snapshotSearchWork, once every gate has failed. Lagging snapshots with
// 5% :info at 5K (doppel gen --stale 0.3 --stale-commits 30): the soft gates found 2
// of 4 unknowns with 8x, all 4 with 16x (0.9-2.2 s), where the solver found nothing in
// 60 s. Searches that run out of states (histories that are not snapshot isolated,
// mostly) never come back here.
var relaxedGateMoreWork int64 = 16 // a variable: tests set it to relaxedGateWork (no second search)

// snapshotStall: a run that got no deeper in this much work stops (searchSnapshot).
const snapshotStall = 2 << 20

// snapshotRuns is how many runs searchSnapshot makes at most.
const snapshotRuns = 16

// snapshotSearchWindow is how many transactions not started (in midpoint order, from
// the first) the search examines at a state.
const snapshotSearchWindow = 256

// snapshotClaimAhead is how many transactions that must run, past the first closed
// real-time gate, claim positions in dfs's walk.
const snapshotClaimAhead = 32

// snapshotClaimFar is the last relaxed gate's claim-ahead (snapGates.ahead): a
// snapshot that lags by more transactions than snapshotClaimAhead is past the soft
// gates' reach. othergen's snapshot store with 30% of the snapshots up to 50, 100 or
// 200 ms (5-20 mean durations) old, 5K, with and without 3% :info: 8 of 18 unknown at
// 10 s with the other gates, all decided with a reach of 128 or 512 (0.3-0.7 s); on
// the six slowest of 33 more such histories, 128 left 4 unknown, 256 left 2, 512
// none, 1024 none but up to twice slower. Last, since each node walks that far.
var snapshotClaimFar = 512 // a variable: tests set it to snapshotClaimAhead (no farther reach)

// snapshotSearchWork bounds searchSnapshot's work (transactions examined, started or
// committed).
func snapshotSearchWork(n int) int64 {
	return min(max(int64(n)*2_000, 1<<22), 64<<20)
}

// Transaction states of the snapshot search.
const (
	snapNotStarted = iota
	snapStarted
	snapCommitted
	snapSettled // never runs (failed, or not committed)
)

type snapSearch struct {
	h      *history.History
	commit []encode.Commit

	// Per key: its position, its trace's length, its first slot (positions 0..len of
	// the trace are slots base+position) and its holder (-1: none).
	pos, traceLen, base, holder []int32
	traceAt, slotClass          []int32 // per slot: the trace's value and its class (-1: past the trace)
	// pending counts, per slot, the reads of transactions that must run and have not
	// started, each at its snapshot's length.
	pending []int32
	// readersAt[readerStart[slot]:readerStart[slot+1]]: the transactions that must run
	// and read the slot's key at its position (their snapshot's length), once each.
	readerStart, readersAt []int32
	// Per (key, value) class: demand, the trace positions not yet taken; supply, the
	// appends of it by transactions not started that must or may run. opClass: per
	// micro-op, its append's class (-1: none).
	demand, supply, opClass []int32

	state  []uint8
	events []siEvent
	open   []int32 // started, not committed
	// mustLeft counts the transactions that must still commit: those that must run,
	// and the optional ones that started.
	mustLeft int

	prio       []int64
	zobS, zobC []uint64
	hash       uint64
	failed     stateSet
	// banned: (writer, key, position) kept out by blame; best, the events of the
	// deepest state of this run (best[:low] is also the current path's prefix).
	banned   map[[3]int32]struct{}
	best     []siEvent
	low      int
	bestWork int64 // the work when best last grew
	stall    int64 // snapshotStall, or a test's

	// candidates by prio; the ones not started as a doubly linked list over their
	// indices (index len(candidates): head and tail). Starts unlink, undoing them
	// relinks in reverse.
	candidates, next, prev, candAt []int32
	// blockKey, blockPos: per transaction, a key and the position at which it cannot
	// start (key -1: none); it depends on that key's position alone.
	blockKey, blockPos []int32

	// Real-time gates (realtime; nil otherwise): rtCompleted, the :ok transactions by
	// completion; rtGate[t], how many of them completed before t was invoked; rtRan,
	// how many of them committed in a row from the first; rtSaved, rtRan before each
	// commit (restored by uncommit). The candidates are sorted by gate first.
	rtCompleted, rtGate, rtSaved []int32
	rtRan                        int32
	infoHorizon                  int32
	// soft (snapGates): stale collects dfs's choices past closed gates; fixedNow,
	// whether a read fixed the snapshot of startable's last transaction.
	soft     bool
	fixedNow bool
	stale    []int32
	// claimAhead: snapGates.ahead, or snapshotClaimAhead.
	claimAhead int

	local, stamp []int32
	epoch        int32
	choices      []int32
	// claimAt[k] == claimEpoch: a transaction that must run and has not started, met
	// so far in dfs's walk, appends the value next in k's trace as its first append to
	// k; deferred is the walk's scratch.
	claimAt    []int32
	claimEpoch int32
	deferred   []int32

	work, maxWork, nextStop int64
	nodes                   int
	stop                    func() bool
	aborted, stopped        bool
}

func newSnapSearch(h *history.History, in *encode.Inference, commit []encode.Commit, gates snapGates) *snapSearch {
	n := int32(len(h.Txns))
	nk := len(in.Keys)
	s := &snapSearch{h: h, commit: commit,
		pos: make([]int32, nk), traceLen: make([]int32, nk), base: make([]int32, nk), holder: make([]int32, nk),
		local: make([]int32, nk), stamp: make([]int32, nk), claimAt: make([]int32, nk),
		state: make([]uint8, n), prio: make([]int64, n), zobS: make([]uint64, n), zobC: make([]uint64, n),
		blockKey: make([]int32, n), blockPos: make([]int32, n), candAt: make([]int32, n),
		stall: snapshotStall, claimAhead: snapshotClaimAhead,
	}
	if gates.ahead > 0 {
		s.claimAhead = gates.ahead
	}
	classOf := map[uint64]int32{}
	slots := int32(0)
	for k := range in.Keys {
		s.base[k], s.traceLen[k], s.holder[k] = slots, int32(len(in.Keys[k].Trace)), -1
		slots += s.traceLen[k] + 1
	}
	s.traceAt, s.slotClass, s.pending = make([]int32, slots), make([]int32, slots), make([]int32, slots)
	s.readerStart = make([]int32, slots+1)
	var readerSlots []int32 // (slot, transaction) pairs
	for k := range in.Keys {
		for p, v := range in.Keys[k].Trace {
			c, ok := classOf[uint64(k)<<32|uint64(uint32(v))]
			if !ok {
				c = int32(len(s.demand))
				classOf[uint64(k)<<32|uint64(uint32(v))] = c
				s.demand = append(s.demand, 0)
			}
			s.traceAt[s.base[k]+int32(p)], s.slotClass[s.base[k]+int32(p)] = v, c
			s.demand[c]++
		}
		s.traceAt[s.base[k]+s.traceLen[k]], s.slotClass[s.base[k]+s.traceLen[k]] = -1, -1
	}
	s.supply = make([]int32, len(s.demand))
	s.opClass = make([]int32, len(h.Ops))
	rng := rand.New(rand.NewPCG(3, 4))
	horizon := infoHorizonOf(h)
	for t := int32(0); t < n; t++ {
		s.zobS[t], s.zobC[t] = rng.Uint64(), rng.Uint64()
		s.blockKey[t], s.candAt[t] = -1, -1
		tx := &h.Txns[t]
		s.prio[t] = s.midpoint(t, int64(horizon))
		if commit[t] == encode.NotCommitted || tx.Status == history.Fail {
			s.state[t] = snapSettled
			continue
		}
		s.epoch++
		inside := false
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			s.opClass[i] = -1
			k := op.Key
			if s.stamp[k] != s.epoch {
				s.stamp[k], s.local[k] = s.epoch, 0
			}
			if op.Kind == history.Append {
				s.local[k]++
				if c, ok := classOf[uint64(k)<<32|uint64(uint32(op.Value))]; ok {
					s.opClass[i] = c
					s.supply[c]++
					inside = true
				}
				continue
			}
			if !s.reads(t) || !op.Known {
				continue
			}
			b := op.End - op.Start - s.local[k]
			if b < 0 || b > s.traceLen[k] {
				return nil // never readable: leave it to the solver
			}
			s.pending[s.base[k]+b]++
			readerSlots = append(readerSlots, s.base[k]+b, t)
		}
		if commit[t] == encode.Committed || inside {
			s.candidates = append(s.candidates, t)
			if commit[t] == encode.Committed {
				s.mustLeft++
			}
		} else {
			s.state[t] = snapSettled // an optional one that fills no position never needs to run
		}
	}
	for c := range s.demand {
		if s.supply[c] < s.demand[c] {
			return nil
		}
	}
	for i := 0; i < len(readerSlots); i += 2 {
		s.readerStart[readerSlots[i]+1]++
	}
	for i := int32(0); i < slots; i++ {
		s.readerStart[i+1] += s.readerStart[i]
	}
	s.readersAt = make([]int32, len(readerSlots)/2)
	fill := slices.Clone(s.readerStart[:slots])
	for i := 0; i < len(readerSlots); i += 2 {
		slot, t := readerSlots[i], readerSlots[i+1]
		if f := fill[slot]; f > s.readerStart[slot] && s.readersAt[f-1] == t {
			continue // the same transaction's second read there
		}
		s.readersAt[fill[slot]] = t
		fill[slot]++
	}
	for i := int32(0); i < slots; i++ {
		for j := fill[i]; j < s.readerStart[i+1]; j++ {
			s.readersAt[j] = -1 // room left by a repeated read
		}
	}
	if gates.on {
		p := &encode.Problem{In: in, Commit: commit}
		s.rtCompleted, s.rtGate = p.RealtimeGates()
		if gates.lag > 0 {
			s.lagGates(gates.lag)
		}
		s.infoHorizon = horizon + gates.lag
		s.soft = gates.soft
	}
	slices.SortFunc(s.candidates, func(a, b int32) int {
		if ga, gb := s.gate(a), s.gate(b); ga != gb {
			return int(ga - gb)
		}
		if s.prio[a] != s.prio[b] {
			if s.prio[a] < s.prio[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	m := int32(len(s.candidates))
	s.next, s.prev = make([]int32, m+1), make([]int32, m+1)
	for i := int32(0); i <= m; i++ {
		s.next[i], s.prev[i] = (i+1)%(m+1), (i+m)%(m+1)
		if i < m {
			s.candAt[s.candidates[i]] = i
		}
	}
	return s
}

// midpoint estimates when t took effect: the middle of its interval, and for one
// without a completion (:info) its invoke plus half the longest :ok duration.
func (s *snapSearch) midpoint(t int32, horizon int64) int64 {
	tx := &s.h.Txns[t]
	inv := int64(tx.Invoke)
	switch {
	case tx.Complete >= 0 && inv < 0:
		return 2 * int64(tx.Complete)
	case tx.Complete >= 0:
		return inv + int64(tx.Complete)
	}
	return 2*inv + horizon
}

// reads reports whether t's reads constrain it (it must run and completed :ok).
func (s *snapSearch) reads(t int32) bool {
	return s.commit[t] == encode.Committed && s.h.Txns[t].Status == history.OK
}

// Kinds of starts.
const (
	startNo     = iota // may not start now
	startFree          // no choice: start at once
	startChoice        // appends inside a trace: a choice
)

// pastHorizon reports, with real-time gates, whether the optional t's horizon passed:
// the last transaction that completed and committed in a row completed more than the
// longest :ok duration after t's invoke (as searchStrict's limitInfo).
func (s *snapSearch) pastHorizon(t int32) bool {
	if s.rtGate == nil || s.rtRan == 0 || s.infoHorizon <= 0 {
		return false
	}
	inv := s.h.Txns[t].Invoke
	return inv >= 0 && s.h.Txns[s.rtCompleted[s.rtRan-1]].Complete-inv > s.infoHorizon
}

// lagGates moves every gate back by lag history positions: t may start once every
// transaction that completed lag positions before its invoke committed (a snapshot
// that lags, as a replica's, by at most that much).
func (s *snapSearch) lagGates(lag int32) {
	at := make([]int32, len(s.rtCompleted))
	for i, t := range s.rtCompleted {
		at[i] = s.h.Txns[t].Complete
	}
	for t := range s.rtGate {
		if inv := s.h.Txns[t].Invoke; inv >= 0 && s.commit[t] != encode.NotCommitted {
			i, _ := slices.BinarySearch(at, inv-lag)
			s.rtGate[t] = int32(i)
		}
	}
}

// gate is how many of rtCompleted must have committed before t may start (0 without
// gates).
func (s *snapSearch) gate(t int32) int32 {
	if s.rtGate == nil {
		return 0
	}
	return s.rtGate[t]
}

// closed reports whether t's gate is closed; the candidates after it are closed too.
func (s *snapSearch) closed(t int32) bool {
	return s.rtGate != nil && s.rtGate[t] > s.rtRan
}

// startable says whether t may start in the current state, and how.
func (s *snapSearch) startable(t int32) int {
	if k := s.blockKey[t]; k >= 0 && s.pos[k] == s.blockPos[t] {
		return startNo
	}
	h := s.h
	tx := &h.Txns[t]
	reads := s.reads(t)
	s.epoch++
	inside, writes, fixed := false, false, false // fixed: a read fixes its snapshot
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		op := &h.Ops[i]
		k := op.Key
		if s.stamp[k] != s.epoch {
			s.stamp[k], s.local[k] = s.epoch, s.pos[k]
		}
		at := s.local[k]
		if op.Kind == history.Append {
			if s.holder[k] >= 0 {
				return startNo // not noted: the holder's start may be undone without k moving
			}
			if at < s.traceLen[k] {
				if s.traceAt[s.base[k]+at] != op.Value {
					s.blockKey[t], s.blockPos[t] = k, s.pos[k]
					return startNo
				}
				if at == s.pos[k] && s.banned != nil {
					if _, no := s.banned[[3]int32{t, k, at}]; no {
						return startNo
					}
				}
				inside = true
			}
			if at > s.pos[k] && at <= s.traceLen[k] && s.pending[s.base[k]+at] > 0 {
				// A reader still to start sees k with at values, inside t's block here:
				// no state ever has that length. (Not noted: it depends on the reader.)
				return startNo
			}
			writes = true
			s.local[k] = at + 1
			continue
		}
		if reads && op.Known {
			if op.End-op.Start != at {
				s.blockKey[t], s.blockPos[t] = k, s.pos[k]
				return startNo
			}
			fixed = true
		}
	}
	s.fixedNow = fixed
	switch {
	case !writes:
		return startFree
	case !inside && s.commit[t] != encode.Committed:
		return startNo // an optional one fills nothing here
	case s.commit[t] != encode.Committed && s.pastHorizon(t):
		return startNo
	case s.waitsFor(t):
		return startNo
	case !fixed && (s.closed(t) || !s.safeCommit(t)):
		// Nothing it reads fixes its snapshot, so it may as well start right before its
		// commit: it waits until that strands no reader, and holds no key meanwhile (an
		// :info transaction that held a key kept its readers, which waited for other
		// keys, from ever starting).
		return startNo
	}
	// A writer is a choice even where its appends all land past the traces: holding its
	// keys from now may keep out a writer that must start first.
	return startChoice
}

// waitsFor reports whether the writer t, started now, would leave a transaction that
// must run unable to: one that reads a key t appends to at its position (t's commit
// strands it) and appends to one of them too (t's hold keeps it out until then).
func (s *snapSearch) waitsFor(t int32) bool {
	for _, op := range s.h.TxnOps(int(t)) {
		if op.Kind != history.Append {
			continue
		}
		slot := s.base[op.Key] + min(s.pos[op.Key], s.traceLen[op.Key])
		if s.pos[op.Key] > s.traceLen[op.Key] || s.pending[slot] == 0 {
			continue
		}
		for _, r := range s.readersAt[s.readerStart[slot]:s.readerStart[slot+1]] {
			if r >= 0 && r != t && s.state[r] == snapNotStarted && s.appendsToAny(r, t) {
				return true
			}
		}
	}
	return false
}

// appendsToAny reports whether r appends to a key t appends to.
func (s *snapSearch) appendsToAny(r, t int32) bool {
	for _, a := range s.h.TxnOps(int(r)) {
		if a.Kind != history.Append {
			continue
		}
		for _, b := range s.h.TxnOps(int(t)) {
			if b.Kind == history.Append && b.Key == a.Key {
				return true
			}
		}
	}
	return false
}

// start starts t (startable said it may); it reports false when some value can no
// longer fill its trace positions (t is then still started: undo it).
func (s *snapSearch) start(t int32) bool {
	ok := s.take(t, -1, t)
	s.work++
	s.state[t] = snapStarted
	s.events = append(s.events, siEvent{Txn: t})
	s.hash ^= s.zobS[t]
	s.open = append(s.open, t)
	if i := s.candAt[t]; i >= 0 {
		s.next[s.prev[i]], s.prev[s.next[i]] = s.next[i], s.prev[i]
	}
	if s.commit[t] != encode.Committed {
		s.mustLeft++ // an optional one that started must commit
	}
	return ok
}

// unstart reverts start(t).
func (s *snapSearch) unstart(t int32) {
	if s.commit[t] != encode.Committed {
		s.mustLeft--
	}
	if i := s.candAt[t]; i >= 0 {
		s.next[s.prev[i]], s.prev[s.next[i]] = i, i
	}
	s.removeOpen(t)
	s.hash ^= s.zobS[t]
	s.state[t] = snapNotStarted
	s.take(t, 1, -1)
}

// take accounts for t's start (d = -1, holder t) or its undoing (d = 1, holder -1): the
// trace positions its appends take (demand), its appends (supply), the keys it holds,
// and its reads at its snapshot (pending: before its own appends). It reports whether
// every value it appends can still fill its trace positions.
func (s *snapSearch) take(t, d, holder int32) bool {
	h := s.h
	tx := &h.Txns[t]
	reads := s.reads(t)
	ok := true
	s.epoch++
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		op := &h.Ops[i]
		k := op.Key
		if s.stamp[k] != s.epoch {
			s.stamp[k], s.local[k] = s.epoch, s.pos[k]
		}
		if op.Kind == history.Append {
			if p := s.local[k]; p < s.traceLen[k] {
				s.demand[s.slotClass[s.base[k]+p]] += d
			}
			if c := s.opClass[i]; c >= 0 {
				s.supply[c] += d
				ok = ok && s.supply[c] >= s.demand[c]
			}
			s.holder[k] = holder
			s.local[k]++
			continue
		}
		if reads && op.Known {
			s.pending[s.base[k]+s.pos[k]] += d
		}
	}
	return ok
}

// removeOpen takes t out of open.
func (s *snapSearch) removeOpen(t int32) {
	for i := len(s.open) - 1; i >= 0; i-- {
		if s.open[i] == t {
			s.open[i] = s.open[len(s.open)-1]
			s.open = s.open[:len(s.open)-1]
			return
		}
	}
}

// safeCommit reports whether committing the started t strands no reader: no
// transaction still to start reads one of t's keys at a position t's appends move it
// past.
func (s *snapSearch) safeCommit(t int32) bool {
	h := s.h
	tx := &h.Txns[t]
	s.epoch++
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		op := &h.Ops[i]
		if op.Kind != history.Append {
			continue
		}
		k := op.Key
		if s.stamp[k] != s.epoch {
			s.stamp[k], s.local[k] = s.epoch, s.pos[k]
		}
		if p := s.local[k]; p <= s.traceLen[k] && s.pending[s.base[k]+p] > 0 {
			return false
		}
		s.local[k]++
	}
	return true
}

// commitTxn commits the started t.
func (s *snapSearch) commitTxn(t int32) {
	h := s.h
	tx := &h.Txns[t]
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		if op := &h.Ops[i]; op.Kind == history.Append {
			s.pos[op.Key]++
			s.holder[op.Key] = -1
		}
	}
	s.work++
	s.state[t] = snapCommitted
	if s.rtGate != nil {
		s.rtSaved = append(s.rtSaved, s.rtRan)
		for s.rtRan < int32(len(s.rtCompleted)) && s.state[s.rtCompleted[s.rtRan]] == snapCommitted {
			s.rtRan++
		}
	}
	s.events = append(s.events, siEvent{Txn: t, Commit: true})
	s.hash ^= s.zobC[t]
	s.removeOpen(t)
	s.mustLeft--
}

// uncommit reverts commitTxn(t).
func (s *snapSearch) uncommit(t int32) {
	h := s.h
	tx := &h.Txns[t]
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		if op := &h.Ops[i]; op.Kind == history.Append {
			s.pos[op.Key]--
			s.holder[op.Key] = t
		}
	}
	s.state[t] = snapStarted
	if s.rtGate != nil {
		s.rtRan = s.rtSaved[len(s.rtSaved)-1]
		s.rtSaved = s.rtSaved[:len(s.rtSaved)-1]
	}
	s.hash ^= s.zobC[t]
	s.open = append(s.open, t)
	s.mustLeft++
}

// undoTo reverts events until mark of them are left.
func (s *snapSearch) undoTo(mark int) {
	s.low = min(s.low, mark)
	for len(s.events) > mark {
		ev := s.events[len(s.events)-1]
		s.events = s.events[:len(s.events)-1]
		if ev.Commit {
			s.uncommit(ev.Txn)
		} else {
			s.unstart(ev.Txn)
		}
	}
}

// settle runs what needs no choice until none is left: safe commits, and starts of
// read-only transactions (their commits follow). It reports false when a start left
// some value unable to fill its positions.
func (s *snapSearch) settle() bool {
	end := int32(len(s.candidates))
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(s.open); {
			if t := s.open[i]; s.safeCommit(t) {
				s.commitTxn(t) // takes t out of open: look at index i again
				changed = true
				continue
			}
			i++
		}
		seen, ahead := 0, 0
		for i := s.next[end]; i != end && seen < snapshotSearchWindow; {
			t := s.candidates[i]
			if s.closed(t) {
				if !s.soft || ahead >= s.claimAhead {
					break // sorted by gate: the rest are closed too
				}
				i = s.next[i]
				if s.commit[t] != encode.Committed {
					continue
				}
				ahead++
				if s.startable(t) != startFree || !s.fixedNow {
					continue
				}
				if !s.start(t) {
					return false
				}
				changed = true
				continue
			}
			i = s.next[i] // before start unlinks t
			s.work++
			if s.commit[t] != encode.Committed {
				continue // never free (startable); nor counted in the window, see dfs
			}
			seen++
			if s.startable(t) != startFree {
				continue
			}
			if !s.start(t) {
				return false
			}
			changed = true
		}
	}
	return true
}

// done reports whether every transaction that must commit did, and every trace is
// filled.
func (s *snapSearch) done() bool {
	if s.mustLeft > 0 {
		return false
	}
	for k := range s.pos {
		if s.pos[k] < s.traceLen[k] {
			return false
		}
	}
	return true
}

// dfs searches from the current state; on success s.events is a complete execution.
func (s *snapSearch) dfs() bool {
	mark := len(s.events)
	entry := s.hash
	if s.failed.has(entry) {
		return false
	}
	if !s.settle() {
		s.undoTo(mark)
		s.failed.add(entry)
		return false
	}
	if s.failed.has(s.hash) {
		s.undoTo(mark)
		s.failed.add(entry)
		return false
	}
	s.nodes++
	if len(s.events) > len(s.best) {
		s.best = append(s.best[:min(s.low, len(s.best))], s.events[min(s.low, len(s.best)):]...)
		s.low, s.bestWork = len(s.events), s.work
	}
	if s.stop != nil && (s.nodes%256 == 1 || s.work >= s.nextStop) {
		s.nextStop = s.work + stopEveryWork
		s.stopped = s.stop()
	}
	if s.maxWork > 0 && (s.work > s.maxWork || s.work-s.bestWork > s.stall) || s.stopped {
		s.aborted = true
	}
	if s.done() {
		return true
	}

	// The choices, in the order of their midpoints (the candidates' order).
	first := len(s.choices)
	end := int32(len(s.candidates))
	seen := 0
	s.claimEpoch++
	s.deferred = s.deferred[:0]
	s.stale = s.stale[:0]
	ahead := 0 // must-run transactions past the first closed gate, looked at for claims
	for i := s.next[end]; i != end && seen < snapshotSearchWindow; i = s.next[i] {
		s.work++
		t := s.candidates[i]
		if s.closed(t) {
			// Those whose gates open soon claim positions too: an optional one that
			// never committed took the position of a writer that must run whose gate
			// was still closed (othergen's snapshot store with :info, 20K).
			if s.commit[t] == encode.Committed {
				if ahead++; ahead > s.claimAhead {
					break
				}
				if s.soft && s.startable(t) == startChoice {
					s.stale = append(s.stale, t) // tried last
				}
				s.claim(t, s.claimAt)
			}
			continue
		}
		must := s.commit[t] == encode.Committed
		// Only those that must run count in the window: optional ones that never start
		// (decoys, or never committed) stay first in the list, and at 20K transactions
		// with 5% :info they filled it.
		if must {
			seen++
		} else if s.pastHorizon(t) {
			continue
		}
		switch {
		case s.startable(t) != startChoice:
		case s.claimed(t, s.claimAt):
			s.deferred = append(s.deferred, t)
		default:
			s.choices = append(s.choices, t)
		}
		if must {
			s.claim(t, s.claimAt)
		}
	}
	// Deferred to the end, in this order:
	//   - choices that take a position a transaction that must run, earlier by its
	//     midpoint and not started, could take next (it waits for another key: on
	//     othergen's snapshot store a write-only transaction far ahead of its time took
	//     it, and the search found out hundreds of events below);
	//   - optional ones that take a position a transaction that must run could take, one
	//     met anywhere in the walk (a decoy that never committed but fits takes a
	//     position a writer that must run needs).
	// An optional one nothing contests stays in its place: a committed :info transaction
	// is often the only writer of a position.
	kept := first
	for _, t := range s.choices[first:] {
		if s.commit[t] != encode.Committed && s.claimed(t, s.claimAt) {
			s.deferred = append(s.deferred, t)
			continue
		}
		s.choices[kept] = t
		kept++
	}
	s.choices = s.choices[:kept]
	slices.SortStableFunc(s.deferred, func(a, b int32) int {
		return cmpBool(s.commit[a] != encode.Committed, s.commit[b] != encode.Committed)
	})
	s.choices = append(s.choices, s.deferred...)
	s.choices = append(s.choices, s.stale...)
	for i := first; i < len(s.choices) && !s.aborted; i++ {
		t := s.choices[i]
		s.work++
		if s.failed.has(s.hash ^ s.zobS[t]) {
			continue
		}
		at := len(s.events)
		if s.start(t) && s.dfs() {
			return true
		}
		s.undoTo(at)
	}
	s.choices = s.choices[:first]
	if !s.aborted {
		s.failed.add(s.hash)
	}
	s.undoTo(mark)
	if !s.aborted {
		s.failed.add(entry)
	}
	return false
}

// claim marks in at the keys whose next trace position t's first append to them fits.
func (s *snapSearch) claim(t int32, at []int32) {
	s.epoch++
	for _, op := range s.h.TxnOps(int(t)) {
		k := op.Key
		if op.Kind != history.Append || s.stamp[k] == s.epoch {
			continue
		}
		s.stamp[k] = s.epoch
		if p := s.pos[k]; p < s.traceLen[k] && s.traceAt[s.base[k]+p] == op.Value {
			at[k] = s.claimEpoch
		}
	}
}

// claimed reports whether t's first append to some key takes a position marked in at
// (claim).
func (s *snapSearch) claimed(t int32, at []int32) bool {
	s.epoch++
	for _, op := range s.h.TxnOps(int(t)) {
		k := op.Key
		if op.Kind != history.Append || s.stamp[k] == s.epoch {
			continue
		}
		s.stamp[k] = s.epoch
		if s.pos[k] < s.traceLen[k] && at[k] == s.claimEpoch {
			return true
		}
	}
	return false
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// blameCandidates goes back to the deepest state of the last run and looks at the
// first transactions there that must run and cannot start: where one's block on a key
// does not fit at the key's position (its values, or a read still to start inside it),
// the nearest earlier position where it would have fit went to another writer, mostly
// the wrong one of two concurrent writers of the same values, a choice the search
// could not get back to (the subtree between was too big). It returns those (writer,
// key, position of its block), the first stuck transaction's first; the search is left
// in its first state.
func (s *snapSearch) blameCandidates() [][3]int32 {
	for _, ev := range s.best {
		if ev.Commit {
			s.commitTxn(ev.Txn)
		} else {
			s.start(ev.Txn)
		}
	}
	// writerAt[k][p]: who took position p of k on the way.
	writerAt := make([][]int32, len(s.pos))
	for _, ev := range s.best {
		if !ev.Commit {
			continue
		}
		for _, op := range s.h.TxnOps(int(ev.Txn)) {
			if op.Kind == history.Append {
				writerAt[op.Key] = append(writerAt[op.Key], ev.Txn)
			}
		}
	}
	var out [][3]int32
	end := int32(len(s.candidates))
	looked := 0
	for i := s.next[end]; i != end && looked < snapshotBlameLook; i = s.next[i] {
		u := s.candidates[i]
		if s.commit[u] != encode.Committed || s.closed(u) {
			continue
		}
		looked++
		if s.startable(u) != startNo {
			continue
		}
		for _, k := range s.txnKeys(u) {
			vals := s.appendsTo(u, k)
			if len(vals) == 0 || s.fits(k, s.pos[k], vals) {
				continue
			}
			for p := s.pos[k] - 1; p >= max(0, s.pos[k]-snapshotBlameBack); p-- {
				if !s.fits(k, p, vals) {
					continue
				}
				if w := writerAt[k][p]; w != u {
					start := p // where w's block begins: the position its start took
					for start > 0 && writerAt[k][start-1] == w {
						start--
					}
					if b := [3]int32{w, k, start}; !slices.Contains(out, b) {
						out = append(out, b)
					}
				}
				break
			}
		}
	}
	s.undoTo(0)
	return out
}

// snapshotBlameLook: how many of the first transactions not started blame looks at;
// snapshotBlameBack: how far back on a key it looks for a position that fitted.
const (
	snapshotBlameLook = 16
	snapshotBlameBack = 64
)

// txnKeys lists the keys t appends to, once each.
func (s *snapSearch) txnKeys(t int32) []int32 {
	var ks []int32
	for _, op := range s.h.TxnOps(int(t)) {
		if op.Kind == history.Append && !slices.Contains(ks, op.Key) {
			ks = append(ks, op.Key)
		}
	}
	return ks
}

// appendsTo lists the values t appends to k, in order.
func (s *snapSearch) appendsTo(t, k int32) []int32 {
	var vs []int32
	for _, op := range s.h.TxnOps(int(t)) {
		if op.Kind == history.Append && op.Key == k {
			vs = append(vs, op.Value)
		}
	}
	return vs
}

// fits reports whether a block of vals fits k's trace at position p, with no read of
// a transaction still to start inside it.
func (s *snapSearch) fits(k, p int32, vals []int32) bool {
	for j, v := range vals {
		q := p + int32(j)
		if q >= s.traceLen[k] {
			return true // past the trace: any value
		}
		if s.traceAt[s.base[k]+q] != v || j > 0 && s.pending[s.base[k]+q] > 0 {
			return false
		}
	}
	return true
}
