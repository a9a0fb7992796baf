package check

import (
	"fmt"
	"slices"
	"strings"

	"doppel/encode"
	"doppel/history"
)

// Edge filters for the cycle searches, from the narrowest (G0) to the widest.
func known(e *encode.Edge) bool { return e.G1 == e.G0 }

func wwOnly(e *encode.Edge) bool {
	return known(e) && (e.Kind == encode.WW || e.Kind == encode.Hub || e.Kind == encode.StartCommit)
}
func wwWR(e *encode.Edge) bool { return wwOnly(e) || known(e) && e.Kind == encode.WR }
func data(e *encode.Edge) bool {
	return known(e) && e.Kind != encode.Process && e.Kind != encode.Realtime
}
func dataProcess(e *encode.Edge) bool { return data(e) || known(e) && e.Kind == encode.Process }
func all(e *encode.Edge) bool         { return known(e) }

// maxSubComponents bounds the cycles reported per component and edge filter.
const maxSubComponents = 4

// maxSingleTries bounds the G-single searches per component (each is a BFS).
const maxSingleTries = 200

// knownCycles finds cycles among the edges that hold in every attribution, and reports
// for each strongly connected component the shortest cycle of each kind it can find,
// as Elle does.
func (c *checker) knownCycles(v *view) {
	g := newGraph(v.nodes, v.edges, known)
	comps := g.sccs(func(int32) bool { return true }, all)
	var scratch bfsScratch
	inComp := make([]bool, g.n)
	for _, comp := range comps {
		if c.budget.out() {
			return // the models left undecided are unknown
		}
		for _, x := range comp {
			inComp[x] = true
		}
		in := func(v int32) bool { return inComp[v] }
		report := func(cycle []int32) {
			if cycle == nil {
				return
			}
			if typ := c.classify(v, cycle); !c.cycleFound(typ) {
				c.addCycle(v, typ, cycle)
			}
		}
		for fi, filter := range []func(*encode.Edge) bool{wwOnly, wwWR, data, dataProcess, all} {
			subs := g.sccs(in, filter)
			if fi == 2 && len(subs) > 0 && !v.split {
				c.dataCyclic = true
			}
			for i, sub := range subs {
				if i == maxSubComponents {
					break
				}
				report(g.path(sub[0], sub[0], in, filter, &scratch))
			}
		}
		// G-single: one anti-dependency closed by ww/wr edges.
		tries := 0
		for _, x := range comp {
			for _, id := range g.ids[g.start[x]:g.start[x+1]] {
				e := &g.edges[id]
				if e.Kind != encode.RW || !inComp[e.To] || tries >= maxSingleTries || c.cycleFound("G-single") {
					continue
				}
				tries++
				if back := g.path(e.To, e.From, in, wwWR, &scratch); back != nil {
					report(append([]int32{id}, back...))
				}
			}
		}
		for _, x := range comp {
			inComp[x] = false
		}
	}
}

// step is one transaction-to-transaction edge of a cycle, a hub pair collapsed.
type step struct {
	from, to int32
	kind     encode.EdgeKind
	in, out  *encode.Edge // out is the hub's out-edge when the step passes a hub
}

func (c *checker) steps(v *view, cycle []int32) []step {
	// Rotate so the cycle starts at a transaction, not inside a chain of hubs.
	for i, id := range cycle {
		if !v.isHub(v.edges[id].From) {
			cycle = append(append([]int32(nil), cycle[i:]...), cycle[:i]...)
			break
		}
	}
	var out []step
	for i := 0; i < len(cycle); i++ {
		e := &v.edges[cycle[i]]
		if e.Kind == encode.StartCommit {
			continue
		}
		st := step{from: v.txn(e.From), to: v.txn(e.To), kind: e.Kind, in: e}
		// Follow hubs to the next transaction; the step is wr or rw if an edge of the
		// chain is, else ww, and that edge carries the explanation.
		for v.isHub(e.To) && i+1 < len(cycle) {
			if v.unobservedHub(e.To, len(c.h.Keys)) {
				st.out = &v.edges[cycle[i+1]]
			}
			i++
			e = &v.edges[cycle[i]]
			st.to = v.txn(e.To)
			if e.Kind == encode.WR || e.Kind == encode.RW {
				st.kind, st.in = e.Kind, e
			}
		}
		out = append(out, st)
	}
	return out
}

// classify names a cycle as Elle does: G0 (ww only), G1c (ww and wr), G-single (one
// rw), G2-item (several rw); -process or -realtime when it needs such an edge.
func (c *checker) classify(v *view, cycle []int32) string {
	var rw, wr int
	var process, realtime bool
	for _, s := range c.steps(v, cycle) {
		switch s.kind {
		case encode.RW:
			rw++
		case encode.WR:
			wr++
		case encode.Process:
			process = true
		case encode.Realtime:
			realtime = true
		}
	}
	return encode.CycleType(rw, wr, v.split, process, realtime)
}

func (c *checker) addCycle(v *view, typ string, cycle []int32) {
	ss := c.steps(v, cycle)
	a := Anomaly{Type: typ, Model: c.anomalyModel}
	var why []string
	for _, s := range ss {
		st := c.stepOf(s, "")
		a.Steps = append(a.Steps, st)
		a.Txns = append(a.Txns, c.txnRef(s.from))
		why = append(why, st.Why)
	}
	first := encode.TxnName(c.h, ss[0].from)
	a.Explanation = strings.Join(why, "; ") + fmt.Sprintf("; so %s would precede itself: a cycle.", first)
	choices, possible := c.cycleChoices(ss)
	if !possible {
		// The cycle rests on a place the history itself rules out for a block (the
		// inference's space is empty there: every attribution fails for another reason,
		// which the search below names); a cycle that needs the impossible explains nothing.
		return
	}
	if len(choices) > 0 && !c.opts.VerdictOnly {
		// The steps hold where the inference placed the blocks; with duplicate values or
		// :info writers, the history alone does not say so: the places are stated, as one
		// case, with why no other attribution is left.
		cs := Case{N: 1, Choices: choices, Steps: a.Steps}
		a.Cases = []Case{cs}
		a.CasesCover = "Why this case is every attribution: " + impliedWhy
		a.Explanation = "Duplicate values or :info transactions leave the history open to several attributions; this cycle is in the one the inference leaves. Positions count from 1.\n" +
			caseText(cs) + "\n" + a.CasesCover
	}
	c.addAnomaly(a)
}

// tileableWithout reports whether key k's viable blocks, each writer's at most once and
// writer w's not at all, can tile its trace (a block may run past its end): a bounded
// depth-first search, which answers true when the bound runs out (nothing proved).
func (c *checker) tileableWithout(k, w int32) bool {
	plan := &c.p.Plans[k]
	if plan.State != encode.KeyOpen {
		return true // fixed (its blocks tile it), unread, or decided elsewhere
	}
	in := c.p.In
	n := int32(len(in.Keys[k].Trace))
	at := map[int32][]encode.Cand{}
	for _, cd := range plan.Cands {
		if cd.Writer != w {
			at[cd.Pos] = append(at[cd.Pos], cd)
		}
	}
	used := map[int32]bool{}
	steps := 0
	var tile func(pos int32) bool
	tile = func(pos int32) bool {
		if pos >= n {
			return true
		}
		for _, cd := range at[pos] {
			if steps++; steps > 20000 {
				return true
			}
			if used[cd.Writer] {
				continue
			}
			used[cd.Writer] = true
			ok := tile(pos + int32(len(in.Vals(cd.Writer))))
			used[cd.Writer] = false
			if ok {
				return true
			}
		}
		return false
	}
	return tile(0)
}

// readsPast reports whether transaction t read key k, before its first append to it,
// with at least n values: its block then starts after them (else it would read its own
// future append), so it fills none of the first n positions.
func readsPast(h *history.History, t, k int32, n int) bool {
	for _, op := range h.TxnOps(int(t)) {
		if op.Key != k {
			continue
		}
		if op.Kind == history.Append {
			return false
		}
		if op.Known && int(op.End-op.Start) >= n {
			return true
		}
	}
	return false
}

// fits reports whether vals, placed from position pos (0-based) of trace, agree with
// the trace where they overlap it.
func fits(trace, vals []int32, pos int) bool {
	if pos < 0 {
		return false
	}
	for i, x := range vals {
		if pos+i < len(trace) && trace[pos+i] != x {
			return false
		}
	}
	return true
}

// impliedWhy says why a choice the inference fixed covers every attribution.
const impliedWhy = "the inference leaves these blocks no other place, and these :info transactions no other outcome (marked \"fixed\"): each other one contradicts a read, or the model's order, elsewhere in the history."

// withImplied adds to case cs the choices its steps ss take from the inference
// (cycleChoices) that its own choices do not already make.
func (c *checker) withImplied(cs *Case, ss []step) {
	choices, _ := c.cycleChoices(ss)
	for _, ch := range choices {
		if !slices.ContainsFunc(cs.Choices, func(o Choice) bool {
			return o.Kind == ch.Kind && o.Txn == ch.Txn && o.Key == ch.Key && o.Position == ch.Position && !o.Not
		}) {
			cs.Choices = append(cs.Choices, ch)
		}
	}
}

// cycleChoices lists what the steps of a known cycle take from the inference rather
// than from the history alone: where a block lies (its key has another writer of one
// of its values, or it is an :info transaction's), that a block is in no read, and that
// an :info transaction committed. possible is false when one of them contradicts the
// history on its own: a block whose values are not where it is placed, or a block in no
// read when the key's other writers cannot fill what its reads show (those facts are
// then left out).
func (c *checker) cycleChoices(ss []step) (out []Choice, possible bool) {
	h, in := c.h, c.p.In
	possible = true
	seen := map[string]bool{}
	add := func(ch Choice) {
		k := fmt.Sprintf("%s/%d/%s/%d", ch.Kind, ch.Txn, ch.Key, ch.Position)
		if !seen[k] {
			seen[k] = true
			out = append(out, ch)
		}
	}
	committed := func(t int32) {
		if h.Txns[t].Status == history.Info {
			add(Choice{Kind: "committed", Txn: h.Txns[t].Index, Text: encode.TxnName(h, t) + " committed (fixed)"})
		}
	}
	writer := in.KeyWriter
	ambiguous := func(w int32) bool {
		wr := &in.Writers[w]
		if wr.Status == history.Info {
			return true
		}
		vals := in.Vals(w)
		for _, o := range in.Keys[wr.Key].Writers {
			ow := &in.Writers[o]
			if o == w || ow.Status == history.Fail {
				continue
			}
			for _, x := range in.Vals(o) {
				if slices.Contains(vals, x) {
					return true
				}
			}
		}
		return false
	}
	// at: t's block on key k starts at pos (0-based).
	at := func(t, k int32, pos int) {
		w := writer(t, k)
		if w < 0 || !ambiguous(w) || pos < 0 {
			return
		}
		vals := in.Vals(w)
		if !fits(in.Keys[k].Trace, vals, pos) {
			possible = false
			return
		}
		ch := Choice{Kind: "position", Txn: h.Txns[t].Index, Key: h.Keys[k], Position: pos + 1,
			Window: newWindow(h, in.Keys[k].Trace, pos+1, pos+len(vals))}
		for _, x := range vals {
			ch.Values = append(ch.Values, h.Values[x])
		}
		ch.Text = fmt.Sprintf("%s's %s is at position %d of key %s (fixed)", encode.TxnName(h, t), encode.ShortList(h, vals), pos+1, h.Keys[k])
		add(ch)
	}
	// covers: t's block covers position pos (0-based) of key k, the trace's last.
	covers := func(t, k int32, pos int) {
		w := writer(t, k)
		if w < 0 || !ambiguous(w) {
			return
		}
		vals := in.Vals(w)
		if len(vals) == 1 {
			at(t, k, pos)
			return
		}
		ok := false
		for st := max(0, pos-len(vals)+1); st <= pos && !ok; st++ {
			ok = fits(in.Keys[k].Trace, vals, st)
		}
		if !ok {
			possible = false
			return
		}
		add(Choice{Kind: "covers", Txn: h.Txns[t].Index, Key: h.Keys[k], Position: pos + 1,
			Window: newWindow(h, in.Keys[k].Trace, pos+1, pos+1),
			Text:   fmt.Sprintf("%s's %s covers position %d of key %s, its last (fixed)", encode.TxnName(h, t), encode.ShortList(h, vals), pos+1, h.Keys[k])})
	}
	unobserved := func(t, k int32) {
		w := writer(t, k)
		if w >= 0 && in.Writers[w].Status == history.OK {
			// The trace must be filled by the key's other writers that may commit.
			others := 0
			for _, o := range in.Keys[k].Writers {
				if o != w && in.Writers[o].Status != history.Fail && !readsPast(h, in.Writers[o].Txn, k, len(in.Keys[k].Trace)) {
					others += len(in.Vals(o))
				}
			}
			if others < len(in.Keys[k].Trace) || !c.tileableWithout(k, w) {
				possible = false
				return
			}
		}
		if w >= 0 && ambiguous(w) {
			add(Choice{Kind: "unobserved", Txn: h.Txns[t].Index, Key: h.Keys[k],
				Text: fmt.Sprintf("%s's append to key %s is not in the list (fixed)", encode.TxnName(h, t), h.Keys[k])})
		}
	}
	blockLen := func(t, k int32) int {
		if w := writer(t, k); w >= 0 {
			return len(in.Vals(w))
		}
		return 0
	}
	for _, s := range ss {
		committed(s.from)
		committed(s.to)
		e := s.in
		if e.Key < 0 || e.Pos < 0 && e.Kind != encode.WR && e.Kind != encode.RW {
			continue
		}
		k := e.Key
		trace := in.Keys[k].Trace
		switch {
		case s.out != nil && e.Kind == encode.RW:
			unobserved(s.to, k)
		case s.out != nil:
			covers(s.from, k, len(trace)-1)
			unobserved(s.to, k)
		case e.Kind == encode.WW:
			at(s.to, k, int(e.Pos))
			at(s.from, k, int(e.Pos)-blockLen(s.from, k))
		case e.Kind == encode.WR:
			r := &in.Reads[e.Read]
			at(s.from, k, int(r.Len)-blockLen(s.from, k))
		case e.Kind == encode.RW:
			r := &in.Reads[e.Read]
			if int(r.Len) >= len(trace) {
				unobserved(s.to, k)
			} else {
				at(s.to, k, int(r.Len))
			}
		}
	}
	return out, possible
}

// addAnomaly reports a, unless the same anomaly (type and transactions) was found
// already on another model's problem: then once, for every model either finding holds
// for, when one of their models' graphs lies within the other's.
func (c *checker) addAnomaly(a Anomaly) {
	a.oneBase = !c.perRead
	for i := range c.res.Anomalies {
		b := &c.res.Anomalies[i]
		if b.Type != a.Type || !sameTxns(b.Txns, a.Txns) || b.uncommitted != a.uncommitted {
			continue // read uncommitted's anomalies count for other models only
		}
		if b.oneBase != a.oneBase {
			if b.oneBase && b.Model == a.Model {
				b.oneBase = false // a holds for the per-read models too
				return
			}
			continue
		}
		switch {
		case b.Model == "" || a.Model != "" && graphWithin(b.Model, a.Model):
			return // b already holds wherever a does
		case a.Model == "" || graphWithin(a.Model, b.Model):
			b.Model = a.Model // a holds for more models
			return
		}
	}
	c.res.Anomalies = append(c.res.Anomalies, a)
}

// cycleFound reports whether a cycle of kind typ was reported for the model the current
// problem decides (one per kind is enough: the shortest found first).
func (c *checker) cycleFound(typ string) bool {
	for i := range c.res.Anomalies {
		if a := &c.res.Anomalies[i]; a.Type == typ && len(a.Steps) > 0 && !a.uncommitted && a.oneBase == !c.perRead && (a.Model == "" || a.Model == c.anomalyModel) {
			return true
		}
	}
	return false
}

func sameTxns(a, b []TxnRef) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[int]int{}
	for _, t := range a {
		seen[t.ID]++
	}
	for _, t := range b {
		seen[t.ID]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// explain says in words why step s holds, checkable against the history.
func (c *checker) explain(s step) string {
	h, in := c.h, c.p.In
	name := func(t int32) string { return encode.TxnName(h, t) }
	a, b := name(s.from), name(s.to)
	e := s.in
	switch e.Kind {
	case encode.Process:
		return fmt.Sprintf("%s < %s because both ran on process %s, %s first", a, b, h.Processes[h.Txns[s.from].Process], a)
	case encode.Realtime:
		return fmt.Sprintf("%s < %s because %s completed (line %d) before %s was invoked", a, b, a, h.Txns[s.from].Line, b)
	}
	key := "key " + h.Keys[e.Key]
	trace := in.Keys[e.Key].Trace
	traceBy := ""
	if in.Keys[e.Key].TraceBy >= 0 {
		traceBy = name(in.Reads[in.Keys[e.Key].TraceBy].Txn)
	}
	readList := func(ri int32) string {
		r := &in.Reads[ri]
		return encode.ShortList(h, h.ReadList(&h.Ops[r.Op]))
	}
	if e.Pos < 0 { // snapshot isolation's chosen order of two unobserved writers
		return fmt.Sprintf("%s < %s because both appended to %s and neither append was observed: first-committer-wins orders them, this way in this attribution", a, b, key)
	}
	if s.out != nil { // through the hub: the target was never observed
		unseen := fmt.Sprintf("%s's append to %s appears in no read", b, key)
		if e.Kind == encode.RW {
			return fmt.Sprintf("%s < %s because %s read all of %s = %s and %s", a, b, a, key, readList(e.Read), unseen)
		}
		return fmt.Sprintf("%s < %s because %s's append of %s is the last of %s = %s (read by %s) and %s",
			a, b, a, h.Values[trace[len(trace)-1]], key, encode.ShortList(h, trace), traceBy, unseen)
	}
	switch e.Kind {
	case encode.WW:
		return fmt.Sprintf("%s < %s because in %s = %s (read by %s), %s's append of %s comes right after %s's %s",
			a, b, key, encode.ShortList(h, trace), traceBy, b, h.Values[trace[e.Pos]], a, h.Values[trace[e.Pos-1]])
	case encode.WR:
		r := &in.Reads[e.Read]
		return fmt.Sprintf("%s < %s because %s read %s = %s and %s appended %s, its last element",
			a, b, b, key, readList(e.Read), a, h.Values[trace[r.Len-1]])
	case encode.RW:
		r := &in.Reads[e.Read]
		if r.Len >= int32(len(trace)) {
			return fmt.Sprintf("%s < %s because %s read all of %s = %s and %s's append to it appears in no read",
				a, b, a, key, readList(e.Read), b)
		}
		return fmt.Sprintf("%s < %s because %s read %s = %s and %s appended %s, the next element of %s = %s (read by %s)",
			a, b, a, key, readList(e.Read), b, h.Values[trace[r.Len]], key, encode.ShortList(h, trace), traceBy)
	}
	return fmt.Sprintf("%s < %s (%s on %s)", a, b, e.Kind, key)
}
