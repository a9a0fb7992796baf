package shrink

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/internal/brute"
)

var seeds = flag.Int("seeds", 3000, "random tiny histories per test")

// models are the models the cuts are proved sound for: every one is tested.
var models = SoundModels()

// TestCutsAreSound tests the theorem of docs/DESIGN.md ("Counterexamples") directly: on
// random tiny histories with heavy duplication that the brute force finds valid under a
// model, every cut that build accepts (random transactions, keys and reads) is valid
// under that model too. A cut that is not valid therefore proves the whole not valid.
func TestCutsAreSound(t *testing.T) {
	configs := []brute.Config{{MaxTxns: 8, Values: 2}, {Strategy: brute.SnapshotLike}, {Strategy: brute.FailInfo},
		{Values: 3, MaxTxns: 9, MaxKeys: 2}, {Strategy: brute.Realtime}}
	var cuts, withPrefix, withFill, failedPrefix, versionCovered, byValue, byWindow int
	perModel := map[string]int{}
	for seed := 0; seed < *seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		h := brute.Random(rng, configs[seed%len(configs)])
		if seed%3 == 0 {
			h = versionize(rng, h)
		}
		var valid []string
		for _, m := range models {
			if brute.Check(h, m) {
				valid = append(valid, m)
			}
		}
		if len(valid) == 0 {
			continue
		}
		// One shrinker per model: the cuts depend on the model's reading of reads.
		shrinkers := map[string]*shrinker{}
		for _, m := range valid {
			shrinkers[m] = newShrinker(h, m)
		}
		for try := 0; try < 6*len(valid); try++ {
			m := valid[try%len(valid)]
			c := randomCand(rng, h)
			b, ok := shrinkers[m].build(c)
			if !ok || len(b.h.Txns) == 0 {
				continue
			}
			cuts++
			if len(b.prefixes) > 0 {
				withPrefix++
			}
			for _, p := range b.prefixes {
				if len(p.ByValue) > 0 {
					byValue++
					break
				}
			}
			for _, p := range b.prefixes {
				if len(p.Confined) > 0 {
					byWindow++
					break
				}
			}
			for _, p := range b.prefixes {
				if len(p.Fills) > 0 {
					withFill++
					break
				}
			}
			for _, p := range b.prefixes {
				if p.Failed {
					failedPrefix++
					break
				}
			}
			if cutModels[m].reading == perRead || cutModels[m].reading == perReadSingle {
				if coveredVersionRead(b, true) {
					versionCovered++
				}
			}
			checkFromOriginal(t, h, b)
			perModel[m]++
			if ok, err := brute.CheckGraph(b.h, m); err != nil || !ok {
				t.Fatalf("seed %d: the history is valid under %s, its cut is not (err %v)\nhistory:\n%s\ncut (prefixes %v, candidate %v):\n%s",
					seed, m, err, brute.Format(h), b.prefixes, c, brute.Format(b.h))
			}
		}
	}
	t.Logf("%d cuts of valid histories, %d with synthetic writers, %d with fills, %d with a :fail one (read uncommitted); %d per-read cuts keep a version read of a key with synthetic writers; %d keep unpinned writers by their values (rule 9), %d by their windows (rule 10); per model %v",
		cuts, withPrefix, withFill, failedPrefix, versionCovered, byValue, byWindow, perModel)
	if byWindow < cuts/200 {
		t.Errorf("only %d of %d cuts keep writers by their windows: rule 10 is barely tested", byWindow, cuts)
	}
	if byValue < cuts/200 {
		t.Errorf("only %d of %d cuts keep writers by their values: rule 9 is barely tested", byValue, cuts)
	}
	if failedPrefix < cuts/200 || versionCovered < cuts/2000 {
		t.Errorf("only %d cuts with a :fail synthetic writer, %d keeping a version read of a key with synthetic writers, of %d: the rules are barely tested", failedPrefix, versionCovered, cuts)
	}
	for _, m := range models {
		if perModel[m] < cuts/(4*len(models)) {
			t.Errorf("only %d of %d cuts were of histories valid under %s: its rules are barely tested", perModel[m], cuts, m)
		}
	}
	if withPrefix < cuts/50 || withFill < cuts/200 {
		t.Errorf("only %d (%d with fills) of %d cuts had synthetic writers: the rules are barely tested", withPrefix, withFill, cuts)
	}
}

// versionize turns some reads made after their transaction's own appends into version
// reads, as a database that lets a transaction read an older state of a key after
// writing it might: each loses some of its own appends at the end (all of them: it ends
// where its transaction's block starts; some: inside that block).
func versionize(rng *rand.Rand, h *history.History) *history.History {
	out := *h
	out.Ops = slices.Clone(h.Ops)
	for t := range h.Txns {
		for i := h.Txns[t].OpStart; i < h.Txns[t].OpEnd; i++ {
			op := &out.Ops[i]
			if op.Kind != history.Read || !op.Known || rng.IntN(2) == 0 {
				continue
			}
			own := 0
			for j := h.Txns[t].OpStart; j < i; j++ {
				if o := &h.Ops[j]; o.Kind == history.Append && o.Key == op.Key {
					own++
				}
			}
			if own > 0 && attributable(h, int32(t), i) {
				op.End -= int32(1 + rng.IntN(own))
			}
		}
	}
	return &out
}

// randomCand keeps each transaction, key and read with some probability.
func randomCand(rng *rand.Rand, h *history.History) cand {
	c := cand{dropped: map[int32]bool{}}
	keep := []float64{0.3, 0.6, 0.9}[rng.IntN(3)]
	for t := range h.Txns {
		if rng.Float64() < keep {
			c.txns = append(c.txns, int32(t))
		}
	}
	for k := range h.Keys {
		if rng.Float64() < 0.8 {
			c.keys = append(c.keys, int32(k))
		}
	}
	for i := range h.Ops {
		if h.Ops[i].Kind == history.Read && rng.IntN(6) == 0 {
			c.dropped[int32(i)] = true
		}
	}
	// Rule 10 in most cuts (the search turns it on only where it pays).
	c.confine = rng.IntN(4) != 0
	// Rule 9's V, chosen at random for some keys (the others take the default).
	for _, k := range c.keys {
		if rng.IntN(3) != 0 {
			continue
		}
		var vals []int32
		for i := range h.Ops {
			if op := &h.Ops[i]; op.Kind == history.Append && op.Key == k && !slices.Contains(vals, op.Value) && rng.IntN(2) == 0 {
				vals = append(vals, op.Value)
			}
		}
		if vals != nil {
			c = c.withVals(k, vals)
		}
	}
	return c
}

// checkFromOriginal fails unless every transaction of the cut comes from the original
// (same index, status and process; its ops a subsequence of the original's, reads
// unchanged) or is the synthetic one (first, :ok, appends only, on its own process).
func checkFromOriginal(t *testing.T, orig *history.History, b *built) {
	t.Helper()
	h := b.h
	for i := range h.Txns {
		tx := &h.Txns[i]
		ops := h.TxnOps(i)
		if b.orig[i] < 0 && i > 0 {
			// A fill: :ok, appends only, on its own process, invoked before and completed
			// after every original transaction's events.
			for j := range h.Txns {
				o := &h.Txns[j]
				if b.orig[j] >= 0 && (o.Invoke >= 0 && o.Invoke < tx.Invoke || o.Complete >= tx.Complete) || j != i && o.Process == tx.Process {
					t.Fatalf("fill %d (%+v) is not concurrent with transaction %d (%+v), or shares its process", i, *tx, j, *o)
				}
			}
			for _, op := range ops {
				if op.Kind != history.Append || tx.Status != history.OK {
					t.Fatalf("fill %d reads or is not :ok", i)
				}
			}
			continue
		}
		if b.orig[i] < 0 && tx.Status == history.Fail {
			// Read uncommitted's: first, on its own process, appends only, each value
			// of a key no more often than the whole history's appends of it (by any
			// transaction) that the cut leaves out.
			if i != 0 || tx.Complete != 1 || tx.Invoke != 0 {
				t.Fatalf("the :fail synthetic transaction %d is not first: %+v", i, *tx)
			}
			for j := 1; j < len(h.Txns); j++ {
				if h.Txns[j].Process == tx.Process {
					t.Fatalf("synthetic transaction shares process %s", h.Processes[tx.Process])
				}
			}
			count := map[[2]string]int{}
			for _, op := range ops {
				if op.Kind != history.Append {
					t.Fatalf("synthetic transaction reads")
				}
				count[[2]string{h.Keys[op.Key], h.Values[op.Value]}]++
			}
			for j := 1; j < len(h.Txns); j++ {
				for _, op := range h.TxnOps(j) {
					if op.Kind == history.Append {
						count[[2]string{h.Keys[op.Key], h.Values[op.Value]}]++
					}
				}
			}
			for tt := range orig.Txns {
				for _, op := range orig.TxnOps(tt) {
					if op.Kind == history.Append {
						count[[2]string{orig.Keys[op.Key], orig.Values[op.Value]}]--
					}
				}
			}
			for kv, c := range count {
				if c > 0 {
					t.Fatalf("the cut appends %s to key %s %d times more than the whole", kv[1], kv[0], c)
				}
			}
			continue
		}
		if b.orig[i] < 0 {
			if tx.Status != history.OK || tx.Complete != 1 || tx.Invoke != 0 {
				t.Fatalf("synthetic transaction %d is not first and :ok: %+v", i, *tx)
			}
			for j := 1; j < len(h.Txns); j++ {
				if h.Txns[j].Process == tx.Process {
					t.Fatalf("synthetic transaction shares process %s", h.Processes[tx.Process])
				}
			}
			// It appends, per key, values that every kept read of the key starts with.
			byKey := map[int32][]int32{}
			for _, op := range ops {
				if op.Kind != history.Append {
					t.Fatalf("synthetic transaction reads")
				}
				byKey[op.Key] = append(byKey[op.Key], op.Value)
			}
			// ... or, when a kept read shows a value more often than the whole history
			// appends it, a subsequence of what every read starts with, with no value
			// more often than the whole appends it.
			excess := map[string]bool{}
			for _, p := range b.prefixes {
				excess[p.Key] = p.Excess
			}
			for j := range h.Ops {
				op := &h.Ops[j]
				vals, ok := byKey[op.Key]
				if !ok || op.Kind != history.Read || !op.Known || !attributable(h, txnOfOp(h, int32(j)), int32(j)) {
					// A read that misses its own appends: ignored per read, and no
					// witness of the whole otherwise (it stays as it was).
					continue
				}
				r := h.ReadList(op)
				if excess[h.Keys[op.Key]] {
					if !isSubsequence(h, vals, r) || moreThanAppended(h, orig, op.Key, vals) {
						t.Fatalf("key %s: the synthetic transaction's values are not what a read shows less an excess", h.Keys[op.Key])
					}
					continue
				}
				if len(r) < len(vals) || !slices.Equal(r[:len(vals)], vals) {
					t.Fatalf("a read of key %s does not start with the synthetic transaction's values", h.Keys[op.Key])
				}
			}
			continue
		}
		o := &orig.Txns[b.orig[i]]
		if tx.Index != o.Index || tx.Status != o.Status || (tx.Process < 0) != (o.Process < 0) ||
			tx.Process >= 0 && h.Processes[tx.Process] != orig.Processes[o.Process] {
			t.Fatalf("cut transaction %d differs from original %d", i, b.orig[i])
		}
		origOps := orig.TxnOps(int(b.orig[i]))
		j := 0
		for _, op := range ops {
			for j < len(origOps) && !sameOp(h, &op, orig, &origOps[j]) {
				j++
			}
			if j == len(origOps) {
				t.Fatalf("cut transaction %d: an op that is not in original %d, in order", i, b.orig[i])
			}
			j++
		}
	}
}

func sameOp(h *history.History, a *history.MicroOp, o *history.History, b *history.MicroOp) bool {
	if a.Kind != b.Kind || a.Known != b.Known || h.Keys[a.Key] != o.Keys[b.Key] {
		return false
	}
	if a.Kind == history.Append {
		return h.Values[a.Value] == o.Values[b.Value]
	}
	ra, rb := h.ReadList(a), o.ReadList(b)
	return slices.EqualFunc(ra, rb, func(x, y int32) bool { return h.Values[x] == o.Values[y] })
}

// TestCounterexamplesOnCorpus: for every random tiny history the checker finds not
// valid under a model, there is a counterexample; it is one the brute force rejects
// too, made only of the original's transactions and ops (or the synthetic ones), no
// bigger than the original, and 1-minimal: leaving out any one of its original
// transactions gives a cut that is not sound, no smaller, or valid by the checker. Its EDN
// loads back in the checker and the brute force, not valid. Read uncommitted's
// violations and the per-read ones that need a version read (the whole without the
// reads that miss their transaction's own appends is valid) are counted.
func TestCounterexamplesOnCorpus(t *testing.T) {
	configs := []brute.Config{{}, {Strategy: brute.SnapshotLike}, {Strategy: brute.FailInfo}, {Values: 3, MaxTxns: 7}}
	var found, smaller, prefixed, violations, uncommittedFound, versionNeeded, versionNeededKept, versionKept int
	for seed := 0; seed < *seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		h := brute.Random(rng, configs[seed%len(configs)])
		res, err := check.Check(h, check.Options{Models: models})
		if err != nil {
			t.Fatal(err)
		}
		reports, failures := Counterexamples(h, &res, noDeadline)
		if len(failures) > 0 {
			t.Fatalf("seed %d: %v\n%s", seed, failures, brute.Format(h))
		}
		covered := map[string]bool{}
		versionReads := coveredVersionRead(&built{h: h}, false)
		for _, r := range reports {
			cx := r.cut
			checkFromOriginal(t, h, &built{h: cx.History, orig: cx.Orig, prefixes: cx.Prefixes})
			if len(cx.History.Txns) > len(h.Txns)+1 || !cx.Minimal {
				t.Errorf("seed %d: counterexample of %d transactions for %d (minimal: %v)", seed, len(cx.History.Txns), len(h.Txns), cx.Minimal)
			}
			checkOneMinimal(t, seed, h, cx)
			kept := coveredVersionRead(&built{h: cx.History, orig: cx.Orig}, false)
			for _, m := range r.Models {
				if cutModels[m] != cutModels[cx.Model] {
					t.Fatalf("seed %d: the counterexample made for %s serves %s, of another reading", seed, cx.Model, m)
				}
				covered[m] = true
				if ok, err := brute.CheckGraph(cx.History, m); err != nil || ok {
					t.Fatalf("seed %d: the counterexample for %s is valid by the brute force (err %v)\nhistory:\n%s\ncounterexample:\n%s",
						seed, m, err, brute.Format(h), brute.Format(cx.History))
				}
				if cutModels[m].reading == uncommitted {
					uncommittedFound++
				}
				if versionReads && needsVersionReads(t, h, m) {
					// Its counterexample keeps one, or has writers pinned by the values
					// one shows (rule 4's value pins).
					versionNeeded++
					if kept {
						versionNeededKept++
					}
				}
			}
			if kept {
				versionKept++
			}
			// It loads in doppel check: the EDN parses back to the same verdict, the
			// checker's and the brute force's.
			back, err := history.Parse(strings.NewReader(r.EDNText()), "counterexample.edn")
			if err != nil {
				t.Fatalf("seed %d: the counterexample's EDN does not parse: %v\n%s", seed, err, r.EDNText())
			}
			again, err := check.Check(back, check.Options{Models: r.Models})
			if err != nil || again.Valid != check.Invalid {
				t.Fatalf("seed %d: the checker finds the counterexample's EDN %v under %v (err %v)\n%s", seed, again.Valid, r.Models, err, r.EDNText())
			}
			for _, m := range r.Models {
				if brute.Check(back, m) {
					t.Fatalf("seed %d: the counterexample's EDN is valid under %s\n%s", seed, m, r.EDNText())
				}
			}
			found++
			if len(cx.History.Txns) < len(h.Txns) {
				smaller++
			}
			if len(cx.Prefixes) > 0 {
				prefixed++
			}
		}
		for _, mr := range res.Models {
			if mr.Valid == check.Invalid {
				violations++
				if !covered[mr.Model] {
					t.Fatalf("seed %d: %s not valid, no counterexample", seed, mr.Model)
				}
			}
		}
	}
	t.Logf("%d violations, all with a counterexample: %d counterexamples, %d smaller than the history, %d with a synthetic prefix; "+
		"%d read uncommitted violations; %d counterexamples keep a version read; %d per-read violations need one (%d of their counterexamples keep one)",
		violations, found, smaller, prefixed, uncommittedFound, versionKept, versionNeeded, versionNeededKept)
	if found == 0 || smaller == 0 || uncommittedFound == 0 || versionNeeded == 0 {
		t.Errorf("%d counterexamples, %d smaller, %d of read uncommitted, %d needing a version read: a kind is not tested", found, smaller, uncommittedFound, versionNeeded)
	}
}

// checkOneMinimal fails when leaving out one original transaction of cx's cut gives a
// smaller sound cut the checker still finds not valid: the shrink stopped short. (A reader that
// read uncommitted's cut keeps for its longest reads alone is not one of the candidate's
// transactions: leaving it out changes nothing.)
func checkOneMinimal(t *testing.T, seed int, h *history.History, cx *Counterexample) {
	t.Helper()
	s := newShrinker(h, cx.Model)
	var present []int32 // as the shrink's last pass: those with an op in the cut
	for _, tx := range cx.cand.txns {
		if slices.Contains(cx.Orig, tx) {
			present = append(present, tx)
		}
	}
	for i, tx := range present {
		c := cx.cand.withTxns(slices.Delete(slices.Clone(present), i, i+1))
		b, ok := s.build(c)
		if !ok || len(b.h.Txns) == 0 || !bigger(cx.History, b.h) {
			// Not sound, or no smaller (read uncommitted keeps a longest read's
			// transaction as a stub, and synthetic writers stand for its appends).
			continue
		}
		if res, err := check.Check(b.h, check.Options{Models: []string{cx.Model}}); err == nil && res.Valid == check.Invalid {
			t.Errorf("seed %d: the counterexample for %s is not 1-minimal: without transaction %d it is still not valid\n%s", seed, cx.Model, tx, brute.Format(cx.History))
		}
	}
}

// coveredVersionRead reports whether a per-read cut keeps a version read (a known
// read of an :ok transaction that misses its transaction's own appends), on a key with
// synthetic writers when covered.
func coveredVersionRead(b *built, covered bool) bool {
	h := b.h
	prefixed := map[string]bool{}
	for _, p := range b.prefixes {
		prefixed[p.Key] = true
	}
	for t := range h.Txns {
		if h.Txns[t].Status != history.OK {
			continue
		}
		for i := h.Txns[t].OpStart; i < h.Txns[t].OpEnd; i++ {
			if op := &h.Ops[i]; op.Kind == history.Read && op.Known && !attributable(h, int32(t), i) && (!covered || prefixed[h.Keys[op.Key]]) {
				return true
			}
		}
	}
	return false
}

var noDeadline time.Time

// oneReport checks h under m, which must find it not valid, shrinks it to exactly one
// counterexample, and has the brute force confirm that the counterexample is not valid
// under m either.
func oneReport(t *testing.T, h *history.History, m string) *Report {
	t.Helper()
	res, err := check.Check(h, check.Options{Models: []string{m}})
	if err != nil || res.Valid != check.Invalid {
		t.Fatalf("%s: %v %v", m, res.Valid, err)
	}
	reports, failures := Counterexamples(h, &res, noDeadline)
	if len(reports) != 1 || len(failures) > 0 {
		t.Fatalf("%s: %v %v", m, reports, failures)
	}
	r := reports[0]
	if ok, err := brute.CheckGraph(r.History(), m); err != nil || ok {
		t.Errorf("%s: the brute force finds the counterexample valid (err %v):\n%s", m, err, r.EDNText())
	}
	return r
}

// TestRecordedPostgresG2: the G2-item PostgreSQL 15 SERIALIZABLE committed (a recorded
// history of 2000 transactions, mostly unique values) shrinks to its three transactions
// and a synthetic writer (the blind writers are pinned by their values), which the brute
// force rejects.
func TestRecordedPostgresG2(t *testing.T) {
	h, err := history.ParseFile("../testdata/recorded/postgres15-serializable-g2-item.edn")
	if err != nil {
		t.Fatal(err)
	}
	cx := oneReport(t, h, "serializable")
	if cx.Transactions > 4 {
		t.Errorf("counterexample of %d transactions:\n%s", cx.Transactions, cx.EDN)
	}
	checkFromOriginal(t, h, &built{h: cx.cut.History, orig: cx.cut.Orig, prefixes: cx.cut.Prefixes})
}

// TestModelGate: a model the proof does not cover gets an error, not a counterexample
// (the models another change adds are refused until admitted), and every admitted
// model is one the checker decides.
func TestModelGate(t *testing.T) {
	h, err := brute.Parse("T0 p0 ok [a x 1] inv=0 cmp=1\nT1 p1 ok [r x [1 1]] inv=2 cmp=3\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"no-such-model"} {
		if Sound(m) {
			t.Errorf("%s is admitted", m)
		}
		if cx, err := Shrink(h, m, nil, Options{}); err == nil || cx != nil {
			t.Errorf("%s: a counterexample without a proof", m)
		}
	}
	decided := map[string]bool{}
	for _, m := range check.ModelNames() {
		decided[m] = true
	}
	for _, m := range SoundModels() {
		if !decided[m] {
			t.Errorf("%s is admitted but the checker does not decide it", m)
		}
	}
}

func isSubsequence(h *history.History, sub, list []int32) bool {
	i := 0
	for _, v := range list {
		if i < len(sub) && sub[i] == v {
			i++
		}
	}
	return i == len(sub)
}

// moreThanAppended reports whether vals (of the cut h, key k) holds a value more often
// than the original history's transactions that are not :fail append it to that key.
func moreThanAppended(h *history.History, orig *history.History, k int32, vals []int32) bool {
	count := map[string]int{}
	for _, v := range vals {
		count[h.Values[v]]++
	}
	for t := range orig.Txns {
		if orig.Txns[t].Status == history.Fail {
			continue
		}
		for _, op := range orig.TxnOps(t) {
			if op.Kind == history.Append && orig.Keys[op.Key] == h.Keys[k] {
				count[orig.Values[op.Value]]--
			}
		}
	}
	for _, c := range count {
		if c > 0 {
			return true
		}
	}
	return false
}

// TestLostUpdateNamed: a lost update among other transactions shrinks to its pair (and
// a synthetic writer), named lost-update first, with its key and both transactions. Per
// read (cursor stability) a read before its transaction's append pins nothing, but the
// pair's reads are the longest kept ones: their blocks lie past them (rule 4's late
// writers).
func TestLostUpdateNamed(t *testing.T) {
	var b strings.Builder
	b.WriteString("T0 p0 ok [a x 1] inv=0 cmp=1\n")
	var ys []string
	for i := 1; i <= 6; i++ { // serial readers and writers of y around it
		fmt.Fprintf(&b, "T%d p0 ok [r y [%s]] [a y %d] inv=%d cmp=%d\n", i, strings.Join(ys, " "), i, 2*i, 2*i+1)
		ys = append(ys, fmt.Sprint(i))
	}
	b.WriteString("T7 p1 ok [r x [1]] [a x 2] inv=20 cmp=23\nT8 p2 ok [r x [1]] [a x 3] inv=21 cmp=22\n")
	h, err := brute.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"serializable", "snapshot-isolation", "repeatable-read", "cursor-stability", "consistent-view"} {
		r := oneReport(t, h, m)
		a := r.Anomalies[0]
		if a.Type != "lost-update" || a.Key != "x" || len(a.Txns) != 2 || r.Transactions > 3 {
			t.Errorf("%s: counterexample of %d transactions, first anomaly %s on %q with %d transactions:\n%s", m, r.Transactions, a.Type, a.Key, len(a.Txns), r.EDNText())
		}
	}
	// Read committed allows it.
	res, err := check.Check(h, check.Options{Models: []string{"read-committed"}})
	if err != nil || res.Valid != check.Valid {
		t.Errorf("read-committed: %v %v", res.Valid, err)
	}
}

// TestDuplicateElementsSmall: a read showing a value once more than the whole history
// appends it shrinks to that read and one synthetic writer, however many appenders.
func TestDuplicateElementsSmall(t *testing.T) {
	var b strings.Builder
	var list []string
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "T%d p0 ok [r x [%s]] [a x 1] inv=%d cmp=%d\n", i, strings.Join(list, " "), 2*i, 2*i+1)
		list = append(list, "1")
	}
	list = append(list, "1")
	fmt.Fprintf(&b, "T30 p1 ok [r x [%s]] inv=60 cmp=61\n", strings.Join(list, " "))
	h, err := brute.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range models {
		r := oneReport(t, h, m)
		if r.Transactions > 2 || r.Anomalies[0].Type != "duplicate-elements" {
			t.Errorf("%s: counterexample of %d transactions, first anomaly %s:\n%s", m, r.Transactions, r.Anomalies[0].Type, r.EDNText())
		}
	}
}

// txnOfOp finds the transaction of micro-op op.
func txnOfOp(h *history.History, op int32) int32 {
	for t := range h.Txns {
		if h.Txns[t].OpStart <= op && op < h.Txns[t].OpEnd {
			return int32(t)
		}
	}
	return -1
}

// TestFirstReadsKept: under cursor stability a cut that leaves out a transaction's first
// read of a key before its append leaves out its later reads of the key before that
// append too (DESIGN.md, "Counterexamples", rule 6): T1's second read of key 1 would
// otherwise be its first, the same list as T0's, a lost update the whole does not have.
func TestFirstReadsKept(t *testing.T) {
	h, err := brute.Parse(`T0 p0 ok [r 1 []] [a 1 2] [a 0 1] [r 1 [2]] inv=0 cmp=1
T1 p0 ok [r 2 []] [r 1 [2]] [r 1 []] [a 1 2] inv=2 cmp=3
T2 p0 ok [r 2 []] [a 0 1] [r 2 []] inv=4 cmp=5
`)
	if err != nil {
		t.Fatal(err)
	}
	const firstRead, secondRead = 5, 6 // T1's reads of key 1
	if !brute.Check(h, "cursor-stability") {
		t.Fatal("the whole history is not valid under cursor-stability")
	}
	c := cand{txns: []int32{0, 1, 2}, keys: []int32{0, 1, 2}, dropped: map[int32]bool{firstRead: true}}
	for _, m := range []string{"cursor-stability", "read-committed"} {
		b, ok := newShrinker(h, m).build(c)
		if !ok {
			t.Fatalf("%s: no cut", m)
		}
		kept := false
		for _, op := range b.h.TxnOps(1) {
			kept = kept || op.Kind == history.Read && b.h.Keys[op.Key] == h.Keys[h.Ops[secondRead].Key]
		}
		if want := m == "read-committed"; kept != want {
			t.Errorf("%s: T1's second read of key 1 kept: %v, want %v\n%s", m, kept, want, brute.Format(b.h))
		}
		if ok, err := brute.CheckGraph(b.h, "cursor-stability"); m == "cursor-stability" && (err != nil || !ok) {
			t.Errorf("the cut is not valid under cursor-stability (err %v):\n%s", err, brute.Format(b.h))
		}
	}
}

// needsVersionReads reports whether the oracle finds h valid under per-read model m
// once every read that misses its transaction's own appends is left out: the violation
// needs one (before version reads were kept, such a violation had no counterexample).
func needsVersionReads(t *testing.T, h *history.History, m string) bool {
	if r := cutModels[m].reading; r != perRead && r != perReadSingle {
		return false
	}
	c := whole(h)
	c.dropped = map[int32]bool{}
	for tx := range h.Txns {
		for i := h.Txns[tx].OpStart; i < h.Txns[tx].OpEnd; i++ {
			if op := &h.Ops[i]; h.Txns[tx].Status == history.OK && op.Kind == history.Read && op.Known && !attributable(h, int32(tx), i) {
				c.dropped[i] = true
			}
		}
	}
	b, ok := newShrinker(h, m).build(c)
	if !ok {
		t.Fatalf("the whole history without its version reads is not a sound cut for %s", m)
	}
	return brute.Check(b.h, m)
}

// TestUncommittedG0Small: a G0 under read uncommitted between two transactions that
// append to x and y in opposite orders, among many other writers of both keys, shrinks
// to the pair, the reader of the longest lists and the synthetic writers, for all
// three forms; the first synthetic writer is :fail.
func TestUncommittedG0Small(t *testing.T) {
	var b strings.Builder
	var xs, ys []string
	n := 0
	add := func(line string) {
		fmt.Fprintf(&b, "T%d p%d ok %s inv=%d cmp=%d\n", n, n%3, line, 2*n, 2*n+1)
		n++
	}
	for i := 1; i <= 8; i++ { // serial writers of both keys
		add(fmt.Sprintf("[r x [%s]] [a x %d] [a y %d]", strings.Join(xs, " "), i, i))
		xs, ys = append(xs, fmt.Sprint(i)), append(ys, fmt.Sprint(i))
	}
	add("[a x 100] [a y 101]")
	add("[a x 101] [a y 100]")
	xs, ys = append(xs, "100", "101"), append(ys, "100", "101")
	for i := 9; i <= 14; i++ {
		add(fmt.Sprintf("[a x %d] [a y %d]", i, i))
		xs, ys = append(xs, fmt.Sprint(i)), append(ys, fmt.Sprint(i))
	}
	add(fmt.Sprintf("[r x [%s]] [r y [%s]]", strings.Join(xs, " "), strings.Join(ys, " ")))
	h, err := brute.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"read-uncommitted", "strong-session-read-uncommitted", "strong-read-uncommitted"} {
		r := oneReport(t, h, m)
		cx := r.History()
		if len(r.Synthetic) == 0 || cx.Txns[0].Status != history.Fail || r.Orig()[0] >= 0 {
			t.Errorf("%s: the first transaction is not a :fail synthetic writer:\n%s", m, r.EDNText())
		}
		if original := len(r.Txns) - len(r.Synthetic); original != 3 || !strings.HasPrefix(r.Anomalies[0].Type, "G0") {
			t.Errorf("%s: %d original transactions, first anomaly %s:\n%s", m, original, r.Anomalies[0].Type, r.EDNText())
		}
	}
}

// TestUncommittedFillsCommittedOnly: read uncommitted's :ok fills stand only for
// positions whose values only :ok transactions append. Here the value between the two
// kept writers of x is a :fail transaction's: the whole has no G0 (no edge through a
// transaction that did not commit), and neither may the cut, so the :fail synthetic
// writer takes that position, not a fill. With that transaction :ok, the whole has the
// G0 and the cut keeps it through a fill.
func TestUncommittedFillsCommittedOnly(t *testing.T) {
	for _, status := range []string{"fail", "ok"} {
		h, err := brute.Parse(`T0 p0 ok [a x 1] [a y 2] inv=0 cmp=1
T1 p1 ` + status + ` [a x 9] inv=2 cmp=3
T2 p2 ok [a x 3] [a y 1] inv=4 cmp=5
T3 p0 ok [r x [1 9 3]] [r y [1 2]] inv=6 cmp=7
`)
		if err != nil {
			t.Fatal(err)
		}
		b, ok := newShrinker(h, "read-uncommitted").build(cand{txns: []int32{0, 2, 3}, keys: []int32{0, 1}})
		if !ok {
			t.Fatal("no cut")
		}
		fills := 0
		for _, p := range b.prefixes {
			fills += len(p.Fills)
		}
		whole, cut := brute.Check(h, "read-uncommitted"), brute.Check(b.h, "read-uncommitted")
		if want := status == "ok"; fills > 0 != want || whole == want || cut == want {
			t.Errorf("T1 %s: %d fills, whole valid %v, cut valid %v\n%s", status, fills, whole, cut, brute.Format(b.h))
		}
	}
}

// TestVersionReadKept: a read committed G0 that needs a read missing its own append:
// T0 appends 1 to x, then reads x = [30 40 1 2 3], the only read that orders T1's 2
// and T2's 3, while y = [3 2] orders them the other way. The writers of 30 and 40 go
// (a synthetic writer stands for them); T0, T1 and T2 stay, pinned by their values in
// that read, which the cut keeps. The whole without it is valid.
func TestVersionReadKept(t *testing.T) {
	h, err := brute.Parse(`T0 p0 ok [a x 30] inv=0 cmp=1
T1 p0 ok [r x [30]] [a x 40] inv=2 cmp=3
T2 p0 ok [r x [30 40]] [a x 1] [r x [30 40 1 2 3]] inv=4 cmp=11
T3 p1 ok [a x 2] [a y 2] inv=5 cmp=6
T4 p2 ok [a x 3] [a y 3] inv=7 cmp=8
T5 p1 ok [r y [3 2]] inv=9 cmp=10
`)
	if err != nil {
		t.Fatal(err)
	}
	const m = "read-committed"
	if !needsVersionReads(t, h, m) {
		t.Fatal("the history without its version read is not valid")
	}
	r := oneReport(t, h, m)
	if original := len(r.Txns) - len(r.Synthetic); original != 4 || !coveredVersionRead(&built{h: r.History(), orig: r.Orig()}, false) {
		t.Errorf("%d original transactions:\n%s", original, r.EDNText())
	}
}

// TestTimeSpentByAnotherModel: when the time for counterexamples runs out on one
// model's shrink, the models after it say so (and which model's counterexample, cut by
// the same rules, was not re-checked), rather than "0 candidates checked", which reads
// as if no cut had been found not valid.
func TestTimeSpentByAnotherModel(t *testing.T) {
	h, err := brute.Parse(`T0 p0 ok [a x 1] inv=0 cmp=1
T1 p1 ok [r x [1]] [a x 2] inv=2 cmp=5
T2 p2 ok [r x [1]] [a x 3] inv=3 cmp=4
`)
	if err != nil {
		t.Fatal(err)
	}
	ms := []string{"serializable", "strict-serializable", "read-uncommitted"} // the first two share a row
	res, err := check.Check(h, check.Options{Models: ms})
	if err != nil || res.Models[0].Valid != check.Invalid || res.Models[1].Valid != check.Invalid {
		t.Fatalf("%+v %v", res.Models, err)
	}
	// Uncommitted allows the lost update: only the first two get a counterexample.
	deadline := time.Now().Add(3 * time.Second)
	afterShrink = func() { time.Sleep(time.Until(deadline)) } // the first shrink takes all the time
	defer func() { afterShrink = nil }()
	reports, failures := Counterexamples(h, &res, deadline)
	if len(reports) != 2 || !slices.Equal(reports[0].Models, []string{"serializable"}) || len(failures) != 0 {
		t.Fatalf("reports %v, failures %q", reports, failures)
	}
	// The second model's turn came after the time was spent: its counterexample is the
	// whole history (known not valid), saying why, rather than none.
	if r := reports[1]; !slices.Equal(r.Models, []string{"strict-serializable"}) || r.Minimal || r.Transactions != len(h.Txns) ||
		!strings.Contains(r.NotMinimal, "whole history") || !strings.Contains(r.NotMinimal, "counterexample of serializable") ||
		strings.Contains(r.NotMinimal, "0 candidates") || len(r.Anomalies) == 0 {
		t.Errorf("strict-serializable: %+v", r)
	}
	// A deadline already past: nothing is tried; each model gets the whole history,
	// which says that the check used the time up (not "spent on" nobody).
	reports, failures = Counterexamples(h, &res, time.Now())
	if len(reports) != 2 || len(failures) != 0 {
		t.Fatalf("reports %v, failures %q", reports, failures)
	}
	for _, r := range reports {
		if !strings.Contains(r.NotMinimal, "before the search for counterexamples began") || strings.Contains(r.NotMinimal, "spent on") ||
			r.Transactions != len(h.Txns) {
			t.Errorf("%v: %q", r.Models, r.NotMinimal)
		}
		// Past the deadline the input is taken as it is, not built again per model
		// (seconds each at 100K transactions), and its EDN is written only on demand.
		if r.History() != h || r.edn != "" {
			t.Errorf("%v: the whole history was built again (%v) or written before it was asked for (%v)", r.Models, r.History() != h, r.edn != "")
		}
		back, err := history.Parse(strings.NewReader(r.EDNText()), "counterexample.edn")
		if err != nil || brute.Check(back, r.Models[0]) {
			t.Errorf("%v: the whole history's EDN is valid or does not parse (%v)", r.Models, err)
		}
	}
}

// TestDdminLinearPasses: ddmin keeps every even item of 200 (a removal succeeds when
// the rest keeps them all), 1-minimal, with passes over single items that go on after
// a removal: a few hundred tests, where starting each pass over after a removal took
// about n²/4.
func TestDdminLinearPasses(t *testing.T) {
	const n = 200
	var items []int32
	for i := int32(0); i < n; i++ {
		items = append(items, i)
	}
	tests := 0
	keeps := func(rest []int32) bool {
		tests++
		evens := 0
		for _, x := range rest {
			if x%2 == 0 {
				evens++
			}
		}
		return evens == n/2
	}
	out := ddmin(items, keeps, func() bool { return false })
	if len(out) != n/2 || !keeps(out) {
		t.Fatalf("kept %d items: %v", len(out), out)
	}
	if tests > 4*n {
		t.Errorf("%d tests for %d items", tests, n)
	}
}

// TestWritersKeptByValue: T0 appends [1 1] to x, five writers append 2, and a read
// shows [1 2 2 2 2 2 1]: no split puts T0's two 1s together. T0 is pinned by no read nor
// value, so rule 4 leaves it out once any writer of 2 goes (a fill then stands for
// everything), and the 1-minimal cuts were the whole 7 transactions; rule 9 keeps T0 by
// its values (every writer of 1 is kept) and one fill stands for the writers of 2: the
// reader, T0 and the fill.
func TestWritersKeptByValue(t *testing.T) {
	h, err := brute.Parse(`T0 p0 ok [a x 1] [a x 1] inv=0 cmp=1
T1 p1 ok [a x 2] inv=2 cmp=3
T2 p2 ok [a x 2] inv=4 cmp=5
T3 p3 ok [a x 2] inv=6 cmp=7
T4 p4 ok [a x 2] inv=8 cmp=9
T5 p5 ok [a x 2] inv=10 cmp=11
T6 p6 ok [r x [1 2 2 2 2 2 1]] inv=12 cmp=13
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range models {
		if cutModels[m].reading == uncommitted {
			continue // its reads place no block: T0 is no anomaly there
		}
		r := oneReport(t, h, m)
		if r.Transactions > 3 {
			t.Errorf("%s: counterexample of %d transactions, want 3:\n%s", m, r.Transactions, r.EDNText())
		}
	}
}
