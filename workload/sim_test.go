package workload

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"doppel/history"
)

// simEvents runs the simulation and returns its events and commits.
func simEvents(t testing.TB, spec Spec, opt SimOptions) ([]*history.Event, []simCommit, map[int64]string) {
	t.Helper()
	var events []*history.Event
	var commits []simCommit
	faults := map[int64]string{}
	hooks := simHooks{
		commit: func(c simCommit) { commits = append(commits, c) },
		fault:  func(invoke int64, f string) { faults[invoke] = f },
	}
	_, err := simulate(spec, opt, func(e *history.Event) error { events = append(events, e); return nil }, hooks)
	if err != nil {
		t.Fatal(err)
	}
	return events, commits, faults
}

// simTxn is a transaction of a simulated history, its invoke paired with its completion.
type simTxn struct {
	invoke, complete *history.Event
	session          int
}

// pairTxns checks the process discipline of a history and pairs its events: each
// process belongs to one session (process % sessions), has at most one open
// transaction, and runs nothing after an :info.
func pairTxns(t *testing.T, spec Spec, events []*history.Event) map[int64]*simTxn {
	t.Helper()
	open := map[int64]*simTxn{}    // by process
	txns := map[int64]*simTxn{}    // by invoke index
	retired := map[int64]bool{}    // processes that completed with :info
	sessionProc := map[int]int64{} // current process of each session
	lastTime := int64(-1)
	for i, e := range events {
		if e.Index != int64(i) {
			t.Fatalf("event %d has :index %d", i, e.Index)
		}
		if e.Time < lastTime {
			t.Fatalf("event %d: time %d before %d", i, e.Time, lastTime)
		}
		lastTime = e.Time
		if retired[e.Process] {
			t.Fatalf("event %d: process %d used after its :info", i, e.Process)
		}
		session := int(e.Process % int64(spec.Sessions))
		if p, ok := sessionProc[session]; ok && p != e.Process {
			if !retired[p] {
				t.Fatalf("event %d: session %d switched from process %d to %d without :info", i, session, p, e.Process)
			}
		}
		sessionProc[session] = e.Process
		if e.Type == history.TypeInvoke {
			if open[e.Process] != nil {
				t.Fatalf("event %d: process %d invokes with a transaction open", i, e.Process)
			}
			if len(e.Value) != spec.Ops {
				t.Fatalf("event %d: %d micro-ops, want %d", i, len(e.Value), spec.Ops)
			}
			tx := &simTxn{invoke: e, session: session}
			open[e.Process], txns[e.Index] = tx, tx
			continue
		}
		tx := open[e.Process]
		if tx == nil {
			t.Fatalf("event %d: completion without invoke", i)
		}
		if len(e.Value) != len(tx.invoke.Value) {
			t.Fatalf("event %d: completion has %d micro-ops, invoke %d", i, len(e.Value), len(tx.invoke.Value))
		}
		for j, op := range e.Value {
			inv := tx.invoke.Value[j]
			if op.Append != inv.Append || op.Key != inv.Key || op.Value != inv.Value {
				t.Fatalf("event %d: micro-op %d differs from its invoke", i, j)
			}
			if !op.Append && (op.Read == nil) != (e.Type != history.TypeOK) {
				t.Fatalf("event %d (%v): read %d known=%v", i, e.Type, j, op.Read != nil)
			}
		}
		tx.complete = e
		delete(open, e.Process)
		if e.Type == history.TypeInfo {
			retired[e.Process] = true
		}
	}
	if len(open) != 0 {
		t.Fatalf("%d transactions never completed", len(open))
	}
	if len(txns) != spec.Txns {
		t.Fatalf("%d transactions, want %d", len(txns), spec.Txns)
	}
	return txns
}

func contendedSpec() Spec {
	s := DefaultSpec()
	s.Sessions, s.Txns, s.Keys, s.Ops = 6, 1500, 6, 4
	return s
}

func TestSimulateDeterministic(t *testing.T) {
	gen := func(spec Spec, opt SimOptions, write func(io.Writer, *history.Event) error) []byte {
		var buf bytes.Buffer
		if err := Simulate(spec, opt, func(e *history.Event) error { return write(&buf, e) }); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	spec := contendedSpec()
	for _, opt := range []SimOptions{
		{Behaviour: SimSerializable, Info: 0.05, Fail: 0.05},
		{Behaviour: SimSnapshot},
		{Behaviour: SimFaulty, FaultRate: 0.2},
	} {
		a, b := gen(spec, opt, history.WriteEDN), gen(spec, opt, history.WriteEDN)
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s: same seed gave different histories", opt.Behaviour)
		}
		if j1, j2 := gen(spec, opt, history.WriteJSON), gen(spec, opt, history.WriteJSON); !bytes.Equal(j1, j2) {
			t.Errorf("%s: same seed gave different JSON histories", opt.Behaviour)
		}
		other := spec
		other.Seed++
		if bytes.Equal(a, gen(other, opt, history.WriteEDN)) {
			t.Errorf("%s: seeds 1 and 2 gave the same history", opt.Behaviour)
		}
	}
}

func TestSimulateRejectsBadOptions(t *testing.T) {
	spec := DefaultSpec()
	for _, opt := range []SimOptions{
		{Behaviour: "eventual"},
		{Info: -0.1},
		{Fail: 2},
		{Info: 0.6, Fail: 0.6},
		{Behaviour: SimFaulty, Faults: []string{"lost-update", "gremlins"}},
		{Behaviour: SimFaulty, FaultRate: 1.5},
	} {
		if err := Simulate(spec, opt, func(*history.Event) error { return nil }); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
	spec.Keys = 0
	if err := Simulate(spec, SimOptions{}, func(*history.Event) error { return nil }); err == nil {
		t.Error("bad spec accepted")
	}
}

// TestSerializableReplay replays the simulator's effect order against a serial executor
// and checks the history's reads, outcomes and real-time placement against it.
func TestSerializableReplay(t *testing.T) {
	spec := contendedSpec()
	spec.DupKeys = 0.5
	opt := SimOptions{Behaviour: SimSerializable, Info: 0.1, Fail: 0.1}
	events, commits, _ := simEvents(t, spec, opt)
	txns := pairTxns(t, spec, events)

	state := map[int64][]int64{}
	committed := map[int64]bool{}
	lastEffect := int64(-1)
	for _, c := range commits {
		tx := txns[c.invoke]
		if tx == nil {
			t.Fatalf("commit of unknown transaction %d", c.invoke)
		}
		if c.time <= tx.invoke.Time || c.time >= tx.complete.Time || c.time < lastEffect {
			t.Fatalf("transaction %d took effect at %d, outside (%d, %d) or before %d",
				c.invoke, c.time, tx.invoke.Time, tx.complete.Time, lastEffect)
		}
		lastEffect = c.time
		committed[c.invoke] = true
		for j, op := range c.ops {
			if op.Append {
				state[op.Key] = append(state[op.Key], op.Value)
				continue
			}
			if !slices.Equal(op.Read, state[op.Key]) || op.Read == nil {
				t.Fatalf("transaction %d read %d of key %d = %v, serial state %v", c.invoke, j, op.Key, op.Read, state[op.Key])
			}
			if tx.complete.Type == history.TypeOK && !slices.Equal(tx.complete.Value[j].Read, op.Read) {
				t.Fatalf("transaction %d: history read %v, effect read %v", c.invoke, tx.complete.Value[j].Read, op.Read)
			}
		}
	}
	var ok, fail, info, infoCommitted int
	for idx, tx := range txns {
		switch tx.complete.Type {
		case history.TypeOK:
			ok++
			if !committed[idx] {
				t.Fatalf(":ok transaction %d never took effect", idx)
			}
		case history.TypeFail:
			fail++
			if committed[idx] {
				t.Fatalf(":fail transaction %d took effect", idx)
			}
		case history.TypeInfo:
			info++
			if committed[idx] {
				infoCommitted++
			}
		}
	}
	n := float64(spec.Txns)
	if !near(float64(fail)/n, 0.1, 0.03) || !near(float64(info)/n, 0.1, 0.03) {
		t.Errorf("%d :fail and %d :info of %d, want about 10%% each", fail, info, spec.Txns)
	}
	if infoCommitted == 0 || infoCommitted == info {
		t.Errorf("%d of %d :info transactions committed, want some but not all", infoCommitted, info)
	}
}

// TestSimulateOverlap checks that transactions of different sessions run concurrently.
func TestSimulateOverlap(t *testing.T) {
	spec := contendedSpec()
	events, _, _ := simEvents(t, spec, SimOptions{})
	openTxns, maxOpen, overlapped := 0, 0, 0
	for _, e := range events {
		if e.Type == history.TypeInvoke {
			if openTxns > 0 {
				overlapped++
			}
			openTxns++
			maxOpen = max(maxOpen, openTxns)
		} else {
			openTxns--
		}
	}
	if maxOpen < spec.Sessions/2 || overlapped < spec.Txns/2 {
		t.Errorf("at most %d transactions open at once; %d of %d invoked while another was open",
			maxOpen, overlapped, spec.Txns)
	}
}

// TestSnapshotFirstCommitterWins checks that no two committed transactions with
// overlapping intervals append the same key, that contention causes aborts, and that
// reads see the state committed before the invoke plus the transaction's own appends.
func TestSnapshotFirstCommitterWins(t *testing.T) {
	spec := contendedSpec()
	events, commits, _ := simEvents(t, spec, SimOptions{Behaviour: SimSnapshot})
	txns := pairTxns(t, spec, events)
	fails := 0
	for _, tx := range txns {
		if tx.complete.Type == history.TypeFail {
			fails++
		}
	}
	if fails < spec.Txns/20 {
		t.Errorf("only %d of %d transactions aborted under contention", fails, spec.Txns)
	}
	// Replay commits in order; check each committed transaction's reads against the
	// state as of its invoke.
	type version struct {
		time int64
		list []int64
	}
	history_ := map[int64][]version{} // per key, the committed versions in commit order
	lastWriter := map[int64]*simTxn{}
	for _, c := range commits {
		tx := txns[c.invoke]
		if tx.complete.Type == history.TypeFail || c.time != tx.complete.Time {
			t.Fatalf("transaction %d committed at %d, completed %v at %d", c.invoke, c.time, tx.complete.Type, tx.complete.Time)
		}
		for j, op := range c.ops {
			if op.Append {
				continue
			}
			var snap []int64
			for _, v := range history_[op.Key] {
				if v.time <= tx.invoke.Time {
					snap = v.list
				}
			}
			want := slices.Clone(snap)
			for _, own := range c.ops[:j] {
				if own.Append && own.Key == op.Key {
					want = append(want, own.Value)
				}
			}
			if !slices.Equal(op.Read, want) {
				t.Fatalf("transaction %d read key %d = %v, snapshot + own = %v", c.invoke, op.Key, op.Read, want)
			}
		}
		for _, op := range c.ops {
			if !op.Append {
				continue
			}
			if w := lastWriter[op.Key]; w != nil && w != tx && w.complete.Time > tx.invoke.Time {
				t.Fatalf("concurrent transactions %d and %d both committed appends to key %d",
					w.invoke.Index, c.invoke, op.Key)
			}
			lastWriter[op.Key] = tx
			vs := history_[op.Key]
			var prev []int64
			if len(vs) > 0 {
				prev = vs[len(vs)-1].list
			}
			history_[op.Key] = append(vs, version{c.time, append(slices.Clone(prev), op.Value)})
		}
	}
}

// TestFaultsFire checks that each fault, alone at rate 1, is injected and leaves the
// trace it should in the history.
func TestFaultsFire(t *testing.T) {
	spec := contendedSpec()
	spec.ValDomain = 3 // duplicates are frequent, so dup-noop finds equal values
	for _, f := range AllFaults {
		opt := SimOptions{Behaviour: SimFaulty, Faults: []string{f}, FaultRate: 1}
		events, commits, faults := simEvents(t, spec, opt)
		txns := pairTxns(t, spec, events)
		count := 0
		for invoke, got := range faults {
			if got != f {
				t.Fatalf("fault %q injected, only %q enabled", got, f)
			}
			count++
			if f == FaultAbortedRead && txns[invoke].complete.Type != history.TypeFail {
				t.Fatalf("aborted-read transaction %d completed %v", invoke, txns[invoke].complete.Type)
			}
		}
		t.Logf("%s: injected in %d of %d transactions", f, count, spec.Txns)
		if count < spec.Txns/100 {
			t.Errorf("%s: injected in only %d of %d transactions", f, count, spec.Txns)
		}
		if f == FaultDupNoop {
			// Some read must not end with the transaction's own preceding appends.
			missed := 0
			for _, c := range commits {
				if c.fault == "" {
					continue
				}
				for j, op := range c.ops {
					if op.Append {
						continue
					}
					var own []int64
					for _, prev := range c.ops[:j] {
						if prev.Append && prev.Key == op.Key {
							own = append(own, prev.Value)
						}
					}
					n := len(op.Read)
					if len(own) > 0 && (n < len(own) || !slices.Equal(op.Read[n-len(own):], own)) {
						missed++
					}
				}
			}
			if missed == 0 {
				t.Errorf("dup-noop: no read misses its transaction's own append")
			}
		}
	}
}

func BenchmarkSimulate(b *testing.B) {
	spec := DefaultSpec()
	spec.Sessions, spec.Txns, spec.Keys = 16, 20000, 1000
	events := 0
	for b.Loop() {
		events = 0
		err := Simulate(spec, SimOptions{}, func(e *history.Event) error {
			events++
			return history.WriteEDN(io.Discard, e)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// TestSimulatedHistoriesParse checks that both output formats of a simulated history
// read back as the same transactions.
func TestSimulatedHistoriesParse(t *testing.T) {
	spec := contendedSpec()
	spec.Txns = 300
	opt := SimOptions{Behaviour: SimSerializable, Info: 0.1, Fail: 0.1}
	events, _, _ := simEvents(t, spec, opt)
	outcomes := map[history.Status]int{}
	for _, write := range []func(io.Writer, *history.Event) error{history.WriteEDN, history.WriteJSON} {
		var buf bytes.Buffer
		for _, e := range events {
			if err := write(&buf, e); err != nil {
				t.Fatal(err)
			}
		}
		h, err := history.Parse(&buf, "sim")
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Txns) != spec.Txns {
			t.Fatalf("parsed %d transactions, want %d", len(h.Txns), spec.Txns)
		}
		clear(outcomes)
		for _, tx := range h.Txns {
			outcomes[tx.Status]++
		}
		if outcomes[history.OK] == 0 || outcomes[history.Fail] == 0 || outcomes[history.Info] == 0 {
			t.Fatalf("parsed outcomes %v, want some of each", outcomes)
		}
	}
}
