// Package shrink cuts a history that is not valid under a model down to a small
// sub-history that is itself not valid under that model: a counterexample a person can
// check by hand, or give to another checker. Every candidate is a sound cut
// (docs/DESIGN.md, "Counterexamples", proves that a cut that is not valid implies the
// whole is not valid, duplicates included), and the checker re-checks each one, within
// the time left; delta debugging removes transactions, then keys, then reads.
package shrink

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/prune"
)

// reading is how the proof of docs/DESIGN.md ("Counterexamples") reads a model's reads
// of a key: it decides which reads pin their writer's block and which contradict each
// other.
type reading int

const (
	// oneBase: a transaction's known reads of a key all see one list (its base) before
	// its own appends, so any such read pins its writer's block right after the base;
	// a read that misses its transaction's own appends has no witness (internal).
	// Serializable, snapshot isolation and their session, strict and repeatable-read
	// forms.
	oneBase reading = iota + 1
	// perRead: each read is its own observation; a read that misses its transaction's
	// own earlier appends is ignored (it cannot be attributed), one that shows them pins
	// the block right after the part before them, one made before them pins nothing.
	// The read-committed family.
	perRead
	// perReadSingle: per read, but a read made before its transaction's own appends
	// pins their block right after it too: placed later, it would make a G-single
	// (the read's rw edge to the block after it, then ww edges back), which the models
	// that forbid G-single reject in every attribution. Consistent view and up.
	perReadSingle
	// uncommitted: reads place no block; each key's version order is one of its
	// longest reads, and every read counts for duplicate-elements. A cut keeps each
	// kept key's distinct longest lists (their readers as stubs when left out), one
	// :fail synthetic transaction stands for the writers left out (it can take their
	// positions and gives no edge), and :ok fills for runs of positions only committed
	// writers left out took (DESIGN.md, "Counterexamples", rule 8). Read uncommitted
	// and its strong-session and strong forms.
	uncommitted
)

// cut is what the proof of docs/DESIGN.md ("Counterexamples") needs to know of a model:
// its reading of reads, and whether its verdict depends on Elle's lost-update finding
// (cursor stability: read committed's graph cannot show it), whose reads the cut must
// then keep as the whole has them.
type cut struct {
	reading reading
	// firstReads: a kept transaction that appends to a kept key keeps its first read of
	// the key before its first append to it, or no read of the key before that append
	// (build): the cut's lost updates are then the whole's.
	firstReads bool
	// confine: rule 10 keeps unpinned writers that the whole's windows at level
	// confine to a stretch of positions; level's narrowing must keep every witness of
	// the model (its models' orders are among the model's). Strong-session and strong
	// read committed share one level, so that their rows stay equal.
	confine bool
	level   prune.Level
}

// cutModels are the models the cuts are proved sound for, each with what its proof
// uses. A model missing here gets no counterexample (an error, not an unsound cut): to
// admit one, check that the proof's witness argument holds for it (docs/DESIGN.md lists
// what it needs), add its row, and the tests, which iterate over this table, check its
// cuts against the brute force. A cut made for one model serves another only when their
// rows are equal (report.go).
var cutModels = map[string]cut{
	"read-committed":                {reading: perRead},
	"strong-session-read-committed": {reading: perRead, confine: true, level: prune.Level{Process: true, PerRead: true}},
	"strong-read-committed":         {reading: perRead, confine: true, level: prune.Level{Process: true, PerRead: true}},
	// Decided as read committed: they forbid nothing more that a list-append history
	// can show.
	"monotonic-atomic-view":   {reading: perRead},
	"monotonic-view":          {reading: perRead},
	"monotonic-snapshot-read": {reading: perRead},
	// Read committed and Elle's lost update, a finding on the first reads' values.
	"cursor-stability": {reading: perRead, firstReads: true},
	// No cycle with at most one rw edge: a cut's cycle is a closed walk of the whole's
	// with as many rw edges, which holds a cycle with at most that many (DESIGN.md). A
	// lost update is a G-single in every attribution, so no first-read rule is needed.
	"consistent-view":                   {reading: perReadSingle},
	"forward-consistent-view":           {reading: perReadSingle},
	"update-serializable":               {reading: perReadSingle},
	"repeatable-read":                   {reading: oneBase},
	"serializable":                      {reading: oneBase},
	"strong-session-serializable":       {reading: oneBase},
	"strict-serializable":               {reading: oneBase},
	"snapshot-isolation":                {reading: oneBase},
	"strong-session-snapshot-isolation": {reading: oneBase},
	"strong-snapshot-isolation":         {reading: oneBase},
	// Read uncommitted: only its longest reads give edges (rule 8).
	"read-uncommitted":                {reading: uncommitted},
	"strong-session-read-uncommitted": {reading: uncommitted},
	"strong-read-uncommitted":         {reading: uncommitted},
}

// Sound reports whether the cuts are proved to preserve invalidity under model m.
func Sound(m string) bool {
	_, ok := cutModels[m]
	return ok
}

// SoundModels lists the models Sound admits, sorted.
func SoundModels() []string {
	out := make([]string, 0, len(cutModels))
	for m := range cutModels {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Options bound a shrink.
type Options struct {
	Deadline time.Time // zero: no limit
	// WholeInvalid: the caller's check found the whole history not valid under the
	// model. The whole is then the last candidate without a check of its own (for the
	// readings whose cut of the whole is the history itself), so that a model whose
	// checks do not end within their bounds (a solver-hard read committed problem) still
	// gets a counterexample, the history, rather than none.
	WholeInvalid bool
	// SearchOnly: the caller's check refuted the model only by its exhaustive search
	// over the processes' orders (check.Result.RefutedBySearchOnly). The checks of
	// removals from a cut over refuteOnlyAbove transactions leave that search out, so
	// while only it refutes the cut kept, keys are removed but transactions are not
	// (minimize).
	SearchOnly bool
}

// Counterexample is a sub-history that is not valid under Model.
type Counterexample struct {
	Model string
	// History is the cut. Its transactions keep their original :index, line, process and
	// status; the synthetic first transaction (Orig -1), when there is one, appends the
	// Prefixes (read uncommitted: a :fail one).
	History  *history.History
	Orig     []int32 // Orig[i]: the original transaction of History.Txns[i], -1 for the synthetic one
	Prefixes []Prefix
	Result   check.Result // the checker's verdict and anomalies on the cut
	Checks   int          // candidates the checker decided
	// Minimal: every single removal (a key, a transaction, a read) from the cut was
	// tried and decided valid or unsound; false when the time ran out first, or a
	// removal's check was left undecided by its bounds.
	Minimal bool
	// NotMinimal says why Minimal is false ("" when it is true).
	NotMinimal string
	Seconds    float64
	// AnomalyIndexes: for the whole history (wholeCounterexample), where its anomalies
	// are in the caller's result.
	AnomalyIndexes []int

	cand cand // the cut of the original history that History is
}

// candidateTime is the least time a seed's check gets when the search is bounded (else
// a third of what is left), and the most a removal's check gets; candidateConflicts
// bounds a removal's search.
const (
	candidateTime      = 2 * time.Second
	candidateConflicts = 2000
)

// refuteOnlyAbove is the size (transactions) above which a removal's check looks only
// for a refutation; a smaller cut's removals get the whole check, so that a 1-minimal
// cut is known to be one.
const refuteOnlyAbove = 200

// refuteOnlyConflicts bounds the solver on such a cut: a conflict costs ~0.6 ms at 5K
// transactions, and the refutations taken there come from the narrowing or within a
// few dozen conflicts.
const refuteOnlyConflicts = 16

// explainShare is the part of a shrink's time kept for explaining the cut it keeps.
const explainShare = 0.15

type shrinker struct {
	h       *history.History
	model   string
	reading reading
	// firstReads: see cut.firstReads.
	firstReads bool
	deadline   time.Time
	appends    []int32 // per key: appends by transactions that are not :fail
	// appendCount counts those appends per (key, value); longest is each key's longest
	// known read of an :ok transaction (an op index, -1 if none), and positions caches
	// where its values lie (valuePin).
	appendCount map[[2]int32]int32
	// allCount counts every transaction's appends per (key, value), :fail ones too
	// (read uncommitted's duplicate-elements count); uLongest lists, per key, one read
	// of each distinct longest list of a known read of an :ok transaction, version
	// reads included (read uncommitted's candidates for the version order).
	allCount map[[2]int32]int32
	uLongest [][]int32
	readerOf map[int32]int32    // a longest read's transaction
	notOK    map[[2]int32]int32 // appends per (key, value) by transactions that are not :ok
	// listOf: a read of a longest list's length, the index of its list in uLongest;
	// excessRead: a read that shows a value more often than its key was appended it.
	listOf     map[int32]int
	excessRead map[int32]bool
	longest    []int32
	positions  map[int32]map[int32]int
	checks     int
	timedOut   bool
	// undecided counts the candidates since the last success whose check ended without
	// a verdict (its bounds): the best cut is then not known to be 1-minimal.
	undecided int
	// settled: the last round of minimize removed nothing.
	settled bool
	// wholeInvalid: Options.WholeInvalid.
	wholeInvalid bool
	// noGrowth: a removal that makes the cut bigger is not taken (after a cut whose
	// synthetic writers outgrew the history was replaced by the history).
	noGrowth bool
	// searchOnly: Options.SearchOnly. bestSearchOnly: only the search over the
	// processes' orders refuted the best cut (check.Result.RefutedBySearchOnly;
	// searchOnly for the whole taken unchecked); unshrunk says why minimize then
	// removed no transaction.
	searchOnly     bool
	bestSearchOnly bool
	unshrunk       string
	best           cand
	bestBuilt      cand // the candidate bestB was built from (best may drop transactions that left no op)
	bestB          *built
	bestRes        check.Result
	// segments: per key, the stretches of positions the whole's windows confine their
	// writers to (rule 10), computed once (segmentsDone) when a cut first needs them.
	segments     []keySegments
	segmentsDone bool
}

// Shrink returns a counterexample for model m, starting from the transactions of each
// seed in turn (an anomaly's transactions: the cut is first tried on those alone), or
// an error when no cut it tried within the time is verified not valid.
func Shrink(h *history.History, m string, seeds [][]int32, opts Options) (*Counterexample, error) {
	if !Sound(m) {
		return nil, fmt.Errorf("no counterexample for %s: the cuts are not proved sound for it (they are for %s)", m, strings.Join(SoundModels(), ", "))
	}
	t0 := time.Now()
	s := newShrinker(h, m)
	s.deadline = opts.Deadline
	s.wholeInvalid, s.searchOnly = opts.WholeInvalid, opts.SearchOnly
	if !opts.Deadline.IsZero() {
		// The search stops early enough to explain the cut it keeps.
		s.deadline = t0.Add(time.Duration(float64(opts.Deadline.Sub(t0)) * (1 - explainShare)))
	}
	found := s.start(seeds)
	if found && s.reading == uncommitted && len(s.bestB.h.Txns) > len(h.Txns) {
		// The seed's cut, with its stubs and synthetic writers, outgrew the history:
		// the whole, with only its longest reads, is not valid either.
		s.try(whole(h))
	}
	if !found {
		why := fmt.Sprintf("no cut tried was verified not valid (%d checked)", s.checks)
		switch {
		case s.timedOut && s.checks == 0:
			why = "the time ran out before a cut was checked"
		case s.timedOut:
			why = fmt.Sprintf("the time ran out before a cut was verified not valid (%d checked, none not valid)", s.checks)
		}
		return nil, fmt.Errorf("no counterexample for %s: %s", m, why)
	}
	s.minimize()
	if s.wholeInvalid && s.reading != uncommitted && len(s.bestB.h.Txns) > len(h.Txns) {
		// Synthetic writers outgrew the history: the history itself is smaller.
		all := whole(h)
		all.confine = s.best.confine
		if b, ok := s.build(all); ok && len(b.h.Txns) == len(h.Txns) {
			s.best, s.bestB, s.bestBuilt, s.bestRes = all, b, all, check.Result{}
			// Shrunk again from the history, taking no removal that grows the cut: the
			// history is rarely 1-minimal (a removal can leave fewer ops).
			s.noGrowth, s.settled = true, false
			s.minimize()
		}
	}
	// The cut kept was checked for its verdict only: check it again, explained. Should
	// that run out of time, the verdict stands and the explanation is missing.
	final := check.Options{Models: []string{m}}
	if !opts.Deadline.IsZero() {
		final.Timeout = max(time.Until(opts.Deadline), time.Millisecond)
	}
	if res, err := check.Check(s.bestB.h, final); err == nil && res.Valid == check.Invalid {
		s.bestRes = res
	}
	cx := &Counterexample{Model: m, History: s.bestB.h, Orig: s.bestB.orig, Prefixes: s.bestB.prefixes,
		Result: s.bestRes, Checks: s.checks, Seconds: time.Since(t0).Seconds(), cand: s.bestBuilt}
	switch {
	case s.unshrunk != "":
		cx.NotMinimal = s.unshrunk
	case s.timedOut:
		cx.NotMinimal = "the time ran out"
	case !s.settled:
		cx.NotMinimal = "it was still shrinking after the last round"
	case s.undecided > 0:
		cx.NotMinimal = fmt.Sprintf("%d of the removals tried last were left undecided by their bounds", s.undecided)
	default:
		cx.Minimal = true
	}
	return cx, nil
}

// wholeCounterexample is the history itself as m's counterexample, for a model the
// caller's check found not valid whose search found no smaller cut (why says what
// happened): its explanation is the caller's anomalies that count for m. None under
// read uncommitted, whose cut of the whole keeps only the longest reads.
func wholeCounterexample(h *history.History, m string, res *check.Result, why string) (*Counterexample, bool) {
	if !Sound(m) || cutModels[m].reading == uncommitted {
		return nil, false
	}
	// The whole history is its own cut (every writer kept: no prefix stands for any),
	// so it is taken as it is; building it again, per model, took seconds at 100K
	// transactions, all of them after the time limit.
	orig := make([]int32, len(h.Txns))
	for i := range orig {
		orig[i] = int32(i)
	}
	cx := &Counterexample{Model: m, History: h, Orig: orig, cand: whole(h),
		NotMinimal: "it is the whole history: " + why}
	for i, a := range res.Anomalies {
		if check.CountsFor(&a, m) {
			cx.Result.Anomalies = append(cx.Result.Anomalies, a)
			cx.AnomalyIndexes = append(cx.AnomalyIndexes, i)
		}
	}
	return cx, true
}

func newShrinker(h *history.History, m string) *shrinker {
	s := &shrinker{h: h, model: m, reading: cutModels[m].reading, firstReads: cutModels[m].firstReads, appends: make([]int32, len(h.Keys)), appendCount: map[[2]int32]int32{},
		longest: make([]int32, len(h.Keys)), positions: map[int32]map[int32]int{}}
	for k := range s.longest {
		s.longest[k] = -1
	}
	if s.reading == uncommitted {
		s.indexUncommitted()
	}
	for t := range h.Txns {
		tx := &h.Txns[t]
		if tx.Status == history.Fail {
			continue
		}
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			switch {
			case op.Kind == history.Append:
				s.appends[op.Key]++
				s.appendCount[[2]int32{op.Key, op.Value}]++
			case tx.Status == history.OK && op.Known && (s.reading != oneBase || attributable(h, int32(t), i)):
				// A read that shows its transaction's own earlier appends last is a
				// prefix of the key's list, and per read so is a version read: either
				// can pin values (one base, a version read has no witness).
				if l := s.longest[op.Key]; l < 0 || op.End-op.Start > h.Ops[l].End-h.Ops[l].Start {
					s.longest[op.Key] = i
				}
			}
		}
	}
	return s
}

// start finds a first cut that is not valid: a seed's transactions on their keys, then
// with every transaction touching those keys, then the whole history.
func (s *shrinker) start(seeds [][]int32) bool {
	h := s.h
	var tiers []cand
	for _, seed := range seeds {
		txns := slices.Clone(seed)
		slices.Sort(txns)
		txns = slices.Compact(txns)
		tiers = append(tiers, cand{txns: txns, keys: s.keysOf(txns)})
	}
	// Rule 10 only where the narrowing overfills a segment of few writers: keeping
	// the unpinned writers of wide segments makes each check a pigeonhole as hard as
	// the whole (a third of the checks in the same time, and a bigger cut).
	var around []cand
	confine := false
	if txns := s.overfullSeed(); txns != nil {
		// That segment, with what ran around it: tried first (the evidence's own
		// transactions, on a 10K history, took the time with checks of their own).
		confine = true
		around = append(around, cand{txns: txns, keys: s.keysOf(txns), confine: true})
	}
	for i := range tiers {
		tiers[i].confine = confine
	}
	evidence := len(tiers)
	tiers = append(around, tiers...)
	if len(seeds) > 0 {
		first := tiers[len(tiers)-evidence]
		keys := map[int32]bool{}
		for _, k := range first.keys {
			keys[k] = true
		}
		var txns []int32
		for t := range h.Txns {
			for _, op := range h.TxnOps(t) {
				if keys[op.Key] {
					txns = append(txns, int32(t))
					break
				}
			}
		}
		tiers = append(tiers, cand{txns: txns, keys: first.keys, confine: confine})
	}
	// The whole, known not valid, is taken unchecked: the cut of every transaction and
	// key is the history itself, except under read uncommitted (its longest reads only).
	trusted := s.wholeInvalid && s.reading != uncommitted
	all := whole(h)
	all.confine = confine
	if !trusted {
		tiers = append(tiers, all)
	}
	for _, c := range tiers {
		if s.try(c) {
			return true
		}
		if s.timedOut {
			break
		}
	}
	if trusted {
		if b, ok := s.build(all); ok && len(b.h.Txns) == len(h.Txns) {
			s.best, s.bestB, s.bestBuilt = all, b, all
			s.undecided = 0
			s.bestSearchOnly = s.searchOnly
			return true
		}
	}
	return false
}

// whole is the cut that keeps every transaction and every key.
func whole(h *history.History) cand {
	c := cand{txns: make([]int32, len(h.Txns)), keys: make([]int32, len(h.Keys))}
	for i := range c.txns {
		c.txns[i] = int32(i)
	}
	for i := range c.keys {
		c.keys[i] = int32(i)
	}
	return c
}

// keysOf lists the keys the transactions touch.
func (s *shrinker) keysOf(txns []int32) []int32 {
	var keys []int32
	for _, t := range txns {
		for _, op := range s.h.TxnOps(int(t)) {
			keys = append(keys, op.Key)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// try builds c and checks it; a cut verified not valid becomes the best so far.
func (s *shrinker) try(c cand) bool {
	if s.out() {
		return false
	}
	b, ok := s.build(c)
	if !ok || len(b.h.Txns) == 0 {
		return false
	}
	if (s.reading == uncommitted || s.noGrowth) && s.bestB != nil && bigger(b.h, s.bestB.h) {
		// Read uncommitted's cut can grow when a transaction goes: its longest reads
		// stay (a stub) and synthetic writers stand for its appends.
		return false
	}
	// Only the verdict: the cut kept is explained once, at the end (Shrink).
	opts := check.Options{Models: []string{s.model}, VerdictOnly: true}
	if s.bestB != nil {
		// A removal from a cut already not valid: most are decided at once (a replay,
		// the order count, a short search), and one the solver cannot decide soon (a
		// pigeonhole over duplicates, as in the whole) is not taken rather than
		// allowed a share of the time.
		opts.MaxConflicts = candidateConflicts
		if len(b.h.Txns) > refuteOnlyAbove && s.reading != uncommitted {
			// Only a refutation takes a removal: on a large cut, the stages that can
			// only prove it valid (replays, serial and local searches) would spend
			// its time (othergen's snapshot-isolated store at 5K under serializable:
			// 1.6 s a cut, 11 cuts in the 18 s).
			opts.Solver.NoWitness, opts.Solver.NoSerialSearch, opts.Solver.NoLocalSearch = true, true, true
			opts.MaxConflicts = refuteOnlyConflicts
		}
	}
	if !s.deadline.IsZero() {
		left := time.Until(s.deadline)
		if left <= 0 {
			s.timedOut = true
			return false
		}
		// One hard candidate must not take all the time: it is then not taken, and
		// smaller ones are tried.
		opts.Timeout = min(left, max(candidateTime, left/3))
		if s.bestB != nil {
			opts.Timeout = min(left, candidateTime)
		}
	}
	res, err := check.Check(b.h, opts)
	if err != nil {
		return false
	}
	s.checks++
	if res.Valid == check.Unknown {
		if s.out() {
			s.timedOut = true
		} else {
			s.undecided++
		}
	}
	if res.Valid != check.Invalid {
		return false
	}
	s.best, s.bestB, s.bestRes, s.bestBuilt = c, b, res, c
	s.bestSearchOnly = res.RefutedBySearchOnly(s.model)
	s.undecided = 0
	return true
}

func (s *shrinker) out() bool {
	if !s.deadline.IsZero() && !time.Now().Before(s.deadline) {
		s.timedOut = true
	}
	return s.timedOut
}

// minimize removes keys, then transactions, then reads, while the cut stays not valid,
// and again until nothing more goes.
func (s *shrinker) minimize() {
	for round := 0; round < 4 && !s.out(); round++ {
		before := s.size()
		// Keys first: there are few, and each one left out takes its writers along.
		s.best = s.best.withKeys(s.presentKeys())
		ddmin(s.best.keys, func(keys []int32) bool { return s.try(s.best.withKeys(keys)) }, s.out)
		if round == 0 {
			s.valueCuts()
		}
		if s.bestSearchOnly && len(s.bestB.h.Txns) > refuteOnlyAbove {
			// Only the exhaustive search over the processes' orders refutes the cut,
			// and a removal from a cut this large is checked for refutations only,
			// without that search: transactions removed one chunk at a time are not
			// taken (a lost update among 1,000 transactions: 290 removals in 17 s, none
			// taken). Removing keys, above, is what brings such a cut within reach.
			s.unshrunk = fmt.Sprintf("only the search over every order of its processes refutes it, which the checks of removals from a cut over %d transactions leave out", refuteOnlyAbove)
			break
		}
		s.best = s.best.withTxns(s.present())
		ddmin(s.best.txns, func(txns []int32) bool { return s.try(s.best.withTxns(txns)) }, s.out)
		if s.reading != uncommitted { // read uncommitted's cuts choose their reads
			s.dropReads()
		}
		if s.size() == before {
			s.settled = !s.out()
			break
		}
	}
	s.best = s.best.withTxns(s.present())
}

// size measures the best cut: transactions, then micro-ops, then values read.
func (s *shrinker) size() [3]int {
	return sizeOf(s.bestB.h)
}

func sizeOf(h *history.History) [3]int {
	return [3]int{len(h.Txns), len(h.Ops), len(h.ReadValues)}
}

// bigger reports whether cut a is bigger than cut b: more transactions, or as many and
// more micro-ops, or as many of both and more values read.
func bigger(a, b *history.History) bool {
	sa, sb := sizeOf(a), sizeOf(b)
	return slices.Compare(sa[:], sb[:]) > 0
}

// present lists the original transactions of the best candidate left in its cut (not
// the readers read uncommitted's cut keeps for their longest reads alone).
func (s *shrinker) present() []int32 {
	var out []int32
	for _, t := range s.bestB.orig {
		if _, in := slices.BinarySearch(s.best.txns, t); t >= 0 && in {
			out = append(out, t)
		}
	}
	return out
}

// presentKeys lists the original keys left in the best cut.
func (s *shrinker) presentKeys() []int32 {
	var out []int32
	names := map[string]bool{}
	for _, k := range s.bestB.h.Keys {
		names[k] = true
	}
	for _, k := range s.best.keys {
		if names[s.h.Keys[k]] {
			out = append(out, k)
		}
	}
	return out
}

// maxValueCuts bounds the value classes valueCuts tries per key.
const maxValueCuts = 4

// valueCuts tries, for each key of the best cut, rule 9 with V one class of the key's
// values (values joined when one writer that is not :fail appends both), the classes
// with the fewest appends first: the writers of every other class leave the key at
// once, where ddmin, removing transactions by position, would take one away from a
// class at a time and so break rule 9's condition at each step.
func (s *shrinker) valueCuts() {
	if s.reading == uncommitted {
		return
	}
	h := s.h
	for _, k := range s.best.keys {
		if s.out() {
			return
		}
		if _, set := s.best.vals[k]; set {
			continue
		}
		// Union-find over the key's values, joined by their writers.
		parent := map[int32]int32{}
		var find func(v int32) int32
		find = func(v int32) int32 {
			for parent[v] != v {
				parent[v] = parent[parent[v]]
				v = parent[v]
			}
			return v
		}
		count := map[int32]int32{}
		for t := range h.Txns {
			if h.Txns[t].Status == history.Fail {
				continue
			}
			first := int32(-1)
			for _, op := range h.TxnOps(t) {
				if op.Kind != history.Append || op.Key != k {
					continue
				}
				if _, ok := parent[op.Value]; !ok {
					parent[op.Value] = op.Value
				}
				count[op.Value]++
				if first < 0 {
					first = op.Value
				} else if a, b := find(first), find(op.Value); a != b {
					parent[b] = a
				}
			}
		}
		classes := map[int32][]int32{}
		for v := range parent {
			classes[find(v)] = append(classes[find(v)], v)
		}
		if len(classes) < 2 {
			continue // one class is every writer: nothing leaves
		}
		var order [][]int32
		for _, vs := range classes {
			slices.Sort(vs)
			order = append(order, vs)
		}
		appends := func(vs []int32) int32 {
			n := int32(0)
			for _, v := range vs {
				n += count[v]
			}
			return n
		}
		slices.SortFunc(order, func(a, b []int32) int {
			if c := appends(a) - appends(b); c != 0 {
				return int(c)
			}
			return slices.Compare(a, b)
		})
		for i, vs := range order {
			if i == maxValueCuts || s.out() {
				break
			}
			c := s.best.withVals(k, vs)
			if b, ok := s.build(c); !ok || !bigger(s.bestB.h, b.h) {
				continue // no writer leaves: nothing to check
			}
			if s.try(c) {
				break
			}
		}
	}
}

// dropReads tries leaving out each read of the best cut, one at a time.
func (s *shrinker) dropReads() {
	h := s.h
	keys := map[int32]bool{}
	for _, k := range s.best.keys {
		keys[k] = true
	}
	for _, t := range s.present() {
		tx := &h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			if s.out() {
				return
			}
			op := &h.Ops[i]
			if op.Kind != history.Read || !keys[op.Key] || s.best.dropped[i] {
				continue
			}
			dropped := make(map[int32]bool, len(s.best.dropped)+1)
			for j := range s.best.dropped {
				dropped[j] = true
			}
			dropped[i] = true
			s.try(cand{txns: s.best.txns, keys: s.best.keys, dropped: dropped, vals: s.best.vals, confine: s.best.confine})
		}
	}
}

// ddmin is delta debugging's minimization by complements: it removes chunks of items
// while test says the rest still fails, halving the chunks when a pass removed none,
// down to single items, until a pass over single items removes none (the result is
// then 1-minimal unless stop cut it short). A pass goes on after a removal from where it
// was, rather than from the first chunk: the chunks before it were just tried, and
// starting over makes the passes over single items quadratic (each removal retried
// every item before it). test keeps the state of the last success.
func ddmin(items []int32, test func([]int32) bool, stop func() bool) []int32 {
	chunk := (len(items) + 1) / 2
	for len(items) >= 2 && !stop() {
		chunk = min(chunk, (len(items)+1)/2)
		reduced := false
		for from := 0; from < len(items) && !stop(); {
			rest := append(slices.Clone(items[:from]), items[min(from+chunk, len(items)):]...)
			if test(rest) {
				items, reduced = rest, true
				continue // the next chunk now starts at from
			}
			from += chunk
		}
		if !reduced {
			if chunk == 1 {
				break
			}
			chunk = (chunk + 1) / 2
		}
	}
	if len(items) == 1 && !stop() && test(nil) {
		items = nil
	}
	return items
}
