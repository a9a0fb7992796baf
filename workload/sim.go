package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"doppel/history"
)

// Behaviour is how the simulated database executes transactions.
type Behaviour string

const (
	// SimSerializable: each transaction takes effect atomically at a linearization point
	// between its invoke and its completion, so histories are strict-serializable.
	SimSerializable Behaviour = "serializable"
	// SimSnapshot: reads see a snapshot taken at the invoke plus the transaction's own
	// appends; commits happen at the completion with first-committer-wins. Write skew
	// happens: histories are snapshot-isolated but not always serializable.
	SimSnapshot Behaviour = "snapshot"
	// SimFaulty: SimSerializable with seeded faults (see Faults) in a fraction of transactions.
	SimFaulty Behaviour = "faulty"
)

// The faults of the SimFaulty behaviour. Each one, when it fires, makes the history violate
// the simulated semantics; whether a checker can see it depends on the other reads.
const (
	// A transaction's append is later overwritten: the next other transaction to append
	// to the key writes back the list as it was before the lost append, plus its own
	// (a concurrent read-modify-write).
	FaultLostUpdate = "lost-update"
	// A read returns a strict prefix of the key's current list (an older version).
	FaultStaleRead = "stale-read"
	// A read sees only some of the appends another transaction made to the key (G1b).
	FaultIntermediateRead = "intermediate-read"
	// A transaction's appends take effect but it completes with :fail (G1a when read).
	FaultAbortedRead = "aborted-read"
	// MariaDB MDEV-26642: a transaction appends v by read-modify-write to a key whose
	// list a concurrent transaction has just extended with the same v; the write is a
	// no-op, and the transaction's later read of the key does not show its own append.
	FaultDupNoop = "dup-noop"
)

// AllFaults lists the faults the SimFaulty behaviour injects by default.
var AllFaults = []string{FaultLostUpdate, FaultStaleRead, FaultIntermediateRead, FaultAbortedRead, FaultDupNoop}

// SimOptions say how the simulated database behaves.
type SimOptions struct {
	Behaviour Behaviour // default SimSerializable
	// Info is the fraction of transactions that complete with :info (each then commits
	// or not with probability 1/2); Fail the fraction that abort (:fail, no effect).
	Info, Fail float64
	// Faults injected by the SimFaulty behaviour; empty means AllFaults.
	Faults []string
	// FaultRate is the fraction of (otherwise :ok) transactions in which the SimFaulty
	// behaviour tries to inject a fault; a fault that does not apply to a transaction
	// (for instance a stale read in a transaction without reads) is skipped.
	FaultRate float64
	// Inject lists anomalies (AllInjections) to inject once each into the serializable
	// behaviour, one after the other from fraction InjectAt of the transactions on
	// (DefaultInjectAt is the usual choice). See inject.go.
	Inject   []string
	InjectAt float64
	// Stale (SimSnapshot only) is the fraction of transactions whose snapshot lags, as
	// a replica's does: taken StaleCommits commits or fewer (at random, at least one)
	// before the latest at its invoke. First-committer-wins counts from that
	// snapshot. Such histories are snapshot isolated but neither strongly nor
	// strong-session.
	Stale        float64
	StaleCommits int
}

// Validate reports the first bad option.
func (o SimOptions) Validate() error {
	switch o.Behaviour {
	case "", SimSerializable, SimSnapshot, SimFaulty:
	default:
		return fmt.Errorf("behaviour must be serializable, snapshot or faulty, got %q", o.Behaviour)
	}
	switch {
	case !(o.Info >= 0 && o.Info <= 1):
		return fmt.Errorf("info must be a fraction in [0, 1], got %v", o.Info)
	case !(o.Fail >= 0 && o.Fail <= 1):
		return fmt.Errorf("fail must be a fraction in [0, 1], got %v", o.Fail)
	case o.Info+o.Fail > 1:
		return fmt.Errorf("info + fail must be at most 1, got %v", o.Info+o.Fail)
	case !(o.FaultRate >= 0 && o.FaultRate <= 1):
		return fmt.Errorf("fault rate must be a fraction in [0, 1], got %v", o.FaultRate)
	case !(o.Stale >= 0 && o.Stale <= 1):
		return fmt.Errorf("stale must be a fraction in [0, 1], got %v", o.Stale)
	case o.Stale > 0 && o.Behaviour != SimSnapshot:
		return fmt.Errorf("stale snapshots need the snapshot behaviour, got %q", o.Behaviour)
	case o.Stale > 0 && o.StaleCommits < 1:
		return fmt.Errorf("stale commits must be at least 1, got %d", o.StaleCommits)
	}
	for _, f := range o.Faults {
		if !slices.Contains(AllFaults, f) {
			return fmt.Errorf("unknown fault %q (known: %v)", f, AllFaults)
		}
	}
	return o.validateInject()
}

// Simulated timing, in nanoseconds: sessions think for a while between transactions,
// and transactions stay open long enough that several sessions' transactions overlap.
const (
	simMeanThink    = 2_000
	simMeanDuration = 10_000
)

// simCommit describes one transaction taking effect, for tests.
type simCommit struct {
	invoke  int64        // :index of the transaction's invoke
	time    int64        // when it took effect
	ops     []history.Op // with the reads as returned
	outcome history.Type // the completion's type
	fault   string       // the fault injected into it, if any
}

// simHooks let tests watch the simulation; nil fields are not called.
type simHooks struct {
	commit func(simCommit) // each transaction that takes effect, in effect order
	// fault is called for every fault injected (including into transactions without effect).
	fault func(invoke int64, fault string)
}

// Simulate runs spec against a simulated database and passes the history's events to
// emit in time order, with :index 0, 1, 2, ... and :time in simulated nanoseconds. It is
// deterministic in (spec, opt). It keeps only the current state of the database, not
// the history: emit must write or copy each event before returning, if it keeps it.
func Simulate(spec Spec, opt SimOptions, emit func(*history.Event) error) error {
	_, err := simulate(spec, opt, emit, simHooks{})
	return err
}

// SimulateInjected is Simulate that also returns the anomalies injected (opt.Inject),
// in the order they were. It fails if the run ends before all of them could be.
func SimulateInjected(spec Spec, opt SimOptions, emit func(*history.Event) error) ([]Injection, error) {
	return simulate(spec, opt, emit, simHooks{})
}

// simSession is one client session of the simulation.
type simSession struct {
	src     *TxnSource
	process int64
	phase   uint8 // what its next scheduled event is: simInvoke, simEffect or simComplete
	ops     []history.Op
	result  []history.Op // ops with reads filled, for an :ok completion
	outcome history.Type
	commits bool   // an :info transaction takes effect
	invoke  int64  // :index of the open transaction's invoke
	start   int64  // time of the invoke
	end     int64  // time of the completion
	snapSeq int64  // SimSnapshot: commit sequence number of the snapshot
	fault   string // SimFaulty: the fault to try at the effect point ("" none)
	inject  uint8  // role in an injected anomaly: injectNone, injectFirst or injectSecond
	merged  bool   // the injected pair this transaction belongs to has taken effect
}

const (
	simInvoke uint8 = iota
	simEffect
	simComplete
)

// simEntry is a scheduled event of the simulation: session s does its next step at time.
type simEntry struct {
	time, seq int64
	s         int32
}

func (a simEntry) before(b simEntry) bool {
	return a.time < b.time || a.time == b.time && a.seq < b.seq
}

// simQueue is a binary min-heap of scheduled events (one per active session).
type simQueue []simEntry

func (q *simQueue) push(e simEntry) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *simQueue) pop() simEntry {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].before(h[m]) {
			m = l
		}
		if l+1 < n && h[l+1].before(h[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// simDB is the simulated database: one list per key plus what the faults need.
type simDB struct {
	lists [][]int64
	// Who extended each key last: the transaction (invoke index, -1 none), how many
	// appends it made there in a row, and when.
	lastWriter []int64
	lastRun    []int32
	lastTime   []int64
	// Lost updates pending per key: the length to truncate to at the next append by a
	// transaction other than lostBy (-1: none pending).
	lostLen []int32
	lostBy  []int64
	// SimSnapshot: commit sequence number of the last commit that appended to each key.
	lastCommit []int64
	commitSeq  int64
	// SimSnapshot with stale snapshots: per key, the commit sequence number at which
	// each length was reached (lengthAt reads a stale snapshot from it).
	lenSeq [][]int64
}

func newSimDB(keys int) *simDB {
	db := &simDB{
		lists:      make([][]int64, keys),
		lastWriter: make([]int64, keys),
		lastRun:    make([]int32, keys),
		lastTime:   make([]int64, keys),
		lostLen:    make([]int32, keys),
		lostBy:     make([]int64, keys),
		lastCommit: make([]int64, keys),
	}
	for k := range keys {
		db.lastWriter[k], db.lostLen[k] = -1, -1
	}
	return db
}

// ensure grows the per-key state to cover key k.
func (db *simDB) ensure(k int64) {
	for int64(len(db.lists)) <= k {
		db.lists = append(db.lists, nil)
		db.lastWriter = append(db.lastWriter, -1)
		db.lastRun = append(db.lastRun, 0)
		db.lastTime = append(db.lastTime, 0)
		db.lostLen = append(db.lostLen, -1)
		db.lostBy = append(db.lostBy, 0)
		db.lastCommit = append(db.lastCommit, 0)
	}
}

// appendValue appends v to key k on behalf of transaction txn at time t.
func (db *simDB) appendValue(k int64, v, txn, t int64) {
	if db.lostLen[k] >= 0 && db.lostBy[k] != txn {
		db.lists[k] = db.lists[k][:db.lostLen[k]]
		db.lostLen[k] = -1
		db.lastWriter[k] = -1
	}
	db.lists[k] = append(db.lists[k], v)
	if db.lastWriter[k] == txn {
		db.lastRun[k]++
	} else {
		db.lastWriter[k], db.lastRun[k] = txn, 1
	}
	db.lastTime[k] = t
}

// readPrefix returns a copy of the first n values of key k's list (never nil).
func (db *simDB) readPrefix(k int64, n int) []int64 {
	out := make([]int64, n)
	copy(out, db.lists[k])
	return out
}

type simulator struct {
	spec     Spec
	opt      SimOptions
	faults   []string
	emit     func(*history.Event) error
	hooks    simHooks
	rng      *rand.Rand
	db       *simDB
	sessions []simSession
	queue    simQueue
	seq      int64 // tie-breaker of scheduled events
	index    int64 // next :index
	started  int   // transactions invoked so far
	inject   *injector
}

func simulate(spec Spec, opt SimOptions, emit func(*history.Event) error, hooks simHooks) ([]Injection, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if opt.Behaviour == "" {
		opt.Behaviour = SimSerializable
	}
	sim := &simulator{
		spec:     spec,
		opt:      opt,
		faults:   opt.Faults,
		emit:     emit,
		hooks:    hooks,
		rng:      rand.New(rand.NewPCG(uint64(spec.Seed), 0x73696d)),
		db:       newSimDB(spec.Keys),
		sessions: make([]simSession, spec.Sessions),
		queue:    make(simQueue, 0, spec.Sessions),
	}
	if len(sim.faults) == 0 {
		sim.faults = AllFaults
	}
	if len(opt.Inject) > 0 {
		sim.inject = newInjector(spec, opt)
	}
	for i := range sim.sessions {
		sim.sessions[i] = simSession{src: NewTxnSource(spec, i), process: int64(i)}
		sim.schedule(i, sim.rng.Int64N(simMeanThink))
	}
	for len(sim.queue) > 0 {
		e := sim.queue.pop()
		s := &sim.sessions[e.s]
		var err error
		switch s.phase {
		case simInvoke:
			if sim.started == spec.Txns {
				continue // this session is done
			}
			err = sim.invoke(int(e.s), e.time)
		case simEffect:
			sim.effect(s, e.time)
			s.phase = simComplete
			sim.schedule(int(e.s), s.end)
		case simComplete:
			err = sim.complete(int(e.s), e.time)
		}
		if err != nil {
			return nil, err
		}
	}
	if sim.inject == nil {
		return nil, nil
	}
	if len(sim.inject.pending) > 0 {
		return sim.inject.done, fmt.Errorf("%w %v: the run ended first (no two concurrent transactions after the injection point, or too few keys with duplicate values)", ErrCannotInject, sim.inject.pending)
	}
	return sim.inject.done, nil
}

func (sim *simulator) schedule(s int, t int64) {
	sim.queue.push(simEntry{time: t, seq: sim.seq, s: int32(s)})
	sim.seq++
}

func (sim *simulator) emitEvent(t int64, typ history.Type, process int64, value []history.Op) error {
	e := &history.Event{Index: sim.index, Time: t, Type: typ, Process: process, Value: value}
	sim.index++
	return sim.emit(e)
}

func (sim *simulator) invoke(si int, t int64) error {
	s := &sim.sessions[si]
	sim.started++
	s.ops = s.src.Next()
	for _, op := range s.ops {
		sim.db.ensure(op.Key) // key rotation reaches past the first Keys keys
	}
	s.result = nil
	s.fault = ""
	s.inject, s.merged = injectNone, false
	injected := sim.injectInvoke(si, t)
	s.outcome = history.TypeOK
	switch u := sim.rng.Float64(); {
	case u < sim.opt.Fail:
		s.outcome = history.TypeFail
	case u < sim.opt.Fail+sim.opt.Info:
		s.outcome = history.TypeInfo
		s.commits = sim.rng.IntN(2) == 0
	}
	if sim.opt.Behaviour == SimFaulty && s.outcome == history.TypeOK && sim.rng.Float64() < sim.opt.FaultRate {
		s.fault = sim.faults[sim.rng.IntN(len(sim.faults))]
	}
	if injected {
		s.outcome = history.TypeOK // an anomaly needs both transactions committed
	}
	s.invoke, s.start = sim.index, t
	duration := 2 + sim.rng.Int64N(2*simMeanDuration)
	s.end = t + duration
	if err := sim.emitEvent(t, history.TypeInvoke, s.process, s.ops); err != nil {
		return err
	}
	if sim.opt.Behaviour == SimSnapshot {
		sim.snapshotReads(s)
		s.phase = simComplete
		sim.schedule(si, s.end)
		return nil
	}
	s.phase = simEffect
	effectAt := t + 1 + sim.rng.Int64N(duration-1) // strictly inside the interval
	switch s.inject {
	case injectFirst:
		effectAt = s.end - 1 // as late as possible, to leave room for T2
	case injectSecond:
		effectAt = t + 1 // before T1's effect point (see injectInvoke)
	}
	sim.schedule(si, effectAt)
	return nil
}

func (sim *simulator) complete(si int, t int64) error {
	s := &sim.sessions[si]
	if sim.opt.Behaviour == SimSnapshot {
		sim.snapshotCommit(s, t)
	}
	value := s.ops // :fail and :info completions carry the invoke's value
	if s.outcome == history.TypeOK {
		value = s.result
	}
	if err := sim.emitEvent(t, s.outcome, s.process, value); err != nil {
		return err
	}
	if s.outcome == history.TypeInfo {
		// Jepsen: a process whose operation is indeterminate never runs another one.
		s.process += int64(sim.spec.Sessions)
	}
	s.ops, s.result = nil, nil
	s.phase = simInvoke
	sim.schedule(si, t+1+sim.rng.Int64N(2*simMeanThink))
	return nil
}

// effect executes the open transaction of s atomically at time t (SimSerializable and
// SimFaulty behaviours).
func (sim *simulator) effect(s *simSession, t int64) {
	if s.outcome == history.TypeFail || s.outcome == history.TypeInfo && !s.commits {
		return
	}
	if s.inject != injectNone && sim.injectEffect(s, t) {
		return
	}
	db := sim.db
	fault, target := "", -1
	if s.fault != "" {
		// Try the chosen fault first, then the others, so that the fault rate is the
		// rate of faults actually injected as far as the transaction allows.
		start := slices.Index(sim.faults, s.fault)
		for i := range sim.faults {
			f := sim.faults[(start+i)%len(sim.faults)]
			if target = sim.faultTarget(s, f); target >= 0 {
				fault = f
				break
			}
		}
	}
	txn := s.invoke
	s.result = slices.Clone(s.ops)
	noopKey, noopPos := int64(-1), -1 // dup-noop: the key and position of the merged append
	for i := range s.result {
		op := &s.result[i]
		k := op.Key
		if op.Append {
			if i == target && fault == FaultDupNoop {
				noopKey, noopPos = k, len(db.lists[k])-1
				continue
			}
			if i == target && fault == FaultLostUpdate {
				db.appendValue(k, op.Value, txn, t)
				db.lostLen[k], db.lostBy[k] = int32(len(db.lists[k])-1), txn
				continue
			}
			db.appendValue(k, op.Value, txn, t)
			continue
		}
		n := len(db.lists[k])
		switch {
		case i == target && fault == FaultStaleRead:
			n = sim.rng.IntN(n)
		case i == target && fault == FaultIntermediateRead:
			n -= 1 + sim.rng.IntN(int(db.lastRun[k])-1)
		}
		op.Read = db.readPrefix(k, n)
		if k == noopKey {
			// The merged append is not the transaction's own: its read view hides it.
			op.Read = slices.Delete(op.Read, noopPos, noopPos+1)
		}
	}
	if fault == FaultAbortedRead {
		s.outcome = history.TypeFail
	}
	s.fault = fault
	if fault != "" && sim.hooks.fault != nil {
		sim.hooks.fault(txn, fault)
	}
	if sim.hooks.commit != nil {
		sim.hooks.commit(simCommit{invoke: txn, time: t, ops: s.result, outcome: s.outcome, fault: fault})
	}
}

// faultTarget returns the micro-op of s's transaction that fault f applies to, given
// the database state just before the transaction, or -1 if f does not apply.
func (sim *simulator) faultTarget(s *simSession, f string) int {
	db := sim.db
	// ownAppends counts the transaction's appends to a key before micro-op i: a fault
	// about another transaction's writes must come before the transaction's own.
	ownAppends := func(i int, k int64) int {
		n := 0
		for _, op := range s.ops[:i] {
			if op.Append && op.Key == k {
				n++
			}
		}
		return n
	}
	for i, op := range s.ops {
		k := op.Key
		switch f {
		case FaultLostUpdate:
			if op.Append {
				return i
			}
		case FaultAbortedRead:
			if op.Append {
				return 0
			}
		case FaultStaleRead:
			if !op.Append && len(db.lists[k])+ownAppends(i, k) > 0 {
				return i
			}
		case FaultIntermediateRead:
			if !op.Append && db.lastRun[k] >= 2 && ownAppends(i, k) == 0 && db.lostLen[k] < 0 {
				return i
			}
		case FaultDupNoop:
			list := db.lists[k]
			n := len(list)
			if !op.Append || n == 0 || list[n-1] != op.Value || ownAppends(i, k) > 0 ||
				db.lastTime[k] <= s.start || db.lostLen[k] >= 0 {
				continue
			}
			// The read that misses the append must not be explainable by an earlier
			// equal value at the end of the list.
			if n >= 2 && list[n-2] == op.Value {
				continue
			}
			for _, later := range s.ops[i+1:] {
				if !later.Append && later.Key == k {
					return i
				}
			}
		}
	}
	return -1
}

// snapshotReads computes the reads of s's transaction from the current committed state
// (or, stale, an older one) plus its own appends (SimSnapshot behaviour, at the invoke).
func (sim *simulator) snapshotReads(s *simSession) {
	s.snapSeq = sim.db.commitSeq
	if sim.opt.Stale > 0 && sim.rng.Float64() < sim.opt.Stale {
		s.snapSeq = max(0, s.snapSeq-1-sim.rng.Int64N(int64(sim.opt.StaleCommits)))
	}
	s.result = slices.Clone(s.ops)
	for i := range s.result {
		op := &s.result[i]
		if op.Append {
			continue
		}
		list := sim.db.lists[op.Key]
		if s.snapSeq < sim.db.commitSeq {
			list = list[:sim.db.lengthAt(op.Key, s.snapSeq)]
		}
		read := make([]int64, len(list), len(list)+len(s.ops))
		copy(read, list)
		for _, own := range s.ops[:i] {
			if own.Append && own.Key == op.Key {
				read = append(read, own.Value)
			}
		}
		op.Read = read
	}
}

// snapshotCommit commits s's transaction at time t with first-committer-wins.
func (sim *simulator) snapshotCommit(s *simSession, t int64) {
	if s.outcome == history.TypeFail || s.outcome == history.TypeInfo && !s.commits {
		return
	}
	db := sim.db
	for _, op := range s.ops {
		if op.Append && db.lastCommit[op.Key] > s.snapSeq {
			if s.outcome == history.TypeOK {
				s.outcome = history.TypeFail
			}
			return
		}
	}
	db.commitSeq++
	for _, op := range s.ops {
		if op.Append {
			db.appendValue(op.Key, op.Value, s.invoke, t)
			db.lastCommit[op.Key] = db.commitSeq
			if sim.opt.Stale > 0 {
				db.recordLength(op.Key)
			}
		}
	}
	if sim.hooks.commit != nil {
		sim.hooks.commit(simCommit{invoke: s.invoke, time: t, ops: s.result, outcome: s.outcome})
	}
}

// recordLength records that key k reached its current length at the current commit.
func (db *simDB) recordLength(k int64) {
	for int64(len(db.lenSeq)) <= k {
		db.lenSeq = append(db.lenSeq, nil)
	}
	db.lenSeq[k] = append(db.lenSeq[k], db.commitSeq)
}

// lengthAt returns key k's length as of commit seq (recordLength kept its history).
func (db *simDB) lengthAt(k, seq int64) int {
	if k >= int64(len(db.lenSeq)) {
		return 0
	}
	n, _ := slices.BinarySearch(db.lenSeq[k], seq+1)
	return n
}
