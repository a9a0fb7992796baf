package check

import (
	"math"
	"math/rand/v2"
	"slices"

	"doppel/encode"
	"doppel/history"
)

// searchSerial looks for a serial order of the history without order constraints by
// a backtracking search over the states of a serial execution, where the greedy
// replays (schedule, its repairs) got stuck on a wrong choice among writers of the
// same values.
//
// A state is the set of transactions run; each key's position (its installed length)
// follows from it. A transaction may run when each of its reads sees exactly its key's
// position (plus its own earlier appends) and each of its appends matches the trace
// where it lands inside it. Advancing key k past position L leaves every reader of k
// at length L not yet run unable to ever run, so an append is taken only once those
// readers ran ("strands"). Within that:
//   - a read-only transaction that may run runs at once (it changes no position), and
//     so does one whose appends all land past their traces (no reader is left there);
//   - the choices are the transactions appending inside a trace; they are tried in
//     the order of their intervals' midpoints (the greedy replay's first), and every
//     state fully searched without success is remembered (a Zobrist hash of the set
//     run), so reaching it again by another interleaving costs nothing;
//   - a state is given up when some (key, value) has fewer appends left (by
//     transactions that must or may run) than the trace's positions still to fill.
//
// Transactions that must run (encode.Committed), may (MayCommit: :info ones, run only
// to fill a trace position) or must not (NotCommitted) as for schedule. The search
// only proves: it returns an order for verifySerial to check, or false when it did
// not find one within maxNodes choice points (or stop said so) — an exhausted search
// is not a proof of anything here (the hash may collide), so the solver decides then.
func searchSerial(h *history.History, in *encode.Inference, commit []encode.Commit, maxNodes int, stop func() bool) ([]int32, bool) {
	s := newSerialSearch(h, in, commit)
	if s == nil {
		return nil, false
	}
	s.stop = stop
	s.indexEntries()
	s.link()
	if s.run(maxNodes) {
		return slices.Clone(s.order), true
	}
	return nil, false
}

// searchStrict is searchSerial under real-time order: a transaction may run only once
// every transaction that completed before it was invoked ran (encode.RealtimeGates),
// for a strict-serializable order where the replay guided by real time got stuck.
// On write-heavy hot keys (~30 transactions in flight, a few concurrent writers of
// each value per key) the greedy replay takes a wrong writer within the first few
// dozen steps; the gates keep the choices at each node to the transactions in flight,
// so the search undoes that choice a few nodes later. A node walks only the frontier
// (the candidates not run whose gate is open: see link), not every candidate: ~1.5 µs
// on the hot-key family at 2K and 10K alike, against ~35 µs and ~150 µs when it
// scanned all (which capped 10K at 10K nodes; it needs 87K-146K). The precedence
// check (ordered) is left out: it costs a graph linear in n per node (~10 ms at 2K).
// maxWork bounds serialSearch.work, not nodes. It only proves: the order counts
// after verifySerial with process and real-time order.
func searchStrict(h *history.History, in *encode.Inference, commit []encode.Commit, win *encode.Windows, maxWork int64, stop func() bool) ([]int32, bool) {
	s := newStrictSearch(h, in, commit, win, stop)
	if s == nil {
		return nil, false
	}
	if s.resume(maxWork) {
		return slices.Clone(s.order), true
	}
	return nil, false
}

// newStrictSearch sets up searchStrict's search without running it (resume runs it);
// nil when there is nothing to search (no matching within win).
func newStrictSearch(h *history.History, in *encode.Inference, commit []encode.Commit, win *encode.Windows, stop func() bool) *serialSearch {
	s := newSerialSearch(h, in, commit)
	if s == nil {
		return nil
	}
	s.setWindows(win)
	if s.noMatching {
		return nil
	}
	s.stop = stop
	s.noOrdered = true
	s.gateRealtime()
	s.link()
	s.maxNodes = math.MaxInt
	return s
}

// resume runs the search for more units of work (see work; 0: no bound) and reports
// whether it found an order (s.order). Its first call starts it; a later one, after a
// search that ran out of work (outOfWork), continues it: the search starts again from
// the first state, and the memo (failed) skips every state already searched in full,
// so it walks back down to where it stopped at the cost of that path's nodes alone.
// That lets the strict search take turns with the solver (checker.resumeStrict)
// without starting over.
func (s *serialSearch) resume(more int64) bool {
	s.aborted, s.stopped = false, false
	s.maxWork = 0 // no bound
	if more > 0 {
		s.maxWork = s.work + more
	}
	return s.dfs()
}

// outOfWork reports whether the last run (resume) ended on its work bound alone: only
// then is it worth continuing. Otherwise it found an order, was stopped, or searched
// every state (which proves nothing: the memo's hash may collide).
func (s *serialSearch) outOfWork() bool {
	return s.aborted && !s.stopped
}

// gateRealtime sets up the real-time gates: rtCompleted, the :ok transactions by
// completion; rtGate, per transaction, how many of them completed before its invoke.
func (s *serialSearch) gateRealtime() {
	p := &encode.Problem{In: s.in, Commit: s.commit}
	s.rtCompleted, s.rtGate = p.RealtimeGates()
	// Process order (real-time order implies it only where invokes are known): per
	// transaction, the nearest committed one before it in its process, and for an
	// optional one, the nearest committed one after it (which must not have run when
	// it runs). Optional ones between are skipped: they may not run at all.
	h := s.h
	ids := make([]int32, 0, s.n)
	for t := range h.Txns {
		if h.Txns[t].Process >= 0 && s.commit[t] != encode.NotCommitted {
			ids = append(ids, int32(t))
		}
	}
	encode.SortProcessOrder(h, ids)
	s.procBefore = make([]int32, s.n)
	s.procAfter = make([]int32, s.n)
	for i := range s.procBefore {
		s.procBefore[i], s.procAfter[i] = -1, -1
	}
	for i := 0; i < len(ids); {
		j := i
		for j < len(ids) && h.Txns[ids[j]].Process == h.Txns[ids[i]].Process {
			j++
		}
		last := int32(-1)
		for _, t := range ids[i:j] {
			s.procBefore[t] = last
			if s.commit[t] == encode.Committed {
				last = t
			}
		}
		next := int32(-1)
		for k := j - 1; k >= i; k-- {
			t := ids[k]
			if s.commit[t] != encode.Committed {
				s.procAfter[t] = next
			} else {
				next = t
			}
		}
		i = j
	}
}

// limitInfo confines the optional (:info) transactions to their horizon: each may
// run only while the real-time frontier lies within the longest :ok transaction's
// duration (in client events) of its invoke, as if it had taken effect no later than
// an :ok one could have. It reports whether that changes anything (there are optional
// candidates and real-time gates).
//
// Why: an :info transaction that never committed but fits the traces (a decoy) is a
// choice at every state where it fits, and with values 1..3 nearly every one fits
// nearly everywhere, so each multiplies the subtrees of the search's dead ends. On
// write-heavy hot keys with 2% :info at 10K the search found no order in 100 CPU-s;
// without the decoys (an oracle: the generator's never-committed ones made :fail) it
// found one in 0.2 s. The horizon leaves each decoy a choice only around its own
// time, where the order that committed it would have placed it. It can cut every order
// of a history whose :info transactions took effect later than that (real
// databases may commit one long after the client gave up), so the search within the
// horizon comes first and the one without it after (searchStrictWithin).
func (s *serialSearch) limitInfo() bool {
	if s.rtGate == nil {
		return false
	}
	if !s.optionalCandidates() {
		return false
	}
	s.infoHorizon = infoHorizonOf(s.h)
	if s.infoHorizon <= 0 {
		return false
	}
	for _, t := range s.candidates {
		if s.commit[t] != encode.Committed && s.h.Txns[t].Invoke >= 0 {
			s.infoByInvoke = append(s.infoByInvoke, t)
		}
	}
	slices.SortFunc(s.infoByInvoke, func(a, b int32) int { return int(s.h.Txns[a].Invoke - s.h.Txns[b].Invoke) })
	return true
}

// cutPastHorizon unlinks, once the frontier moved on, the optional transactions not
// run whose horizon it passed: they stay past it below this state, and the walks
// over the frontier would otherwise pass every decoy invoked so far (hot keys with
// 2% :info: a hundred at the end of 10K, against ~30 transactions in flight). They
// go on a stack that undo relinks from (uncutPastHorizon).
func (s *serialSearch) cutPastHorizon() {
	s.infoCutSaved = append(s.infoCutSaved, s.infoCut, int32(len(s.infoHidden)))
	if s.rtRan == 0 {
		return
	}
	frontier := s.h.Txns[s.rtCompleted[s.rtRan-1]].Complete
	for s.infoCut < int32(len(s.infoByInvoke)) {
		t := s.infoByInvoke[s.infoCut]
		if frontier-s.h.Txns[t].Invoke <= s.infoHorizon {
			break
		}
		s.infoCut++
		if i := s.candAt[t]; i >= 0 && !s.ran[t] {
			s.next[s.prev[i]], s.prev[s.next[i]] = s.next[i], s.prev[i]
			s.infoHidden = append(s.infoHidden, t)
		}
	}
}

// uncutPastHorizon reverts the last cutPastHorizon.
func (s *serialSearch) uncutPastHorizon() {
	n := len(s.infoCutSaved)
	s.infoCut = s.infoCutSaved[n-2]
	mark := int(s.infoCutSaved[n-1])
	s.infoCutSaved = s.infoCutSaved[:n-2]
	for len(s.infoHidden) > mark {
		t := s.infoHidden[len(s.infoHidden)-1]
		s.infoHidden = s.infoHidden[:len(s.infoHidden)-1]
		i := s.candAt[t]
		s.next[s.prev[i]], s.prev[s.next[i]] = i, i
	}
}

// infoHorizonOf is limitInfo's horizon: the longest :ok transaction's duration, in
// client events (0: none known).
func infoHorizonOf(h *history.History) int32 {
	d := int32(0)
	for i := range h.Txns {
		if tx := &h.Txns[i]; tx.Status == history.OK && tx.Invoke >= 0 && tx.Complete >= 0 {
			d = max(d, tx.Complete-tx.Invoke)
		}
	}
	return d
}

// gate is how many of rtCompleted must have run before t may (0 without gates).
func (s *serialSearch) gate(t int32) int32 {
	if s.rtGate == nil {
		return 0
	}
	return s.rtGate[t]
}

// link sorts the candidates by gate, then by prio (then by index), and links them all
// as not run.
func (s *serialSearch) link() {
	slices.SortFunc(s.candidates, func(a, b int32) int {
		if ga, gb := s.gate(a), s.gate(b); ga != gb {
			return int(ga - gb)
		}
		return s.before(a, b)
	})
	m := int32(len(s.candidates))
	s.next, s.prev = make([]int32, m+1), make([]int32, m+1)
	s.candAt = make([]int32, s.n)
	s.blockKey, s.blockPos = make([]int32, s.n), make([]int32, s.n)
	for t := range s.candAt {
		s.candAt[t], s.blockKey[t] = -1, -1
	}
	for i := int32(0); i <= m; i++ {
		s.next[i], s.prev[i] = (i+1)%(m+1), (i+m)%(m+1)
		if i < m {
			t := s.candidates[i]
			s.candAt[t] = i
			if s.commit[t] == encode.Committed {
				s.committedLeft++
			}
		}
	}
}

// before orders transactions by choiceKey where set, then by prio, then by index
// (the choices' order).
func (s *serialSearch) before(a, b int32) int {
	if s.choiceKey != nil {
		switch {
		case s.choiceKey[a] < s.choiceKey[b]:
			return -1
		case s.choiceKey[a] > s.choiceKey[b]:
			return 1
		}
	}
	switch {
	case s.prio[a] < s.prio[b]:
		return -1
	case s.prio[a] > s.prio[b]:
		return 1
	}
	return int(a - b)
}

// run searches depth first, stopping after maxNodes nodes.
func (s *serialSearch) run(maxNodes int) bool {
	s.maxNodes = maxNodes
	return s.dfs()
}

type serialSearch struct {
	h      *history.History
	in     *encode.Inference
	commit []encode.Commit
	n      int32

	// Per key: its position, its trace's length, and its first slot (positions 0..len
	// of the trace are slots base+position).
	pos, traceLen, base []int32
	traceAt             []int32 // per slot, the trace's value there (the last slot: none)
	// pending counts, per slot, the reads of transactions that must run and have not:
	// each at its length minus its transaction's own earlier appends to the key.
	pending []int32
	// Per (key, value) the trace holds (class): demand, the trace's positions at or
	// past the key's position holding it; supply, the appends of it by transactions
	// not run that must or may. Per micro-op: its append's class (-1: none, or not an
	// append).
	demand, supply []int32
	opClass        []int32
	classOf        map[uint64]int32

	ran   []bool
	order []int32
	// local: per key, a transaction's own position while checking it (stamp == epoch).
	local, stamp []int32
	epoch        int32

	prio []int64 // per transaction, the middle of its interval
	// choiceKey, when set (chooseInfoByInvoke), orders the choices before prio does.
	choiceKey []int64
	zob       []uint64 // per transaction, a random key of the memo's hash
	hash      uint64
	// failed holds the hashes of states fully searched without success.
	failed stateSet

	// candidates: every transaction that may still run (not a NotCommitted one, not an
	// optional one without an append inside a trace), sorted by gate (rtGate; all 0
	// without real-time gates), then by prio.
	candidates []int32
	// The candidates not run, in candidates' order, as a doubly linked list over their
	// indices (next/prev; index len(candidates) is the list's head and tail): apply
	// unlinks, undo relinks in reverse, so each node walks only the transactions not
	// run whose gate is open (the frontier), not every candidate.
	next, prev []int32
	candAt     []int32 // per transaction, its index in candidates (-1: none)
	// blockKey, blockPos: per transaction, a key and the position at which it cannot
	// run (blockedAt; key -1: none).
	blockKey, blockPos []int32
	// committedLeft counts the candidates not run that must run.
	committedLeft int
	// slotClass: per slot, the class of the trace's value there (-1: past the trace).
	slotClass []int32

	// For ordered. Per transaction, its keys: entries
	// txnKeys[txnKeyStart[t]:txnKeyStart[t+1]], each a key, the base its reads fix
	// (-1: none) and its appended values entryVals[valStart:valEnd] in order.
	txnKeyStart []int32
	txnKeys     []txnKey
	entryVals   []int32
	// classPos[classPosStart[c]:classPosStart[c+1]]: the trace's positions holding
	// class c's value, ascending.
	classPosStart, classPos []int32
	// keyTxns[keyTxnStart[k]:keyTxnStart[k+1]]: the entries (into txnKeys) of key k.
	keyTxnStart, keyTxns []int32
	entryTxn             []int32 // per entry, its transaction
	// The precedence graph of ordered: per transaction its out-edges, and the DFS's
	// marks.
	edgeFrom, edgeTo []int32
	outStart, out    []int32
	mark             []uint8
	stack, iter      []int32
	choices          []int32 // the choices of every open level, each after its parent's

	nodes, maxNodes int
	// work counts the transactions examined (each visit of a frontier walk, a skipped one
	// too) and run (apply): a node's cost, which grows with the frontier. maxWork bounds it
	// (0: no bound); nextStop is the work at which stop is asked next.
	work, maxWork, nextStop int64
	stop                    func() bool
	aborted                 bool // the budget is spent
	stopped                 bool // the caller's stop said so
	noOrdered               bool // skip ordered (searchStrict)

	// Real-time gates (searchStrict; nil otherwise): rtCompleted, the :ok
	// transactions by completion; rtGate[t], how many of them completed before t was
	// invoked; rtRan, how many of them ran in a row from the first; rtSaved, rtRan
	// before each transaction of order ran (restored by undo).
	rtCompleted, rtGate, rtSaved []int32
	rtRan                        int32
	// infoHorizon (limitInfo; 0: none): an optional transaction may run only while the
	// real-time frontier (the completion of the last of rtCompleted that ran in a row)
	// lies at most this many client events past its invoke.
	infoHorizon int32
	pastHorizon int // how often the horizon kept an optional transaction from running
	// infoByInvoke: the optional candidates by invoke; the first infoCut are past the
	// horizon at the current state, and infoHidden those of them cutPastHorizon
	// unlinked (infoCutSaved: per transaction run, infoCut and len(infoHidden) before).
	infoByInvoke, infoHidden, infoCutSaved []int32
	infoCut                                int32
	// Windows (setWindows; nil: none): per slot, the writers that must run and have
	// not whose windows end there.
	win       *encode.Windows
	lastStart []int32
	// hall checks Hall's condition on the positions each step takes (noMatching: it
	// failed before the search); consumed is apply's scratch, (key, trace position) pairs.
	hall       *hallCheck
	noMatching bool
	consumed   []int32

	// procBefore: per transaction, the nearest committed one before it in its process
	// (-1 none), which must have run; procAfter: per optional one, the nearest committed
	// one after it (-1 none), which must not have.
	procBefore, procAfter []int32
}

func newSerialSearch(h *history.History, in *encode.Inference, commit []encode.Commit) *serialSearch {
	n := int32(len(h.Txns))
	nk := len(in.Keys)
	s := &serialSearch{h: h, in: in, commit: commit, n: n,
		pos: make([]int32, nk), traceLen: make([]int32, nk), base: make([]int32, nk),
		local: make([]int32, nk), stamp: make([]int32, nk),
		ran: make([]bool, n), prio: make([]int64, n), zob: make([]uint64, n),
		classOf: map[uint64]int32{},
	}
	slots := int32(0)
	for k := range in.Keys {
		s.base[k], s.traceLen[k] = slots, int32(len(in.Keys[k].Trace))
		slots += s.traceLen[k] + 1
	}
	s.traceAt = make([]int32, slots)
	s.slotClass = make([]int32, slots)
	s.pending = make([]int32, slots)
	for k := range in.Keys {
		for p, v := range in.Keys[k].Trace {
			s.traceAt[s.base[k]+int32(p)] = v
			c, ok := s.classOf[uint64(k)<<32|uint64(uint32(v))]
			if !ok {
				c = int32(len(s.demand))
				s.classOf[uint64(k)<<32|uint64(uint32(v))] = c
				s.demand = append(s.demand, 0)
			}
			s.slotClass[s.base[k]+int32(p)] = c
			s.demand[c]++
		}
		s.traceAt[s.base[k]+s.traceLen[k]] = -1
		s.slotClass[s.base[k]+s.traceLen[k]] = -1
	}
	s.supply = make([]int32, len(s.demand))
	s.opClass = make([]int32, len(h.Ops))
	rng := rand.New(rand.NewPCG(1, 2))
	for t := int32(0); t < n; t++ {
		s.zob[t] = rng.Uint64()
		s.prio[t] = s.midpoint(t)
		tx := &h.Txns[t]
		if commit[t] == encode.NotCommitted || tx.Status == history.Fail {
			s.ran[t] = true // never runs: counts as settled
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
				if c, ok := s.classOf[uint64(k)<<32|uint64(uint32(op.Value))]; ok {
					s.opClass[i] = c
					s.supply[c]++
					inside = true
				}
				continue
			}
			if commit[t] != encode.Committed || tx.Status != history.OK || !op.Known {
				continue
			}
			b := op.End - op.Start - s.local[k]
			if b < 0 || b > s.traceLen[k] {
				return nil // never readable: leave it to the solver
			}
			s.pending[s.base[k]+b]++
		}
		if commit[t] == encode.Committed || inside {
			s.candidates = append(s.candidates, t)
		} else {
			s.ran[t] = true // an optional one that fills no position never needs to run
		}
	}
	for c := range s.demand {
		if s.supply[c] < s.demand[c] {
			return nil
		}
	}
	return s
}

// midpoint estimates when t took effect, as replay.midpoint does.
func (s *serialSearch) midpoint(t int32) int64 {
	tx := &s.h.Txns[t]
	inv := int64(tx.Invoke)
	if tx.Complete >= 0 {
		if inv < 0 {
			return 2 * int64(tx.Complete)
		}
		return inv + int64(tx.Complete)
	}
	return 2*inv + 1<<40 // an :info one: late
}

// chooseInfoByInvoke orders the search's choices with each optional (:info)
// transaction at its invoke plus the mean :ok duration, as if it had taken effect
// when a completed one would have, instead of after every completed one (prio, as
// the greedy replay guesses). Within strict serializability's windows that is where
// the decoys are sorted out soonest: hot keys with 2% :info at 10K, 7.3M -> 4.8M nodes
// over seeds 1-24 and 4.0M -> 2.6M over seeds 25-40, the longest 831K (no order within
// the first budget) -> 816K. Without windows it is
// worse (the same family at 2K: 17K nodes -> 270K, no order in the first budget):
// there, committed writers fill the positions first.
func (s *serialSearch) chooseInfoByInvoke() {
	s.choiceKey = make([]int64, s.n)
	mean := s.h.MeanOKDuration()
	for t := range s.n {
		s.choiceKey[t] = s.prio[t]
		if tx := &s.h.Txns[t]; tx.Status == history.Info && tx.Invoke >= 0 {
			s.choiceKey[t] = 2*int64(tx.Invoke) + mean
		}
	}
}

// optionalCandidates reports whether some transaction the search may run need not.
func (s *serialSearch) optionalCandidates() bool {
	for _, t := range s.candidates {
		if s.commit[t] != encode.Committed {
			return true
		}
	}
	return false
}

// stopEveryWork is how much work (see serialSearch.work) the search does between two
// calls of its stop hook at most (~1 ms), besides one every 256 nodes.
const stopEveryWork = 1 << 15

// Kinds of transactions that may run now.
const (
	runNo     = iota // may not run now
	runFree          // changes nothing another transaction needs: run at once
	runChoice        // appends inside a trace: a choice
)

// runnable says whether t may run in the current state, and how.
func (s *serialSearch) runnable(t int32) int {
	if s.rtGate != nil {
		if s.rtGate[t] > s.rtRan {
			return runNo // a transaction that completed before t was invoked has not run
		}
		if b := s.procBefore[t]; b >= 0 && !s.ran[b] {
			return runNo
		}
		if a := s.procAfter[t]; a >= 0 && s.ran[a] {
			return runNo
		}
	}
	h := s.h
	tx := &h.Txns[t]
	if s.infoHorizon > 0 && s.commit[t] != encode.Committed && s.rtRan > 0 && tx.Invoke >= 0 &&
		h.Txns[s.rtCompleted[s.rtRan-1]].Complete-tx.Invoke > s.infoHorizon {
		s.pastHorizon++
		return runNo // past its horizon (limitInfo)
	}
	s.epoch++
	reads := s.commit[t] == encode.Committed && tx.Status == history.OK
	inside := false
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		op := &h.Ops[i]
		k := op.Key
		if s.stamp[k] != s.epoch {
			s.stamp[k], s.local[k] = s.epoch, s.pos[k]
		}
		at := s.local[k]
		if op.Kind == history.Append {
			if at < s.traceLen[k] {
				if s.traceAt[s.base[k]+at] != op.Value {
					s.blockedAt(t, k, at)
					return runNo
				}
				inside = true
			}
			// Moving k past at strands the readers still to run there (t's own reads
			// all sit at k's position, where t's first append on k is).
			if at <= s.traceLen[k] {
				own := int32(0)
				if at == s.pos[k] && reads {
					own = s.ownReadsAt(t, k)
				}
				if s.pending[s.base[k]+at] > own {
					return runNo
				}
			}
			if s.win != nil && !s.windowAllows(t, k, at) {
				return runNo
			}
			s.local[k] = at + 1
			continue
		}
		if reads && op.Known && op.End-op.Start != at {
			return runNo
		}
	}
	switch {
	case inside:
		return runChoice
	case s.commit[t] != encode.Committed:
		return runNo // an optional one fills nothing here
	}
	return runFree // reads only, or appends past the traces only
}

// blockedAt notes that t cannot run while key k stays at position at: its first
// append there does not fit (the trace's value, or its window). That depends on k's
// position alone, so the frontier's walks skip t until k moves (stillBlocked): most
// :info transactions wait so, open but far from fitting, and were examined in full at
// every node (80% of the transactions examined on hot keys with 2% :info at 10K; the
// skip takes 10-16% off the search's time there; a skip still counts as work).
func (s *serialSearch) blockedAt(t, k, at int32) {
	if at == s.pos[k] {
		s.blockKey[t], s.blockPos[t] = k, at
	}
}

// stillBlocked reports whether t's note (blockedAt) still holds.
func (s *serialSearch) stillBlocked(t int32) bool {
	k := s.blockKey[t]
	return k >= 0 && s.pos[k] == s.blockPos[t]
}

// windowAllows applies the windows (setWindows) to t's append at position at of key
// k: its block's start (its first append there, at k's position) must lie in its
// writer's window, and moving k past at must strand no writer that must start there
// at the latest.
func (s *serialSearch) windowAllows(t, k, at int32) bool {
	w := s.in.KeyWriter(t, k)
	if w < 0 {
		return true
	}
	if at == s.pos[k] {
		if at < s.traceLen[k] {
			if !s.win.Allowed(w, at) {
				s.blockedAt(t, k, at) // until k moves
				return false
			}
		} else if s.mustStart(w) {
			return false // must be observed: it cannot start past the trace
		}
	}
	if at >= s.traceLen[k] {
		return true
	}
	own := int32(0)
	if s.mustStart(w) && s.win.Hi[w] == at {
		own = 1
	}
	return s.lastStart[s.base[k]+at] <= own
}

// mustStart reports whether writer w is one of a transaction that must run whose
// window ends inside its trace (it must be observed).
func (s *serialSearch) mustStart(w int32) bool {
	wr := &s.in.Writers[w]
	return s.commit[wr.Txn] == encode.Committed && s.win.Hi[w] < s.traceLen[wr.Key]
}

// setWindows makes the search keep every writer's block within win (prune's windows,
// sound for every order the search looks for: see searchStrict): a transaction runs
// only where each of its blocks may start, and no key moves past a position while a
// writer that must start there at the latest has not run. lastStart counts, per
// slot, the writers of transactions that must run and have not whose windows end
// there.
func (s *serialSearch) setWindows(win *encode.Windows) {
	if win == nil {
		return
	}
	s.win = win
	// Those of transactions that will run (not settled as never running).
	must := func(w int32) bool { return s.mustStart(w) && !s.ran[s.in.Writers[w].Txn] }
	s.lastStart = make([]int32, len(s.pending))
	for w := range s.in.Writers {
		if must(int32(w)) {
			wr := &s.in.Writers[w]
			s.lastStart[s.base[wr.Key]+win.Hi[w]]++
		}
	}
	s.hall = newHallCheck(s.in, win, s.ran, must)
	// hallCheck's sweeps stop early on the strength of a matching before the search:
	// without one no order exists within the windows.
	s.noMatching = !s.hall.feasible()
}

// unstrand updates lastStart when t runs (d = -1) or is undone (d = 1).
func (s *serialSearch) unstrand(t int32, d int32) {
	if s.win == nil {
		return
	}
	for _, w := range s.in.TxnWriters(t) {
		if s.mustStart(w) {
			s.lastStart[s.base[s.in.Writers[w].Key]+s.win.Hi[w]] += d
		}
	}
}

// ownReadsAt counts t's reads of k (all at k's position when t may run).
func (s *serialSearch) ownReadsAt(t, k int32) int32 {
	n := int32(0)
	for _, op := range s.h.TxnOps(int(t)) {
		if op.Kind != history.Append && op.Key == k && op.Known {
			n++
		}
	}
	return n
}

// apply runs t; it reports false when some value can no longer fill its trace
// positions (the state is then still applied: undo it).
func (s *serialSearch) apply(t int32) bool {
	h := s.h
	tx := &h.Txns[t]
	reads := s.commit[t] == encode.Committed && tx.Status == history.OK
	ok := true
	for i := tx.OpStart; i < tx.OpEnd; i++ {
		op := &h.Ops[i]
		k := op.Key
		if op.Kind == history.Append {
			if p := s.pos[k]; p < s.traceLen[k] {
				s.demand[s.slotClass[s.base[k]+p]]--
				if s.win != nil {
					s.consumed = append(s.consumed, k, p)
				}
			}
			if c := s.opClass[i]; c >= 0 {
				s.supply[c]--
				ok = ok && s.supply[c] >= s.demand[c]
			}
			s.pos[k]++
			continue
		}
		if reads && op.Known {
			// Reads are at the key's position at t's start: before any own append.
			s.pending[s.base[k]+op.End-op.Start-s.ownBefore(t, i, k)]--
		}
	}
	s.work++
	s.unstrand(t, -1)
	s.ran[t] = true
	s.order = append(s.order, t)
	s.hash ^= s.zob[t]
	if i := s.candAt[t]; i >= 0 {
		s.next[s.prev[i]], s.prev[s.next[i]] = s.next[i], s.prev[i]
		if s.commit[t] == encode.Committed {
			s.committedLeft--
		}
	}
	if s.rtGate != nil {
		s.rtSaved = append(s.rtSaved, s.rtRan)
		for s.rtRan < int32(len(s.rtCompleted)) && s.ran[s.rtCompleted[s.rtRan]] {
			s.rtRan++
		}
		if s.infoByInvoke != nil {
			s.cutPastHorizon()
		}
	}
	// The positions t took may have been the ones writers that must start there need.
	for i := 0; i < len(s.consumed); i += 2 {
		k := s.consumed[i]
		ok = ok && s.hall.matchable(k, s.consumed[i+1], s.pos[k])
	}
	s.consumed = s.consumed[:0]
	return ok
}

// ownBefore counts t's appends to k before micro-op i.
func (s *serialSearch) ownBefore(t, i, k int32) int32 {
	tx := &s.h.Txns[t]
	n := int32(0)
	for j := tx.OpStart; j < i; j++ {
		if op := &s.h.Ops[j]; op.Kind == history.Append && op.Key == k {
			n++
		}
	}
	return n
}

// undo reverts the last transaction run.
func (s *serialSearch) undo() {
	t := s.order[len(s.order)-1]
	s.order = s.order[:len(s.order)-1]
	s.unstrand(t, 1)
	s.ran[t] = false
	s.hash ^= s.zob[t]
	if s.rtGate != nil && s.infoByInvoke != nil {
		s.uncutPastHorizon() // relinked before t: the reverse of apply's unlinks
	}
	if i := s.candAt[t]; i >= 0 {
		s.next[s.prev[i]], s.prev[s.next[i]] = i, i
		if s.commit[t] == encode.Committed {
			s.committedLeft++
		}
	}
	if s.rtGate != nil {
		s.rtRan = s.rtSaved[len(s.rtSaved)-1]
		s.rtSaved = s.rtSaved[:len(s.rtSaved)-1]
	}
	h := s.h
	tx := &h.Txns[t]
	reads := s.commit[t] == encode.Committed && tx.Status == history.OK
	for i := tx.OpEnd - 1; i >= tx.OpStart; i-- {
		op := &h.Ops[i]
		k := op.Key
		if op.Kind == history.Append {
			s.pos[k]--
			if p := s.pos[k]; p < s.traceLen[k] {
				s.demand[s.slotClass[s.base[k]+p]]++
			}
			if c := s.opClass[i]; c >= 0 {
				s.supply[c]++
			}
			continue
		}
		if reads && op.Known {
			s.pending[s.base[k]+op.End-op.Start-s.ownBefore(t, i, k)]++
		}
	}
}

// dfs searches from the current state; on success s.order is a complete order.
func (s *serialSearch) dfs() bool {
	mark := len(s.order)
	// The state as a choice reached it, before the transactions that then run at
	// once: they follow from it, so the memo keeps it too (fail), and a state
	// searched in full is skipped before they run.
	entry := s.hash
	if s.failed.has(entry) {
		return false
	}
	// Run what changes nothing another transaction needs, until none is left. The
	// last pass, over the state they leave, also lists the choices there. (It was a
	// walk of its own; its visits still count twice, so that the work bounds, measured
	// so, keep finding what they found, in less time.)
	end := int32(len(s.candidates)) // the list's head and tail
	start := len(s.choices)
	visits := int64(0)
	for changed := true; changed; {
		changed = false
		s.choices = s.choices[:start]
		visits = 0
		for i := s.next[end]; i != end; {
			t := s.candidates[i]
			if s.rtGate != nil && s.rtGate[t] > s.rtRan {
				break // sorted by gate: the rest are closed too
			}
			i = s.next[i] // before apply unlinks t
			s.work++
			visits++
			if s.stillBlocked(t) {
				continue
			}
			switch s.runnable(t) {
			case runFree:
				if !s.apply(t) {
					s.choices = s.choices[:start]
					s.undoTo(mark)
					s.fail(entry)
					return false
				}
				changed = true
			case runChoice:
				s.choices = append(s.choices, t)
			}
		}
	}
	if s.failed.has(s.hash) {
		s.choices = s.choices[:start]
		s.undoTo(mark)
		s.fail(entry)
		return false
	}
	if !s.noOrdered && !s.ordered() {
		s.choices = s.choices[:start]
		s.failed.add(s.hash)
		s.undoTo(mark)
		s.fail(entry)
		return false
	}
	s.nodes++
	if s.stop != nil && (s.nodes%256 == 1 || s.work >= s.nextStop) {
		s.nextStop = s.work + stopEveryWork
		s.stopped = s.stop()
	}
	if s.nodes > s.maxNodes || s.maxWork > 0 && s.work > s.maxWork || s.stopped {
		s.aborted = true
	}
	s.work += visits
	done := s.committedLeft == 0
	// The choices, in the order of their midpoints (as the greedy replay).
	// Insertion sort: the choices are few.
	for i := start + 1; i < len(s.choices); i++ {
		for j := i; j > start && s.before(s.choices[j], s.choices[j-1]) < 0; j-- {
			s.choices[j], s.choices[j-1] = s.choices[j-1], s.choices[j]
		}
	}
	for i := start; i < len(s.choices) && !s.aborted; i++ {
		t := s.choices[i]
		// A child searched in full before (reached by another order of the same
		// choices) is skipped before it runs: most children were (hot keys with
		// :info, 10K: 1M memo hits in 300K nodes), and running one costs its
		// window checks (hallCheck, then half the search's time) and the
		// transactions that follow it at once.
		s.work++
		if s.failed.has(s.hash ^ s.zob[t]) {
			continue
		}
		if s.apply(t) && s.dfs() {
			return true
		}
		s.undo()
	}
	s.choices = s.choices[:start]
	if done && !s.aborted {
		for k := range s.pos {
			if s.pos[k] < s.traceLen[k] {
				done = false
				break
			}
		}
		if done {
			return true
		}
	}
	if !s.aborted {
		s.failed.add(s.hash)
		s.undoTo(mark)
		s.fail(entry)
		return false
	}
	s.undoTo(mark)
	return false
}

// fail remembers the state hashed h (as a choice reached it) as searched in full.
func (s *serialSearch) fail(h uint64) { s.failed.add(h) }

// undoTo reverts transactions until mark of them are left.
func (s *serialSearch) undoTo(mark int) {
	for len(s.order) > mark {
		s.undo()
	}
}

// txnKey is one key of a transaction, for ordered.
type txnKey struct {
	key, base        int32
	valStart, valEnd int32
}

// indexEntries builds the per-key entries ordered reads.
func (s *serialSearch) indexEntries() {
	h, in := s.h, s.in
	s.txnKeyStart = make([]int32, s.n+1)
	for t := int32(0); t < s.n; t++ {
		s.txnKeyStart[t] = int32(len(s.txnKeys))
		if s.ran[t] {
			continue
		}
		tx := &h.Txns[t]
		reads := s.commit[t] == encode.Committed && tx.Status == history.OK
		first := int32(len(s.txnKeys))
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			e := int32(-1)
			for j := first; j < int32(len(s.txnKeys)); j++ {
				if s.txnKeys[j].key == op.Key {
					e = j
				}
			}
			if e < 0 {
				e = int32(len(s.txnKeys))
				s.txnKeys = append(s.txnKeys, txnKey{key: op.Key, base: -1})
			}
			tk := &s.txnKeys[e]
			if op.Kind == history.Append {
				s.entryVals = append(s.entryVals, e, op.Value) // sorted out below
				continue
			}
			if reads && op.Known && tk.base < 0 {
				tk.base = op.End - op.Start - s.ownBefore(t, i, op.Key)
			}
		}
	}
	s.txnKeyStart[s.n] = int32(len(s.txnKeys))
	// Group the appended values by entry (pairs were appended in op order).
	pairs := s.entryVals
	s.entryVals = make([]int32, 0, len(pairs)/2)
	count := make([]int32, len(s.txnKeys)+1)
	for i := 0; i < len(pairs); i += 2 {
		count[pairs[i]+1]++
	}
	for e := range s.txnKeys {
		count[e+1] += count[e]
		s.txnKeys[e].valStart, s.txnKeys[e].valEnd = count[e], count[e]
	}
	s.entryVals = make([]int32, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		tk := &s.txnKeys[pairs[i]]
		s.entryVals[tk.valEnd] = pairs[i+1]
		tk.valEnd++
	}
	s.classPosStart = make([]int32, len(s.demand)+1)
	for k := range in.Keys {
		for _, v := range in.Keys[k].Trace {
			s.classPosStart[s.classOf[uint64(k)<<32|uint64(uint32(v))]+1]++
		}
	}
	for c := range s.demand {
		s.classPosStart[c+1] += s.classPosStart[c]
	}
	fill := slices.Clone(s.classPosStart)
	s.classPos = make([]int32, len(s.traceAt))
	for k := range in.Keys {
		for p, v := range in.Keys[k].Trace {
			c := s.classOf[uint64(k)<<32|uint64(uint32(v))]
			s.classPos[fill[c]] = int32(p)
			fill[c]++
		}
	}
	s.entryTxn = make([]int32, len(s.txnKeys))
	s.keyTxnStart = make([]int32, len(in.Keys)+1)
	s.forEntries(func(t int32, tk *txnKey) { s.keyTxnStart[tk.key+1]++ })
	for k := range in.Keys {
		s.keyTxnStart[k+1] += s.keyTxnStart[k]
	}
	kfill := slices.Clone(s.keyTxnStart)
	s.keyTxns = make([]int32, len(s.txnKeys))
	for t := int32(0); t < s.n; t++ {
		for e := s.txnKeyStart[t]; e < s.txnKeyStart[t+1]; e++ {
			s.entryTxn[e] = t
			k := s.txnKeys[e].key
			s.keyTxns[kfill[k]] = e
			kfill[k]++
		}
	}
}

// ordered is a necessary condition for the current state to have a complete order:
// the precedences it forces among the transactions that must run and have not are
// acyclic. On each key k, a reader X at base b and a writer Y: where Y's block can
// start no earlier than b (its reads fix it there, or no position from k's on holds
// its values before), X runs first (Y moves k past b); where Y's reads fix its block
// before b, Y runs first. A transaction reading k at b and appending to it there
// precedes only the writers whose blocks start past b.
//
// The graph stays linear in size through two chains of nodes per key, one node per
// slot each: V(k,p) reaches every writer whose block starts no earlier than p
// (V(k,p) -> V(k,p+1)), W(k,p) every reader at p or later (W(k,p) -> W(k,p+1)).
func (s *serialSearch) ordered() bool {
	s.edgeFrom, s.edgeTo = s.edgeFrom[:0], s.edgeTo[:0]
	nslots := int32(len(s.pending))
	vNode := func(sl int32) int32 { return s.n + sl }
	wNode := func(sl int32) int32 { return s.n + nslots + sl }
	edge := func(a, b int32) { s.edgeFrom, s.edgeTo = append(s.edgeFrom, a), append(s.edgeTo, b) }
	for k := range s.pos {
		base, pos, n := s.base[k], s.pos[k], s.traceLen[k]
		for p := pos; p < n; p++ {
			edge(vNode(base+p), vNode(base+p+1))
			edge(wNode(base+p), wNode(base+p+1))
		}
		// The writers that may fill k's position now: with none the state is dead,
		// with one its block starts there.
		fillers, filler := 0, int32(-1)
		for _, e := range s.keyTxns[s.keyTxnStart[k]:s.keyTxnStart[k+1]] {
			tk := &s.txnKeys[e]
			t := s.entryTxn[e]
			if s.ran[t] {
				continue
			}
			if pos < n && tk.valEnd > tk.valStart && (tk.base < 0 || tk.base == pos) && s.matchesAt(tk, pos) {
				fillers++
				filler = t
			}
			if s.commit[t] != encode.Committed {
				continue
			}
			reader := tk.base >= 0 && s.h.Txns[t].Status == history.OK
			writes := tk.valEnd > tk.valStart
			if reader && tk.base < pos {
				return false // its read can no longer be seen
			}
			switch {
			case reader && writes:
				edge(vNode(base+tk.base), t)
				if tk.base < n {
					edge(t, vNode(base+tk.base+1))
					edge(t, wNode(base+tk.base+1))
				}
			case reader:
				edge(t, vNode(base+tk.base))
				edge(wNode(base+tk.base), t)
				if tk.base < n {
					// The key moves past b before any read of a longer list.
					edge(t, wNode(base+tk.base+1))
				}
			case writes:
				q := min(pos, n) // past the trace: slot n stands for every position
				for q < n && !s.matchesAt(tk, q) {
					q++
				}
				edge(vNode(base+q), t)
				if tk.valEnd-tk.valStart == 1 && q < n {
					// No append of its value left over for past the trace: its block
					// starts at the trace's last position holding it, or earlier.
					c := s.classOf[uint64(k)<<32|uint64(uint32(s.entryVals[tk.valStart]))]
					if s.supply[c] == s.demand[c] {
						edge(t, wNode(base+s.classPos[s.classPosStart[c+1]-1]+1))
					}
				}
			}
		}
		switch {
		case pos < n && fillers == 0:
			return false
		case fillers == 1:
			edge(filler, vNode(base+pos+1))
			edge(filler, wNode(base+pos+1))
		}
	}
	nodes := s.n + 2*nslots
	if len(s.outStart) < int(nodes)+1 {
		s.outStart = make([]int32, nodes+1)
		s.mark = make([]uint8, nodes)
	}
	clear(s.outStart)
	for _, f := range s.edgeFrom {
		s.outStart[f+1]++
	}
	for t := int32(0); t < nodes; t++ {
		s.outStart[t+1] += s.outStart[t]
	}
	if cap(s.out) < len(s.edgeTo) {
		s.out = make([]int32, len(s.edgeTo))
	}
	s.out = s.out[:len(s.edgeTo)]
	for i, f := range s.edgeFrom {
		s.outStart[f]++
		s.out[s.outStart[f]-1] = s.edgeTo[i]
	}
	// outStart[u] now ends u's edges: shift back.
	for u := nodes; u > 0; u-- {
		s.outStart[u] = s.outStart[u-1]
	}
	s.outStart[0] = 0
	clear(s.mark)
	stack, iter := s.stack[:0], s.iter[:0]
	defer func() { s.stack, s.iter = stack, iter }()
	for _, root := range s.edgeFrom {
		if s.mark[root] != 0 {
			continue
		}
		stack, iter = append(stack[:0], root), append(iter[:0], s.outStart[root])
		s.mark[root] = 1
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			i := iter[len(iter)-1]
			if i == s.outStart[u+1] {
				s.mark[u] = 2
				stack, iter = stack[:len(stack)-1], iter[:len(iter)-1]
				continue
			}
			iter[len(iter)-1]++
			v := s.out[i]
			switch s.mark[v] {
			case 1:
				return false
			case 0:
				s.mark[v] = 1
				stack, iter = append(stack, v), append(iter, s.outStart[v])
			}
		}
	}
	return true
}

func (s *serialSearch) forEntries(f func(t int32, tk *txnKey)) {
	for t := int32(0); t < s.n; t++ {
		for e := s.txnKeyStart[t]; e < s.txnKeyStart[t+1]; e++ {
			f(t, &s.txnKeys[e])
		}
	}
}

// matchesAt reports whether tk's appended values may land from position q of its key:
// each equal to the trace's value where it lands inside the trace.
func (s *serialSearch) matchesAt(tk *txnKey, q int32) bool {
	k := tk.key
	for i := tk.valStart; i < tk.valEnd; i++ {
		if p := q + i - tk.valStart; p < s.traceLen[k] && s.traceAt[s.base[k]+p] != s.entryVals[i] {
			return false
		}
	}
	return true
}
