package check

import (
	"fmt"
	"slices"
	"strings"

	"doppel/encode"
	"doppel/history"
	"doppel/prune"
)

// Refutation by pins. A cycle of the edges pins give (pinned.go) is in every
// attribution of the one-base models, so it rules out every serializable-family model
// at once, and snapshot isolation's when the split graph has one too: no replay, no
// encoding and no search is needed to say so, and the cycle itself is the explanation,
// each step a fact of two reads (an injected G-single among long lists of two values:
// 1.44M variables and 8 s of search before). Elle's way of naming it: G0 or G1c when
// the cycle needs no anti-dependency, G-single with one, else G-nonadjacent (snapshot's
// split graph) or G2-item.

// refuteByPins looks for the pins' cycles once (proveByReplay reuses what it found, and
// it what a quick pass of proveByReplay found: provePerReadFirst) and reports the
// shortest cycle it finds of the weakest kind as an anomaly of the one-base models; the
// caller then decides those that forbid it without search.
func (c *checker) refuteByPins(in *encode.Inference) {
	if !c.pinsLooked {
		c.pinsLooked = true
		c.pinSerial, c.pinSnapshot = pinnedCycles(c.h, in, c.budget.stop, false)
	}
	if !c.pinSerial || c.opts.Solver.NoPrune || c.opts.Solver.ExportPrefix != "" || c.budget.out() {
		return
	}
	// Built again with what shows each edge only now: kept on every history, that
	// would be 17 more bytes an edge at a million transactions, mostly valid ones.
	g, ok := buildPinGraph(c.h, in, c.budget.stop, true, c.valuePinned && c.valuePinsLooked == in)
	if !ok {
		return
	}
	m := len(g.from)
	edges := make([]encode.Edge, m)
	for i := range edges {
		edges[i] = encode.Edge{From: g.from[i], To: g.to[i], Kind: g.kind[i], Key: g.key[i], Read: g.read[i], Pos: -1}
	}
	anyEdge := func(*encode.Edge) bool { return true }
	notRW := func(e *encode.Edge) bool { return e.Kind != encode.RW }
	everywhere := func(int32) bool { return true }
	var scratch bfsScratch
	serial := newGraph(int(g.n), edges, anyEdge)
	inComp := make([]bool, serial.n)
	within := func(comp []int32, f func(in func(int32) bool) []int32) []int32 {
		for _, x := range comp {
			inComp[x] = true
		}
		defer func() {
			for _, x := range comp {
				inComp[x] = false
			}
		}()
		return f(func(v int32) bool { return inComp[v] })
	}
	// G0 or G1c: a cycle without anti-dependencies.
	var cycle []int32
	if subs := serial.sccs(everywhere, notRW); len(subs) > 0 {
		cycle = within(subs[0], func(in func(int32) bool) []int32 { return serial.path(subs[0][0], subs[0][0], in, notRW, &scratch) })
	}
	// G-single: one anti-dependency, closed by ww and wr edges.
	comps := serial.sccs(everywhere, anyEdge)
	tries := 0
	for _, comp := range comps {
		if cycle != nil || tries >= maxSingleTries {
			break
		}
		cycle = within(comp, func(in func(int32) bool) []int32 {
			for _, x := range comp {
				for _, id := range serial.ids[serial.start[x]:serial.start[x+1]] {
					e := &edges[id]
					if e.Kind != encode.RW || !in(e.To) {
						continue
					}
					if tries++; tries > maxSingleTries || c.budget.out() {
						return nil
					}
					if back := serial.path(e.To, e.From, in, notRW, &scratch); back != nil {
						return append([]int32{id}, back...)
					}
				}
			}
			return nil
		})
	}
	split := false
	if cycle == nil && c.pinSnapshot {
		// No two adjacent anti-dependencies: a cycle of the split graph (start 2t, commit
		// 2t+1; rw edges start → commit, the others commit → start), mapped back.
		splitEdges := make([]encode.Edge, m, m+int(g.n))
		for i, e := range edges {
			if e.Kind == encode.RW {
				e.From, e.To = 2*e.From, 2*e.To+1
			} else {
				e.From, e.To = 2*e.From+1, 2*e.To
			}
			splitEdges[i] = e
		}
		for t := int32(0); t < g.n; t++ {
			splitEdges = append(splitEdges, encode.Edge{From: 2 * t, To: 2*t + 1, Kind: encode.StartCommit, Key: -1, Read: -1})
		}
		sg := newGraph(2*int(g.n), splitEdges, anyEdge)
		if subs := sg.sccs(everywhere, anyEdge); len(subs) > 0 {
			inSplit := make([]bool, sg.n)
			for _, x := range subs[0] {
				inSplit[x] = true
			}
			for _, id := range sg.path(subs[0][0], subs[0][0], func(v int32) bool { return inSplit[v] }, anyEdge, &scratch) {
				if int(id) < m {
					cycle = append(cycle, id)
				}
			}
			split = cycle != nil
		}
	}
	if cycle == nil && len(comps) > 0 {
		cycle = within(comps[0], func(in func(int32) bool) []int32 { return serial.path(comps[0][0], comps[0][0], in, anyEdge, &scratch) })
	}
	if cycle == nil || c.budget.out() {
		return // a cycle was seen; the bounded searches found none (the search decides)
	}
	// As a refutation by the narrowing would: a write skew's reads are what snapshot
	// isolation's relaxed witness relaxes (relaxedSnapshotWitness).
	steps := make([]prune.Step, len(cycle))
	for i, id := range cycle {
		steps[i] = prune.Step{From: g.from[id], To: g.to[id], Key: g.key[id], Read: -1}
		if g.kind[id] == encode.RW {
			steps[i].Read = in.Reads[g.read[id]].Op
		}
	}
	c.addSerialCycleReads(&prune.Contradiction{Steps: steps})
	a := c.pinAnomaly(in, g, cycle, split)
	c.pinCycle = a.Type
	c.addAnomaly(a)
}

// pinAnomaly explains the cycle of pin edges (ids into g): each step with the reads
// that show it.
func (c *checker) pinAnomaly(in *encode.Inference, g *pinGraph, cycle []int32, split bool) Anomaly {
	h := c.h
	name := func(t int32) string { return encode.TxnName(h, t) }
	// placed says where transaction t's pinned block on key k starts and why (ref: the
	// pin's read or value, pin.read): its writer read the key right before appending
	// (or its read shows its own appends last), or a value only it appends is there.
	placed := func(t, k, ref int32) string {
		var vals []int32
		for _, wi := range in.Keys[k].Writers {
			if w := &in.Writers[wi]; w.Txn == t {
				vals = in.WriterVals[w.Start:w.End]
			}
		}
		if p := valuePinPos(ref); p >= 0 {
			key := &in.Keys[k]
			v := key.Trace[p]
			at := p - int32(slices.Index(vals, v))
			tr := &in.Reads[key.TraceBy]
			return fmt.Sprintf("%s's append of %s to key %s starts at position %d (no other transaction appends %s to key %s, and %s read it at position %d)",
				name(t), encode.ListString(h, vals), h.Keys[k], at+1, encode.ListString(h, []int32{v}), h.Keys[k], name(tr.Txn), p+1)
		}
		r := &in.Reads[ref]
		why := fmt.Sprintf("it read the key with %d values before appending", r.Len)
		if r.Own > 0 {
			why = fmt.Sprintf("it read the key with %d values, its own %d appends last", r.Len, r.Own)
		}
		return fmt.Sprintf("%s's append of %s to key %s starts at position %d (%s)",
			name(t), encode.ListString(h, vals), h.Keys[k], r.Len-r.Own+1, why)
	}
	readOf := func(ri int32) string {
		r := &in.Reads[ri]
		s := fmt.Sprintf("%s read key %s = %s", name(r.Txn), h.Keys[r.Key], encode.ShortList(h, h.ReadList(&h.Ops[r.Op])))
		if r.Own > 0 {
			s += fmt.Sprintf(" (its own %d appends last)", r.Own)
		}
		return s
	}
	opOf := func(ri int32) int {
		r := &in.Reads[ri]
		return int(r.Op - h.Txns[r.Txn].OpStart)
	}
	var rw, wr int
	a := Anomaly{}
	var why []string
	for _, id := range cycle {
		from, to, k := g.from[id], g.to[id], g.key[id]
		st := Step{From: int(from), To: int(to), FromIndex: h.Txns[from].Index, ToIndex: h.Txns[to].Index,
			Kind: g.kind[id].String(), Key: h.Keys[k], AMop: -1, BMop: -1}
		prefix := fmt.Sprintf("%s < %s because ", name(from), name(to))
		switch g.kind[id] {
		case encode.WW:
			st.AMop, st.BMop = c.mop(from, k, history.Append, true), c.mop(to, k, history.Append, false)
			st.Why = prefix + placed(from, k, g.pinFrom[id]) + ", and " + placed(to, k, g.pinTo[id]) + ", after it"
		case encode.WR:
			wr++
			st.AMop, st.BMop = c.mop(from, k, history.Append, true), opOf(g.read[id])
			st.Why = prefix + placed(from, k, g.pinFrom[id]) + ", and " + readOf(g.read[id]) + ", which includes it"
		case encode.RW:
			rw++
			st.AMop, st.BMop = opOf(g.read[id]), c.mop(to, k, history.Append, false)
			st.Why = prefix + readOf(g.read[id]) + ", and " + placed(to, k, g.pinTo[id]) + ", past that read"
		}
		a.Steps = append(a.Steps, st)
		a.Txns = append(a.Txns, c.txnRef(from))
		why = append(why, st.Why)
	}
	a.Type = encode.CycleType(rw, wr, split, false, false)
	a.Explanation = "A transaction that reads a key and then appends to it appends right after what it read (nothing comes between in a serial order, nor under snapshot isolation's first-committer-wins), and a value only one transaction appends to a key is that transaction's wherever a read shows it, so these places hold in every attribution of the duplicated values. Positions count from 1. " +
		strings.Join(why, "; ") + fmt.Sprintf("; so %s would precede itself: a cycle.", name(g.from[cycle[0]]))
	return a
}
