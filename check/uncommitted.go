package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"doppel/encode"
	"doppel/uncommitted"
)

// decideUncommitted decides the read-uncommitted models among names on their own
// definition (DESIGN.md, "Read uncommitted"; package uncommitted): their anomalies are
// tagged and count for them only, and theirs only count for them. Where the fixed
// edges leave keys open, verified replays are tried before the search
// (replayUncommitted); when they fail, the exact search decides.
func (c *checker) decideUncommitted(names []string) map[string]*ModelResult {
	results := map[string]*ModelResult{}
	c.progress("deciding read uncommitted")
	t0 := time.Now()
	defer func() { c.res.Stats.SolveSeconds += time.Since(t0).Seconds() }()
	findingsAdded := false
	var x *uncommitted.Index
	replayed := false
	alone := true
	for _, m := range c.order {
		alone = alone && models[m].uncommitted
	}
	if alone {
		// Asked alone, the replays come first: on a valid history they cost what
		// serializable's check costs, and the index (seconds at a million
		// transactions) is then never built. With other models asked, a model they
		// prove already implies read uncommitted, and the replays ran for them. The
		// narrowed witness waits for the order count (Decide), which is cheaper and
		// refutes what it cannot prove (a lost update's loser under process order).
		c.replayUncommitted(names, false)
	}
	// Strongest first: one proved valid proves the weaker forms (graphWithin). Where a
	// deadline is set, each model's turn is capped at its share of the time left (the
	// first one asked took it all, and a stronger form the solver proves in a second
	// was left unknown); a second round, with no cap, takes those the cap left unknown.
	byStrength := slices.Clone(names)
	strength := func(m string) int {
		n := 0
		if models[m].process {
			n++
		}
		if models[m].realtime {
			n++
		}
		return n
	}
	slices.SortStableFunc(byStrength, func(a, b string) int { return strength(b) - strength(a) })
	var capped []string
	for round := 0; round < 2; round++ {
		todo := byStrength
		if round == 1 {
			todo, capped = capped, nil
		}
		for i, m := range todo {
			stop := c.budget.stop
			if left := len(todo) - i; round == 0 && left > 1 && !c.budget.deadline.IsZero() {
				// The relaxed witness's time is not the model's: it proves every form.
				capAt := time.Now().Add(time.Until(c.budget.deadline) / time.Duration(left))
				stop = func() bool { return c.budget.stop() || !time.Now().Before(capAt.Add(c.ruRelaxedTime)) }
			}
			c.decideUncommittedModel(m, names, stop, results, &x, &replayed, &findingsAdded)
			if mr := results[m]; round == 0 && mr.Valid == Unknown && !c.budget.out() {
				capped = append(capped, m)
			}
		}
	}
	return results
}

// decideUncommittedModel decides read-uncommitted model m (one of names) into results,
// with stop as its limit; x, replayed and findingsAdded are decideUncommitted's, shared
// by the models.
func (c *checker) decideUncommittedModel(m string, names []string, stop func() bool, results map[string]*ModelResult, xp **uncommitted.Index, replayed, findingsAdded *bool) {
	x := *xp
	spec := models[m]
	mr := &ModelResult{Model: m}
	for _, v := range names {
		if r := results[v]; r != nil && r.Valid == Valid && graphWithin(m, v) {
			// A model whose graph holds m's proved valid: so is m.
			mr.Valid = Valid
			results[m] = mr
			return
		}
	}
	if c.budget.out() && !c.proven[m] {
		// A limit already reached holds here too: no new phase starts.
		mr.Valid, mr.Message = Unknown, c.budget.message(m)
		results[m] = mr
		return
	}
	if c.proven[m] {
		mr.Valid = Valid
		results[m] = mr
		return
	}
	if len(c.forbiddenFound(m)) > 0 {
		// A weaker model's refutation (its graph lies within this one's) holds here.
		mr.Valid = Invalid
		results[m] = mr
		return
	}
	if x == nil {
		x = c.uncommittedIndex()
		*xp = x
	}
	c.progress("deciding " + m)
	x.Progress = func(stage string) { c.progress("deciding " + m + ": " + stage) }
	x.Witness = func() bool { return c.ruRelaxedWitness(x, names, m) }
	r := x.Decide(spec.process, spec.realtime, stop, func() bool {
		if !*replayed {
			*replayed = true
			c.replayUncommitted(names, true)
		}
		return c.proven[m]
	})
	switch r.Verdict {
	case uncommitted.Valid:
		mr.Valid = Valid
		if r.ByWitness {
			c.res.Stats.Witnessed++
		}
	case uncommitted.Invalid:
		mr.Valid = Invalid
	default:
		mr.Valid, mr.Message = Unknown, c.budget.message(m)
	}
	if !*findingsAdded && len(r.Findings) > 0 {
		*findingsAdded = true
		for _, f := range r.Findings {
			c.addUncommittedFinding(f)
		}
	}
	if r.Cycle != nil {
		c.addUncommittedCycle(m, r)
	}
	if r.Serial != nil {
		c.addUncommittedSerial(m, spec.realtime, r.Serial)
	}
	results[m] = mr
}

// uncommittedIndex returns read uncommitted's index of c.h, built the first time.
func (c *checker) uncommittedIndex() *uncommitted.Index {
	if c.ruIndex == nil {
		x := uncommitted.NewIndex(c.h)
		x.NoSerial = c.opts.Solver.NoWitness // --no-witness: the search over attributions alone
		x.Conflicts = &c.res.Stats.Conflicts
		x.ConflictsLeft = c.budget.conflictsLeft
		x.States = &c.res.Stats.SearchStates
		c.ruIndex = x
	}
	return c.ruIndex
}

// replayUncommitted tries to prove the read-uncommitted models names by verified
// replays, into c.proven. A model whose graph contains read uncommitted's with its
// orders implies it (DESIGN.md, "Read uncommitted"), so the replays that prove those
// prove these: first the read-by-read one (read committed's, provePerRead, checked by
// verifyPerRead), then, when read uncommitted was asked alone, the serial one
// (proveByReplay, checked by verifySerial; it gets through the duplicates where the
// read-by-read one is stuck). A replay already run for other models asked is not run
// again (it would fail again), nor one whose inference found anomalies (of the models
// it proves, which read uncommitted may allow: the search decides then). Every replay
// polls the limits.
//
// Without witness the strict narrowed witness (the costliest) is left for a later call;
// each step runs once.
func (c *checker) replayUncommitted(names []string, witness bool) {
	if c.opts.Solver.NoWitness {
		return
	}
	left := func() []string {
		var l []string
		for _, m := range names {
			if !c.proven[m] {
				l = append(l, m)
			}
		}
		return l
	}
	alone := true
	for _, m := range c.order {
		alone = alone && models[m].uncommitted
	}
	if !c.perReadTried && !c.budget.out() {
		c.perReadTried = true
		// The value checks first, as read committed's own path runs them: a read that
		// needs an aborted append (a duplicate-elements finding there, which read
		// uncommitted allows) leaves the replay nothing to prove, and its repairs
		// spent seconds finding that out (the aborted-read family at 10,000: 2 of
		// 2.5 CPU-s). Their findings are the per-read inference's own, not read
		// uncommitted's: they are never reported for it.
		if in := c.perReadInference(); in != nil && in.CheckValuesStop(c.budget.stop) && perReadClean(in) && !c.budget.out() {
			// Its plain replays, then the guided one with its repairs, then strong
			// read committed's serial search as a witness (its order keeps process
			// and real-time order, so it proves every form), then the replays'
			// repairs, as read committed's own path orders them (provePerReadFirst). Where the database kept read
			// committed, the search finds the order the runs search gets lost
			// looking for among the uncommitted appends (othergen's read-committed
			// store at 5,000 with 5% :fail and :info); the repairs first took 2.4 of
			// 2.9 CPU-s at 10,000.
			c.provePerReadPass(in, names, false)
			if l := left(); len(l) > 0 && alone && !c.budget.out() {
				// Asked alone, the one-base serial attempts in their quick form next,
				// as read committed's path has them (provePerReadFirst): a serial order
				// proves read uncommitted too. On hot keys with :info at 10K the strict
				// search proves the history in ~2 s, where the witness below and the
				// repairs ran past 20 s before the serial attempts' turn came.
				// Not where a lost update was found: no serial order exists.
				if ob := c.ruOneBase(); ob != nil && len(ob.Findings) == 0 && !skipReplays && !c.ruFindLost() && !c.budget.out() {
					c.progress("replaying serially")
					c.quickSerialAttempts(ob, l)
				}
			}
			if l := left(); len(l) > 0 && !c.budget.out() {
				c.provePerReadGuidedRepair(in, l)
			}
			if l := left(); len(l) > 0 && !c.budget.out() {
				c.ruLostUpdateWitness(in, l)
			}
			if l := left(); len(l) > 0 && !c.budget.out() {
				// Before the strong witness's search, which looks for an order of
				// the real history under real-time order: where a lost update's
				// loser has no place in its key's list, it finds none (hot keys of
				// two values, 2,000 transactions: 4.7 s), and the losers placed
				// anew prove the forms with process order in a fraction of that.
				c.losersPlaced(l)
			}
			if l := left(); len(l) > 0 && !c.budget.out() {
				c.strongWitness(in, l)
			}
			if l := left(); len(l) > 0 && !c.budget.out() {
				c.provePerRead(in, names)
			}
		}
	}
	if l := left(); len(l) > 0 && alone && !c.budget.out() && !c.ruSerialTried && !c.ruFindLost() {
		// Not where a lost update was found: no serial order exists (hot keys of two
		// values at 2,000: its strict search took 4 s for nothing).
		c.ruSerialTried = true
		if in := c.ruOneBase(); in != nil && len(in.Findings) == 0 && !c.budget.out() {
			c.progress("replaying serially")
			c.proveByReplay(in, l)
		}
	}
	if in := c.ruOneBaseIn; witness && !c.ruWitnessTried && in != nil && len(left()) > 0 && !c.budget.out() {
		c.ruWitnessTried = true
		if len(in.Findings) == 0 && c.strictNarrowedWitness(in) {
			for _, m := range names {
				c.proven[m] = true
			}
		}
	}
}

// ruLostUpdateWitness runs read committed's relaxed witness (relaxedPerRead) for the
// read-uncommitted models left where the history has lost updates: no serial order
// exists there, and a serial order with the losers' reads left unknown, verified read
// by read on the real history, proves read committed and so read uncommitted
// (graphWithin). Read uncommitted's own relaxed witness leaves every read but the
// longest unknown, which gives the serial searches far more to choose among: on a lost
// update among 1,000 transactions of 50 keys with values 1..6 it found nothing in 20 s,
// where this one finds the order from the end at once. It runs before the strong
// witness, as on read committed's path (provePerReadFirst). in is the per-read
// inference.
func (c *checker) ruLostUpdateWitness(in *encode.Inference, left []string) {
	if !c.ruFindLost() {
		return
	}
	if ob := c.ruOneBase(); ob != nil && !c.budget.out() {
		c.relaxedBeforeWitnesses(in, ob, left)
	}
}

// ruFindLost reports whether c.h has lost updates, looking for them the first time
// on read uncommitted's path, which does not otherwise (it allows them): c.ruLost.
func (c *checker) ruFindLost() bool {
	if len(c.lostUpdatesFound()) > 0 {
		return true
	}
	if c.ruLostLooked || c.budget.out() {
		return false
	}
	c.ruLostLooked = true
	lost, ok := lostUpdatesStop(c.h, c.budget.stop)
	if !ok || len(lost) == 0 {
		return false
	}
	c.ruLost = lost
	return true
}

// ruOneBase returns the one-base inference read uncommitted's serial attempts run on,
// inferred and its values checked the first time (nil when the limits ran out): a
// serial replay proves nothing where a read shows an aborted append, which the value
// checks find.
func (c *checker) ruOneBase() *encode.Inference {
	if c.ruOneBaseIn != nil {
		return c.ruOneBaseIn
	}
	c.progress("inferring dependencies")
	t0 := time.Now()
	in := encode.InferStop(c.h, c.budget.stop)
	c.res.Stats.InferSeconds += time.Since(t0).Seconds()
	if in == nil || !in.CheckValuesStop(c.budget.stop) {
		return nil // the limits ran out
	}
	c.ruOneBaseIn = in
	return in
}

// strictNarrowedWitness reports whether strict serializability, decided on its narrowed
// problem by a checker of its own (what it finds is no evidence about read
// uncommitted, and must neither show nor hide any) under a bounded number of
// conflicts, is valid: it implies every read-uncommitted model. The narrowing and its
// window replays prove serializable histories with few values on few keys, where the
// replays are stuck and the search over attributions is exponential.
func (c *checker) strictNarrowedWitness(in *encode.Inference) bool {
	const strict = "strict-serializable"
	in.CheckValues()
	if len(in.Findings) > 0 {
		return false
	}
	return c.narrowedWitness(in, strict, "a witness for read uncommitted")
}

// narrowedWitness decides model on its narrowed problem with capped conflicts, by a
// checker of its own (what it finds there is no evidence about c's models, and must
// neither show nor hide any): true when it is valid, which proves the models it
// implies.
func (c *checker) narrowedWitness(in *encode.Inference, model, why string) bool {
	sub, ready := c.witnessChecker()
	if !ready {
		return false
	}
	c.progress("narrowing for " + model + " (" + why + ")")
	lift := sub.budget.capConflicts(strictWitnessConflicts)
	v, _ := sub.decideNarrowed(in, model)
	lift()
	ok := v == Valid && len(sub.res.Anomalies) == 0 && !sub.keyUnsat
	c.addWitnessStats(sub, ok)
	c.res.Stats.PruneSeconds += sub.res.Stats.PruneSeconds
	return ok
}

func (c *checker) addUncommittedFinding(f uncommitted.Finding) {
	h := c.h
	text := fmt.Sprintf("%s read %s %d times from key %s, which was appended %d times (by any transaction, :fail ones included)",
		c.ruName(f.Txn), h.Values[f.Value], f.Shown, h.Keys[f.Key], f.Appended)
	c.res.Anomalies = append(c.res.Anomalies, Anomaly{Type: f.Type, Key: h.Keys[f.Key], Txns: []TxnRef{c.txnRef(f.Txn)},
		Explanation: text, uncommitted: true})
}

// addUncommittedCycle records the cycle of r: among fixed edges it holds in every
// attribution (no model); met by an exhausted search it is an example, and the
// anomaly is proved for model m (and the models whose graph contains m's).
func (c *checker) addUncommittedCycle(m string, r uncommitted.Result) {
	h := c.h
	typ := uncommitted.CycleType(r.Cycle)
	a := Anomaly{Type: typ, uncommitted: true}
	if !r.Fixed {
		a.Model = m
	}
	var why []string
	for _, s := range r.Cycle {
		st := Step{From: int(s.From), To: int(s.To), FromIndex: h.Txns[s.From].Index, ToIndex: h.Txns[s.To].Index,
			Kind: s.Kind.String(), AMop: -1, BMop: -1}
		from, to := c.ruName(s.From), c.ruName(s.To)
		switch s.Kind {
		case uncommitted.WW:
			st.Key = h.Keys[s.Key]
			if s.Value >= 0 {
				st.Why = fmt.Sprintf("%s appended %s after %s appended %s to %s, in the longest read of %s", to, h.Values[s.Value], from, h.Values[s.PrevValue], h.Keys[s.Key], h.Keys[s.Key])
			} else {
				st.Why = fmt.Sprintf("%s appended to %s after %s's %s, the last value of the longest read, which does not show it", to, h.Keys[s.Key], from, h.Values[s.PrevValue])
			}
		case uncommitted.Process:
			st.Why = fmt.Sprintf("%s ran before %s in the same process", from, to)
		default:
			st.Why = fmt.Sprintf("%s completed before %s was invoked", from, to)
		}
		a.Steps = append(a.Steps, st)
		a.Txns = append(a.Txns, c.txnRef(s.From))
		why = append(why, st.Why)
	}
	if r.Fixed {
		a.Explanation = "a cycle in every attribution of the duplicated values: " + strings.Join(why, "; ")
	} else {
		a.Explanation = fmt.Sprintf("every attribution of the duplicated values to appends has a cycle under %s; the first one met: %s", m, strings.Join(why, "; "))
	}
	for i := range c.res.Anomalies {
		// The strong forms meet the same cycle among fixed edges: report it once.
		if b := &c.res.Anomalies[i]; b.uncommitted && b.Model == a.Model && b.Type == a.Type && b.Explanation == a.Explanation {
			return
		}
	}
	// The forms are decided strongest first: a stronger one refuted by the same cycle
	// keeps this weaker one's anomaly only, which counts for it too (countsFor).
	kept := c.res.Anomalies[:0]
	for _, b := range c.res.Anomalies {
		if !(b.uncommitted && b.Model != "" && a.Model != "" && b.Model != a.Model && graphWithin(a.Model, b.Model) && slices.Equal(b.Steps, a.Steps)) {
			kept = append(kept, b)
		}
	}
	c.res.Anomalies = append(kept, a)
}

// addUncommittedSerial records the serial search's proof for model m (and the models
// whose graph contains m's): no order of the :ok writers that keeps process (real-time)
// order runs every key's writers through its longest read, so every attribution has a
// cycle of ww edges and that order, a G0-process (G0-realtime).
func (c *checker) addUncommittedSerial(m string, realtime bool, p *uncommitted.SerialProof) {
	h := c.h
	typ, order := "G0-process", "process"
	if realtime {
		typ, order = "G0-realtime", "process or real-time"
	}
	a := Anomaly{Type: typ, Model: m, uncommitted: true, seed: p.Writers}
	for _, st := range p.Stuck {
		if len(a.Txns) < 8 {
			a.Txns = append(a.Txns, c.txnRef(st.Txn))
		}
		if a.Key == "" && st.Key >= 0 {
			a.Key = h.Keys[st.Key]
		}
	}
	vals := func(vs []int32) string {
		var out []string
		for _, v := range vs {
			if v < 0 {
				out = append(out, "(a value the longest read never shows)")
			} else {
				out = append(out, h.Values[v])
			}
		}
		return "[" + strings.Join(out, " ") + "]"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "every attribution of the duplicated values has a cycle of ww edges and %s order: "+
		"only :ok transactions append the values each key's longest read shows, so every position holds a committed writer's append, "+
		"and an acyclic attribution is an order of the %d :ok writers that keeps %s order in which each key's writers take its longest read's positions in turn, "+
		"each showing its values, until the read is full, and the writers after that append only what the read leaves out; "+
		"a search of every such order (%d dead ends) runs at most %d writers, and there the next writer of each process cannot run",
		order, len(p.Writers), order, p.States, p.Deepest)
	for i, st := range p.Stuck {
		if i == 16 {
			fmt.Fprintf(&b, "; and %d more", len(p.Stuck)-i)
			break
		}
		switch {
		case st.Blocked:
			fmt.Fprintf(&b, "; %s: %s completed before it was invoked and has not run", c.ruName(st.Txn), c.ruName(st.Blocker))
		case st.Full:
			fmt.Fprintf(&b, "; %s: it appends %s to key %s, whose longest read (%d values) is full and leaves out no more of them", c.ruName(st.Txn), vals(st.Values), h.Keys[st.Key], st.Length)
		default:
			fmt.Fprintf(&b, "; %s: it appends %s to key %s, whose longest read (%d values) shows %s at positions %d- (counted from 1)",
				c.ruName(st.Txn), vals(st.Values), h.Keys[st.Key], st.Length, vals(st.Shown), st.Position+1)
		}
	}
	a.Explanation = b.String()
	c.res.Anomalies = append(c.res.Anomalies, a)
}

// uncommittedFirst splits the read-uncommitted models off names.
func uncommittedFirst(names []string) (ru, rest []string) {
	for _, m := range names {
		if models[m].uncommitted {
			ru = append(ru, m)
		} else {
			rest = append(rest, m)
		}
	}
	return ru, rest
}

// ruName names transaction t in an explanation: its micro-ops and line.
func (c *checker) ruName(t int32) string {
	tx := &c.h.Txns[t]
	return fmt.Sprintf("%s (line %d, %s)", encode.OpsString(c.h, t), tx.Line, tx.Status)
}

// mergeUncommitted decides the read-uncommitted models asked for, adds their results
// to c.res.Models and puts every model in the order asked. A model already found valid
// whose graph contains theirs (every one, with their orders: read committed's
// attributions give read uncommitted's, DESIGN.md) decides them without a search.
func (c *checker) mergeUncommitted() {
	if len(c.uncommittedNames) == 0 {
		return
	}
	var left []string
	results := map[string]*ModelResult{}
	for _, m := range c.uncommittedNames {
		implied := false
		for _, mr := range c.res.Models {
			implied = implied || (mr.Valid == Valid && graphWithin(m, mr.Model) && forbidsWithin(m, mr.Model))
		}
		if implied {
			results[m] = &ModelResult{Model: m, Valid: Valid}
		} else {
			left = append(left, m)
		}
	}
	if len(left) > 0 {
		for m, mr := range c.decideUncommitted(left) {
			results[m] = mr
		}
	}
	for _, m := range c.uncommittedNames {
		mr := results[m]
		mr.AnomalyTypes = c.forbiddenFound(m)
		if mr.Valid == Unknown && len(mr.AnomalyTypes) > 0 {
			mr.Valid, mr.Message = Invalid, ""
		}
		c.res.Models = append(c.res.Models, *mr)
	}
	pos := map[string]int{}
	for i, m := range c.order {
		pos[m] = i
	}
	sort.SliceStable(c.res.Models, func(i, j int) bool { return pos[c.res.Models[i].Model] < pos[c.res.Models[j].Model] })
	c.uncommittedNames = nil
}
