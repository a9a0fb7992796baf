package check

import (
	"fmt"
	"strings"

	"doppel/encode"
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
	c.addAnomaly(a)
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
