package brute

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"doppel/history"
)

// Strategy is how Random produces a history.
type Strategy uint8

const (
	// Mixed picks one of the strategies below, each with the same probability.
	Mixed Strategy = iota
	// Serial executes the transactions one at a time against real lists, in an order
	// that respects real time, or only process order, or nothing.
	Serial
	// SnapshotLike reads from a snapshot taken at a transaction's start and installs its
	// appends at its commit, interleaved; a third of the histories enforce
	// first-committer-wins (a conflicting transaction fails), the others allow lost updates.
	SnapshotLike
	// Corrupted takes a Serial or SnapshotLike history and mutates one or two reads.
	Corrupted
	// FailInfo adds :fail transactions (whose appends sometimes do show up) and :info ones
	// (whose appends sometimes took effect) to a Serial or SnapshotLike history.
	FailInfo
	// Realtime executes serially, mostly in real-time order, but moves one transaction's
	// execution elsewhere, often breaking real-time or process order only.
	Realtime
	numStrategies = int(Realtime)
)

var strategyNames = [...]string{"mixed", "serial", "snapshot-like", "corrupted", "fail-info", "realtime"}

func (s Strategy) String() string {
	if int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return "strategy" + strconv.Itoa(int(s))
}

// Strategies lists the concrete strategies (all but Mixed).
var Strategies = []Strategy{Serial, SnapshotLike, Corrupted, FailInfo, Realtime}

// Config shapes random histories. Zero fields take the defaults in brackets.
type Config struct {
	MinTxns, MaxTxns int // transactions per history [2, 8]
	MaxKeys          int // keys per history: 1..MaxKeys [3]
	MaxProcesses     int // concurrent clients: 1..MaxProcesses [3]
	MaxOps           int // micro-ops per transaction: 1..MaxOps [4]
	Values           int // appended values are 1..Values [2]
	Strategy         Strategy
}

func (c Config) withDefaults() Config {
	if c.MinTxns <= 0 {
		c.MinTxns = 2
	}
	if c.MaxTxns <= 0 {
		c.MaxTxns = 8
	}
	c.MaxTxns = max(c.MaxTxns, c.MinTxns)
	if c.MaxKeys <= 0 {
		c.MaxKeys = 3
	}
	if c.MaxProcesses <= 0 {
		c.MaxProcesses = 3
	}
	if c.MaxOps <= 0 {
		c.MaxOps = 4
	}
	if c.Values <= 0 {
		c.Values = 2
	}
	return c
}

// Generated is a random history with what its construction guarantees.
type Generated struct {
	H        *history.History
	Strategy Strategy
	// Guaranteed lists the models the history satisfies by construction (it may satisfy
	// others too).
	Guaranteed []string
}

// Random returns a random tiny history with heavy value duplication.
func Random(rng *rand.Rand, cfg Config) *history.History {
	return Generate(rng, cfg).H
}

// execution orders of the serial strategies
const (
	orderRealTime = iota // each transaction runs at a moment between its invoke and completion
	orderSession         // each process's transactions run in order; processes interleave freely
	orderAny             // any order
)

// gtxn is a transaction under construction.
type gtxn struct {
	ops      []history.MicroOp // reads: Start/End index into reads
	reads    []int32
	status   history.Status
	applied  bool // its appends take effect (always for :ok)
	client   int
	inv, cmp int // event positions; cmp = -1: never completed
	// start and commit are the moments (on the event time line) it reads its snapshot
	// and installs its appends; equal for serial executions.
	start, commit float64
	process       int32
}

// Generate returns a random tiny history, the strategy that made it, and the models it
// satisfies by construction.
func Generate(rng *rand.Rand, cfg Config) Generated {
	cfg = cfg.withDefaults()
	strategy := cfg.Strategy
	if strategy == Mixed || int(strategy) > numStrategies {
		strategy = Strategies[rng.IntN(len(Strategies))]
	}
	n := cfg.MinTxns + rng.IntN(cfg.MaxTxns-cfg.MinTxns+1)
	nkeys := 1 + rng.IntN(cfg.MaxKeys)
	clients := 1 + rng.IntN(cfg.MaxProcesses)
	if strategy == SnapshotLike && cfg.MaxProcesses > 1 {
		clients = 2 + rng.IntN(cfg.MaxProcesses-1) // concurrency is the point
	}
	readFrac := []float64{0.3, 0.5, 0.7}[rng.IntN(3)]

	txns := make([]gtxn, n)
	for i := range txns {
		t := &txns[i]
		t.status, t.applied = history.OK, true
		t.client = rng.IntN(clients)
		for m := 1 + rng.IntN(cfg.MaxOps); len(t.ops) < m; {
			op := history.MicroOp{Key: int32(rng.IntN(nkeys))}
			if rng.Float64() < readFrac {
				op.Kind = history.Read
			} else {
				op.Kind = history.Append
				op.Value = int32(rng.IntN(cfg.Values))
				// Read-modify-write makes concurrent appends observable (lost updates).
				if len(t.ops)+1 < m && rng.IntN(3) == 0 {
					t.ops = append(t.ops, history.MicroOp{Kind: history.Read, Key: op.Key})
				}
			}
			t.ops = append(t.ops, op)
		}
	}

	// How the transactions execute.
	snapshotLike := strategy == SnapshotLike
	firstCommitterWins := true
	order := orderRealTime
	switch strategy {
	case Serial:
		order = rng.IntN(3)
	case SnapshotLike:
		firstCommitterWins = rng.IntN(3) == 0
	case Corrupted, FailInfo:
		if rng.IntN(3) == 0 {
			snapshotLike = true
			firstCommitterWins = rng.IntN(2) == 0
		} else {
			order = rng.IntN(3)
		}
	}
	failApplied := false
	if strategy == FailInfo {
		some := false
		for !some {
			for i := range txns {
				switch rng.IntN(4) {
				case 0:
					txns[i].status, txns[i].applied = history.Fail, rng.IntN(3) > 0
					failApplied = failApplied || txns[i].applied
					some = true
				case 1:
					txns[i].status, txns[i].applied = history.Info, rng.IntN(2) == 0
					some = true
				}
			}
		}
	}

	// A tenth of the histories have no invokes (completions only), as some tools write.
	noInvokes := rng.IntN(10) == 0
	events := timeline(rng, txns, clients, !noInvokes)
	end := float64(events)
	switch {
	case snapshotLike:
		// Long transactions (start early, commit late) overlap more; half the
		// snapshots are stale (taken any time before the commit), which SI allows.
		// (The first-committer-wins check below uses these moments, not positions.)
		for i := range txns {
			t := &txns[i]
			a, b := within(rng, t, end), within(rng, t, end)
			t.start, t.commit = min(a, b)/4+float64(t.inv)*3/4, max(a, b)
			if rng.IntN(2) == 0 {
				t.start = rng.Float64() * t.commit
			}
		}
		executeSnapshot(txns, nkeys, firstCommitterWins)
	default:
		switch order {
		case orderRealTime:
			for i := range txns {
				txns[i].commit = within(rng, &txns[i], end)
			}
		case orderSession:
			// Random moments, then each client's sorted into its own order.
			for c := range clients {
				var idx []int
				var times []float64
				for i := range txns {
					if txns[i].client == c {
						idx = append(idx, i)
						times = append(times, rng.Float64()*end)
					}
				}
				sort.Float64s(times)
				for j, i := range idx {
					txns[i].commit = times[j]
				}
			}
		case orderAny:
			for i := range txns {
				txns[i].commit = rng.Float64() * end
			}
		}
		if strategy == Realtime {
			// Move one transaction's execution: to anywhere, or just before the previous
			// transaction of its client (a process-order inversion).
			i := rng.IntN(n)
			prev := -1
			for j := range txns[:i] {
				if txns[j].client == txns[i].client {
					prev = j
				}
			}
			if prev >= 0 && rng.IntN(2) == 0 {
				txns[i].commit = txns[prev].commit - rng.Float64()
			} else {
				txns[i].commit = rng.Float64() * end
			}
		}
		for i := range txns {
			txns[i].start = txns[i].commit
		}
		executeSerial(txns, nkeys)
	}

	var guaranteed []string
	switch {
	case strategy == Corrupted || failApplied:
	case snapshotLike:
		if firstCommitterWins {
			guaranteed = []string{SnapshotIsolation}
		}
	case strategy == Realtime:
		guaranteed = []string{Serializable, SnapshotIsolation}
	default:
		switch order {
		case orderRealTime:
			guaranteed = slices.Clone(Models)
		case orderSession:
			guaranteed = []string{Serializable, StrongSessionSerializable, SnapshotIsolation}
		case orderAny:
			guaranteed = []string{Serializable, SnapshotIsolation}
		}
	}
	if strategy == Corrupted {
		corrupt(rng, txns, cfg.Values)
		if rng.IntN(4) == 0 {
			corrupt(rng, txns, cfg.Values)
		}
	}
	return Generated{
		H:          build(txns, nkeys, cfg.Values, events, noInvokes),
		Strategy:   strategy,
		Guaranteed: guaranteed,
	}
}

// timeline interleaves the clients' transactions into invoke and completion events, a
// client invoking its next transaction only after its previous one completed, and sets
// inv and cmp. A client's last transaction, if :info, sometimes never completes (when
// neverComplete allows). It returns the number of events.
func timeline(rng *rand.Rand, txns []gtxn, clients int, neverComplete bool) int {
	queue := make([][]int, clients)
	for i := range txns {
		queue[txns[i].client] = append(queue[txns[i].client], i)
	}
	open := make([]int, clients)
	for c := range open {
		open[c] = -1
	}
	pos := 0
	for {
		// Clients that can invoke, and clients that can complete; invoking first more
		// often makes transactions overlap.
		var invokers, completers []int
		for c := range clients {
			if open[c] >= 0 {
				completers = append(completers, c)
			} else if len(queue[c]) > 0 {
				invokers = append(invokers, c)
			}
		}
		if len(invokers)+len(completers) == 0 {
			return pos
		}
		var c int
		if len(completers) == 0 || len(invokers) > 0 && rng.IntN(3) < 2 {
			c = invokers[rng.IntN(len(invokers))]
		} else {
			c = completers[rng.IntN(len(completers))]
		}
		if i := open[c]; i >= 0 {
			t := &txns[i]
			if neverComplete && t.status == history.Info && len(queue[c]) == 0 && rng.IntN(2) == 0 {
				t.cmp = -1 // never completes
			} else {
				t.cmp = pos
				pos++
			}
			open[c] = -1
			continue
		}
		i := queue[c][0]
		queue[c] = queue[c][1:]
		txns[i].inv = pos
		pos++
		open[c] = i
	}
}

// within returns a random moment between t's invoke and completion (or the end).
func within(rng *rand.Rand, t *gtxn, end float64) float64 {
	hi := end
	if t.cmp >= 0 {
		hi = float64(t.cmp)
	}
	lo := float64(t.inv)
	return lo + (hi-lo)*(0.01+0.98*rng.Float64())
}

// executeSerial runs the applied transactions one at a time in commit order, recording
// what the reads of :ok ones return.
func executeSerial(txns []gtxn, nkeys int) {
	lists := make([][]int32, nkeys)
	for _, i := range byTime(txns, func(t *gtxn) float64 { return t.commit }) {
		t := &txns[i]
		if !t.applied {
			continue
		}
		for j := range t.ops {
			op := &t.ops[j]
			if op.Kind == history.Append {
				lists[op.Key] = append(lists[op.Key], op.Value)
			} else if t.status == history.OK {
				t.record(op, lists[op.Key])
			}
		}
	}
}

// executeSnapshot reads each transaction's view at its start (committed lists plus its own
// appends) and installs its appends at its commit; with first-committer-wins, a
// transaction whose key another transaction committed to after its start fails instead
// (an :info one then did not take effect).
func executeSnapshot(txns []gtxn, nkeys int, firstCommitterWins bool) {
	type moment struct {
		at     float64
		txn    int
		commit bool
	}
	var ms []moment
	for i := range txns {
		ms = append(ms, moment{txns[i].start, i, false}, moment{txns[i].commit, i, true})
	}
	sort.SliceStable(ms, func(a, b int) bool { return ms[a].at < ms[b].at })
	lists := make([][]int32, nkeys)
	lastCommit := make([]float64, nkeys)
	for x := range lastCommit {
		lastCommit[x] = -1
	}
	view := make([][]int32, nkeys)
	for _, m := range ms {
		t := &txns[m.txn]
		if !m.commit {
			for x := range view {
				view[x] = append(view[x][:0], lists[x]...)
			}
			for j := range t.ops {
				op := &t.ops[j]
				if op.Kind == history.Append {
					view[op.Key] = append(view[op.Key], op.Value)
				} else if t.status == history.OK {
					t.record(op, view[op.Key])
				}
			}
			continue
		}
		if !t.applied {
			continue
		}
		if firstCommitterWins {
			conflict := false
			for _, op := range t.ops {
				if op.Kind == history.Append && lastCommit[op.Key] > t.start {
					conflict = true
				}
			}
			if conflict {
				t.applied = false
				if t.status == history.OK {
					t.status = history.Fail
				}
				continue
			}
		}
		for _, op := range t.ops {
			if op.Kind == history.Append {
				lists[op.Key] = append(lists[op.Key], op.Value)
				lastCommit[op.Key] = t.commit
			}
		}
	}
}

// record sets op's result to list.
func (t *gtxn) record(op *history.MicroOp, list []int32) {
	op.Known = true
	op.Start = int32(len(t.reads))
	t.reads = append(t.reads, list...)
	op.End = int32(len(t.reads))
}

// byTime returns the transaction indices sorted by f.
func byTime(txns []gtxn, f func(*gtxn) float64) []int {
	idx := make([]int, len(txns))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return f(&txns[idx[a]]) < f(&txns[idx[b]]) })
	return idx
}

// corrupt mutates one known read of an :ok transaction: drops, duplicates, swaps or
// changes a value, truncates or extends the list.
func corrupt(rng *rand.Rand, txns []gtxn, values int) {
	type ref struct{ t, op int }
	var reads []ref
	for i := range txns {
		for j, op := range txns[i].ops {
			if op.Kind == history.Read && op.Known {
				reads = append(reads, ref{i, j})
			}
		}
	}
	if len(reads) == 0 {
		return
	}
	r := reads[rng.IntN(len(reads))]
	t := &txns[r.t]
	op := &t.ops[r.op]
	list := slices.Clone(t.reads[op.Start:op.End])
	n := len(list)
	switch kind := rng.IntN(6); {
	case n == 0 || kind == 0: // extend
		list = append(list, int32(rng.IntN(values)))
	case kind == 1: // drop one
		i := rng.IntN(n)
		list = slices.Delete(list, i, i+1)
	case kind == 2: // duplicate one
		i := rng.IntN(n)
		list = slices.Insert(list, i, list[i])
	case kind == 3 && n >= 2: // swap two adjacent
		i := rng.IntN(n - 1)
		list[i], list[i+1] = list[i+1], list[i]
	case kind == 4: // change one
		i := rng.IntN(n)
		list[i] = (list[i] + 1 + int32(rng.IntN(max(values-1, 1)))) % int32(values)
	default: // truncate
		list = list[:rng.IntN(n)]
	}
	// The new list goes at the end of the transaction's read values.
	op.Start = int32(len(t.reads))
	t.reads = append(t.reads, list...)
	op.End = int32(len(t.reads))
}

// build lays the transactions out as a History: in completion order (never-completed ones
// last, in invoke order), with a new process id for a client after each :info (as Jepsen
// does). Without invokes, positions count completions only and Invoke is -1.
func build(txns []gtxn, nkeys, values, events int, noInvokes bool) *history.History {
	h := &history.History{Source: "brute.Random"}
	for k := range nkeys {
		h.Keys = append(h.Keys, strconv.Itoa(k))
	}
	for v := range values {
		h.Values = append(h.Values, strconv.Itoa(v+1))
	}
	// Processes, in each client's invoke order.
	clientProc := map[int]int32{}
	for _, i := range byTime(txns, func(t *gtxn) float64 { return float64(t.inv) }) {
		t := &txns[i]
		p, ok := clientProc[t.client]
		if !ok {
			p = int32(len(h.Processes))
			h.Processes = append(h.Processes, strconv.Itoa(len(h.Processes)))
		}
		t.process = p
		clientProc[t.client] = p
		if t.status == history.Info {
			delete(clientProc, t.client)
		}
	}
	// Completion order; never-completed transactions last, by invoke.
	key := func(t *gtxn) float64 {
		if t.cmp < 0 {
			return float64(events + t.inv)
		}
		return float64(t.cmp)
	}
	if noInvokes {
		// Renumber positions as completions only.
		pos := 0
		for _, i := range byTime(txns, key) {
			if txns[i].cmp >= 0 {
				txns[i].cmp = pos
				pos++
			}
		}
		events = pos
	}
	for _, i := range byTime(txns, key) {
		t := &txns[i]
		tx := history.Txn{
			Status:   t.status,
			Process:  t.process,
			Invoke:   int32(t.inv),
			Complete: int32(t.cmp),
			OpStart:  int32(len(h.Ops)),
		}
		if noInvokes {
			tx.Invoke = -1
		}
		if t.status == history.Info {
			tx.Complete = -1
		}
		at := t.cmp
		if at < 0 {
			at = t.inv
		}
		tx.Index = int64(at)
		tx.Line = int32(at + 1)
		for _, op := range t.ops {
			if op.Kind == history.Read {
				if op.Known && t.status == history.OK {
					start := int32(len(h.ReadValues))
					h.ReadValues = append(h.ReadValues, t.reads[op.Start:op.End]...)
					op.Start, op.End = start, int32(len(h.ReadValues))
				} else {
					op.Known, op.Start, op.End = false, 0, 0
				}
			}
			h.Ops = append(h.Ops, op)
		}
		tx.OpEnd = int32(len(h.Ops))
		h.Txns = append(h.Txns, tx)
	}
	h.Events = events
	return h
}
