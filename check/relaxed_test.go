package check_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/workload"
)

// TestRelaxedWitnessProvesReadCommitted: dense histories with an injected lost update or
// G-single, which read committed allows, where the read-by-read replay gets lost among
// the duplicates and no serial witness exists; the relaxed witness proves them with
// the solver held to one conflict (before it, unknown: the per-read problem at 1000
// transactions is 630K variables). The strong forms it proves only where they hold:
// a lost update's loser is refuted under process order.
func TestRelaxedWitnessProvesReadCommitted(t *testing.T) {
	for _, c := range []struct {
		txns   int
		seed   int64
		inject string
		valid  []string // models the witness must prove
	}{
		{1000, 20, "lost-update", []string{"read-committed"}},
		{3000, 11, "lost-update", []string{"read-committed"}},
		{3000, 20, "lost-update", []string{"read-committed"}},
		{1000, 20, "g-single", []string{"read-committed", "strong-session-read-committed", "strong-read-committed"}},
	} {
		h := denseHistory(t, c.txns, c.seed, c.inject)
		for _, m := range c.valid {
			res, err := check.Check(h, check.Options{Models: []string{m}, MaxConflicts: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.Valid != check.Valid || res.Stats.Witnessed == 0 || res.Stats.ReplayRejected != 0 {
				t.Errorf("%s seed %d, %d transactions, %s: %v (%d witnessed, %d rejected); want valid by a witness",
					c.inject, c.seed, c.txns, m, res.Valid, res.Stats.Witnessed, res.Stats.ReplayRejected)
			}
		}
	}
	// Asked with serializable, whose decision diagnoses the lost update's key on the
	// one-base inference first (findings there say nothing about read committed).
	h := denseHistory(t, 1000, 20, "lost-update")
	res, err := check.Check(h, check.Options{Models: []string{"read-committed", "serializable"}, MaxConflicts: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, mr := range res.Models {
		if want := mr.Model == "read-committed"; (mr.Valid == check.Valid) != want {
			t.Errorf("lost-update seed 20, 1000 transactions, with serializable: %s %v, want valid=%v", mr.Model, mr.Valid, want)
		}
	}
}

// TestRelaxedWitnessSearchesFromTheEnd: a lost update injected among 1,000 transactions
// of 30 clients on 50 zipf-skewed keys with values 1..6 (drawn by bench's sweep, seed
// 777, no. 24). With the loser's read left unknown the history is serializable, but
// only the serial search from the end finds the order (the forward replays and search
// get lost among the duplicates); read committed went on to the solver (705K conflicts
// in 120 s, no verdict). Read uncommitted alone runs the same witness (its own leaves
// every read but the longest unknown and found nothing in 20 s). Both are proved with
// the solver held to one conflict.
func TestRelaxedWitnessSearchesFromTheEnd(t *testing.T) {
	h := zipfLostUpdate(t, 1000, 687066)
	for _, m := range []string{"read-committed", "read-uncommitted"} {
		res, err := check.Check(h, check.Options{Models: []string{m}, MaxConflicts: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid != check.Valid || res.Stats.Witnessed == 0 || res.Stats.ReplayRejected != 0 {
			t.Errorf("%s: %v (%s; %d witnessed, %d rejected); want valid by a witness",
				m, res.Valid, res.Message, res.Stats.Witnessed, res.Stats.ReplayRejected)
		}
	}
}

// TestRelaxedWitnessSolves: the same family at 5,000 transactions. With the loser's read
// left unknown the history is serializable, but neither the replays nor the serial
// searches (forward and from the end) find an order; the narrowed problem of the
// relaxed history does, in a few dozen conflicts, and its solution's order is verified
// read by read on the real history. Read committed was unknown after 20 s before.
func TestRelaxedWitnessSolves(t *testing.T) {
	h := zipfLostUpdate(t, 5000, 1)
	// The history without the loser (lostLeftOut) has a serial order the replays find.
	check.SkipLostLeftOut(true)
	defer check.SkipLostLeftOut(false)
	phases := validWithPhases(t, h, "read-committed")
	solved := false
	for _, p := range phases {
		solved = solved || strings.HasSuffix(p, "with reads relaxed") && strings.HasPrefix(p, "deciding ")
	}
	if !solved {
		t.Errorf("no solver ran on the relaxed history: %q", phases)
	}
}

// TestRelaxedWitnessLeavesTheLoserOut: a lost update injected halfway through 5,000
// transactions of 30 clients on 200 hotspot keys of two values, 5% :info (bench's
// sweep-99-6 family). The loser's append is lost: no later list shows it, so a serial
// order of the history with the loser's read left unknown must put its block past the
// trace, and on keys of two values the replays, the searches and the solver tried it
// at every earlier position where its value repeats (read committed and read
// uncommitted: unknown after 20 s at 5K and 10K, every seed tried). Without the loser
// the history is serializable and its own serial replays find the order; the loser
// commits last, which the verification on the real history accepts.
func TestRelaxedWitnessLeavesTheLoserOut(t *testing.T) {
	h := hotLostUpdate(t, 5000, 1)
	for _, m := range []string{"read-committed", "read-uncommitted"} {
		provedBy(t, h, m, "replaying serially without the lost updates' losers", "the history without the loser", func(p string) bool {
			return strings.HasSuffix(p, "with reads relaxed") || strings.Contains(p, "for a witness")
		})
	}
}

// TestNoSerialAttemptsWhereALostUpdateWasFound: the hot family of
// TestRelaxedWitnessLeavesTheLoserOut at 2,000 transactions, seed 2. A lost update
// leaves no serial order, but read committed's and read uncommitted's paths still ran
// their quick serial attempts first (the strict search within its windows: 6.6 of the
// check's 6.9 s); now the relaxed witness comes first and proves both.
func TestNoSerialAttemptsWhereALostUpdateWasFound(t *testing.T) {
	h := hotLostUpdate(t, 2000, 2)
	for _, m := range []string{"read-committed", "read-uncommitted"} {
		for _, p := range validWithPhases(t, h, m) {
			if p == "replaying serially without the lost updates' losers" {
				break
			}
			if strings.Contains(p, "strict-serializable") || strings.Contains(p, "serial order") {
				t.Errorf("%s: phase %q ran, though no serial order exists", m, p)
				break
			}
		}
	}
}

// TestRelaxedWitnessBeforeTheOtherWitnessesBesideSerializable: a lost update injected
// early among 2,000 transactions of 20 clients on 20 hotspot keys of values 1..4, 1%
// :info (bench's sweep-4711-16), asked with serializable beside read committed and
// read uncommitted. There the weak models are decided after the serializable ones,
// whose value checks leave the lost update as a finding of their inference; the relaxed
// witness skipped any inference with findings, so the witnesses' searches ran first
// (7 s of failed states) and it proved the history only after them. It now runs first
// there too.
func TestRelaxedWitnessBeforeTheOtherWitnessesBesideSerializable(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Txns, spec.Ops, spec.Keys, spec.KeyDist, spec.Reads = 20, 2000, 3, 20, "hotspot", 0.2
	spec.DupKeys, spec.ValDomain, spec.Seed = 1, 4, 588789
	h := simulate(t, spec, workload.SimOptions{Behaviour: workload.SimSerializable, Info: 0.01,
		Inject: []string{workload.InjectLostUpdate}, InjectAt: 0.1})
	var phases []string
	res, err := check.Check(h, check.Options{Models: []string{"serializable", "read-committed", "read-uncommitted"}, Timeout: 60 * time.Second,
		Progress: func(p string) { phases = append(phases, p) }})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]check.Validity{"serializable": check.Invalid, "read-committed": check.Valid, "read-uncommitted": check.Valid}
	for _, r := range res.Models {
		if r.Valid != want[r.Model] {
			t.Errorf("%s: %v (%s), want %v", r.Model, r.Valid, r.Message, want[r.Model])
		}
	}
	for _, p := range phases {
		if strings.Contains(p, "for a witness") {
			t.Errorf("phase %q ran before the relaxed witness proved the weak models", p)
			break
		}
	}
}

// TestRelaxedWitnessBeforeTheOtherWitnesses: a lost update injected among 5,000
// transactions of 30 clients on 10 keys of two values, 1% :info and 5% :fail (drawn by
// bench's sweep, seed 2026, no. 6). The strong witness's searches got lost looking for a
// read-committed order (1M failed states) before the relaxed witness, which proves it;
// now the relaxed witness runs first where a lost update was found, for read committed
// and read uncommitted alike, and the strong witness never starts.
func TestRelaxedWitnessBeforeTheOtherWitnesses(t *testing.T) {
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Txns, spec.Ops, spec.Keys = 30, 5000, 4, 10
	spec.DupKeys, spec.ValDomain, spec.Seed = 1, 2, 917733
	h := simulate(t, spec, workload.SimOptions{Behaviour: workload.SimSerializable, Info: 0.01, Fail: 0.05,
		Inject: []string{workload.InjectLostUpdate}, InjectAt: 0.95})
	for _, m := range []string{"read-committed", "read-uncommitted"} {
		for _, p := range validWithPhases(t, h, m) {
			if strings.Contains(p, "for a witness") {
				t.Errorf("%s: phase %q ran before the relaxed witness proved it", m, p)
				break
			}
		}
	}
}

// validWithPhases checks h under model m alone (60 s at most), requires it valid with
// no order rejected by a verification, and returns the phases it went through.
func validWithPhases(t *testing.T, h *history.History, m string) []string {
	t.Helper()
	var phases []string
	res, err := check.Check(h, check.Options{Models: []string{m}, Timeout: 60 * time.Second,
		Progress: func(p string) { phases = append(phases, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid != check.Valid || res.Stats.ReplayRejected != 0 {
		t.Fatalf("%s: %v (%s; %d rejected), want valid", m, res.Valid, res.Message, res.Stats.ReplayRejected)
	}
	return phases
}

// hotLostUpdate is bench's weak-lost-update-hot family: a lost update injected halfway
// through txns transactions of 30 clients on 200 hotspot keys of two values, 5% :info,
// drawn from seed.
func hotLostUpdate(t *testing.T, txns int, seed int64) *history.History {
	t.Helper()
	return lostUpdateFamily(t, "hotspot", txns, 200, 2, seed, workload.SimOptions{Info: 0.05})
}

// zipfLostUpdate is bench's weak-lost-update-zipf family: a lost update injected halfway
// through txns transactions of 30 clients on 50 zipf-skewed keys with values 1..6 and 5%
// :fail, drawn from seed.
func zipfLostUpdate(t *testing.T, txns int, seed int64) *history.History {
	t.Helper()
	return lostUpdateFamily(t, "zipf", txns, 50, 6, seed, workload.SimOptions{Fail: 0.05})
}

// lostUpdateFamily is one history of bench's lost-update families (bench's
// weakLostUpdates): a lost update injected halfway through txns transactions of 30
// clients, 4 micro-ops each, on keys of dist, every key duplicate-capable with values
// 1..vals, drawn from seed, with sim's :info and :fail.
func lostUpdateFamily(t *testing.T, dist string, txns, keys, vals int, seed int64, sim workload.SimOptions) *history.History {
	t.Helper()
	spec := workload.DefaultSpec()
	spec.Sessions, spec.Txns, spec.Ops, spec.Keys, spec.KeyDist = 30, txns, 4, keys, dist
	spec.DupKeys, spec.ValDomain, spec.Seed = 1, vals, seed
	sim.Behaviour, sim.Inject, sim.InjectAt = workload.SimSerializable, []string{workload.InjectLostUpdate}, 0.5
	return simulate(t, spec, sim)
}

// losersPlacedPhase is losersPlaced's progress phase.
const losersPlacedPhase = "replaying serially with the lost appends left out (a witness for the weak models)"

// provedBy checks that h is valid under m, that phase ran, and that no phase later
// accepts ran (what phase began, named by, proved it first).
func provedBy(t *testing.T, h *history.History, m, phase, by string, later func(p string) bool) {
	t.Helper()
	ran := false
	for _, p := range validWithPhases(t, h, m) {
		ran = ran || p == phase
		if later(p) {
			t.Errorf("%s: phase %q ran: %s did not prove it", m, p, by)
			break
		}
	}
	if !ran {
		t.Errorf("%s: %s was not tried", m, by)
	}
}

// provedByLosersPlaced is provedBy for losersPlaced, no phase containing one of later
// running.
func provedByLosersPlaced(t *testing.T, h *history.History, m string, later ...string) {
	t.Helper()
	provedBy(t, h, m, losersPlacedPhase, "the losers placed anew", func(p string) bool {
		return slices.ContainsFunc(later, func(l string) bool { return strings.Contains(p, l) })
	})
}

// TestLosersPlacedProveTheStrongForms: the hot family at 2,000 transactions, seed 1 (a
// lost update on a key of a single value: both members appended 1 to [1 1], and the
// key's longest read shows [1 1 1]). Strong-session and strong read uncommitted hold
// there, and the relaxed witness's searches looked for the one order that keeps every
// writer of the hot keys in line with process order (unknown at 30 s). With the
// loser's append left out, the strict search orders the rest at once, and the lost
// key's positions placed anew prove both forms, before the strong witness's search
// over the real history (4.7 s, no order) and the runs search.
func TestLosersPlacedProveTheStrongForms(t *testing.T) {
	h := hotLostUpdate(t, 2000, 1)
	for _, m := range []string{"strong-session-read-uncommitted", "strong-read-uncommitted"} {
		provedByLosersPlaced(t, h, m, "under real time for a witness", "ordering the writers")
	}
	// Asked with serializable, read uncommitted's forms are decided last; the losers
	// placed anew come first (the other models' searches may take the whole limit).
	var phases []string
	res, err := check.Check(h, check.Options{Models: []string{"serializable", "strong-session-read-uncommitted"}, Timeout: 60 * time.Second,
		Progress: func(p string) { phases = append(phases, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Models) != 2 || res.Models[0].Valid != check.Invalid || res.Models[1].Valid != check.Valid {
		t.Fatalf("got %+v, want serializable not valid and strong-session read uncommitted valid", res.Models)
	}
	for _, p := range phases {
		if p == losersPlacedPhase {
			break
		}
		if strings.Contains(p, "narrowing") {
			t.Errorf("phase %q ran before the losers were placed anew", p)
			break
		}
	}
}

// TestLosersPlacedProveReadCommittedsStrongForms: the hot family at 1,000 transactions,
// seed 1 (a lost update on a key of a single value: both members appended 1 to [1]).
// Strong-session and strong read committed hold there; the read-by-read searches under
// process order looked for the one order that keeps the loser in line (10 s for strong
// read committed, unknown at 30 s for strong-session). With the loser's append left
// out the strict search orders the rest at once, and the lost key placed anew under
// read committed's reads proves both forms, before any search read by read. And asked
// with serializable (not valid: the lost update), the same.
func TestLosersPlacedProveReadCommittedsStrongForms(t *testing.T) {
	h := hotLostUpdate(t, 1000, 1)
	for _, m := range []string{"strong-session-read-committed", "strong-read-committed"} {
		provedByLosersPlaced(t, h, m, "searching the orders of the processes", "read by read with repairs")
	}
	res, err := check.Check(h, check.Options{Models: []string{"serializable", "strong-session-read-committed"}, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Models) != 2 || res.Models[0].Valid != check.Invalid || res.Models[1].Valid != check.Valid {
		t.Fatalf("got %+v, want serializable not valid and strong-session read committed valid", res.Models)
	}
}
