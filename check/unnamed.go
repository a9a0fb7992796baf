package check

import (
	"fmt"
	"slices"

	"doppel/encode"
)

// A violation the solver proved, whose explanation the limits cut short before a first
// case, still names an anomaly the model forbids, with its transactions: the verdict is
// reached, and a verdict without evidence is no use to a person. The claim is the
// weakest the proof supports, and costs one linear pass over the view.

// permissiveCycleType is the most permissive kind of cycle the graph of view v can
// close under model m: every cycle of v is of that kind or of one that implies it (G0 ⇒
// G1c; a cycle with rw edges is at most a G2-item, or in snapshot isolation's split
// graph, where two are never adjacent, a G-nonadjacent), marked with the strongest
// order m has.
func permissiveCycleType(m string, v *view) string {
	rw := 0
	for i := range v.edges {
		if v.edges[i].Kind == encode.RW {
			rw = 2
			break
		}
	}
	spec := models[m]
	return encode.CycleType(rw, 1, v.split, spec.process, spec.realtime)
}

// cycleCandidates lists the transactions on which some attribution may close a cycle
// of v: those in a strongly connected component of every edge v may have, guards
// ignored (a cycle of any attribution lies within one). Hubs are left out; sorted.
func cycleCandidates(v *view) []int32 {
	any := func(*encode.Edge) bool { return true }
	g := newGraph(v.nodes, v.edges, any)
	seen := map[int32]bool{}
	var txns []int32
	for _, comp := range g.sccs(func(int32) bool { return true }, any) {
		for _, x := range comp {
			if v.isHub(x) {
				continue
			}
			if t := v.txn(x); !seen[t] {
				seen[t] = true
				txns = append(txns, t)
			}
		}
	}
	slices.Sort(txns)
	return txns
}

// maxListedCandidates bounds the transactions such an anomaly lists (its text prints
// each one).
const maxListedCandidates = 64

// addUnnamedRefutation reports the violation of model m that the solver proved on
// view v when the limits left no time to show a case: named by the most permissive
// kind of cycle v can close, among the transactions any such cycle must lie among.
func (c *checker) addUnnamedRefutation(m string, v *view) {
	typ := permissiveCycleType(m, v)
	txns := cycleCandidates(v)
	a := Anomaly{Type: typ, Model: m}
	for _, t := range txns[:min(len(txns), maxListedCandidates)] {
		a.Txns = append(a.Txns, c.txnRef(t))
	}
	listed := ""
	if len(txns) > maxListedCandidates {
		// The counterexample search starts from all of them; the report lists a few.
		a.seed = txns
		listed = fmt.Sprintf(" (the first %d are listed)", maxListedCandidates)
	}
	within := ""
	if c.anomalyModel != "" && c.findingModel == "" { // windows, not the G-cursor pins
		within = " placed within the windows narrowing found for " + c.anomalyModel + " (outside them every attribution closes a cycle too)"
	}
	a.Explanation = fmt.Sprintf("the solver proved that every attribution of the duplicated values to appends%s closes a cycle of %s's graph (a %s, or a kind of cycle that implies it), or that none exists; "+
		"the %s was reached before a first case could be shown. Every such cycle lies among these %d transactions%s (those on a cycle of the edges some attribution may have).",
		within, m, typ, c.budget.spentWhy, len(txns), listed)
	if len(txns) == 0 {
		// No edge can close a cycle: no attribution exists at all (the Boolean part
		// alone has no solution), which a key's own values cause.
		a.Explanation = fmt.Sprintf("the solver proved that no attribution of the duplicated values to appends exists under %s; the %s was reached before the key to blame could be named.", m, c.budget.spentWhy)
		c.noAttributionTxns(&a)
	}
	c.addAnomaly(a)
}

// noAttributionTxns gives an anomaly proved without any attribution the transactions
// of the keys that still leave choices: one of those keys has no segmentation.
func (c *checker) noAttributionTxns(a *Anomaly) {
	var keys []int32
	for k := range c.p.SegVar {
		if len(c.p.SegVar[k]) > 0 {
			keys = append(keys, int32(k))
		}
	}
	a.Txns = c.keyTxns(c.p.In, keys)
}

// keyTxns lists the transactions that write or read one of keys (sorted): the
// evidence of keys that no placement of their blocks explains.
func (c *checker) keyTxns(in *encode.Inference, keys []int32) []TxnRef {
	seen := map[int32]bool{}
	var txns []int32
	add := func(t int32) {
		if !seen[t] {
			seen[t] = true
			txns = append(txns, t)
		}
	}
	for _, k := range keys {
		for _, w := range in.Keys[k].Writers {
			add(in.Writers[w].Txn)
		}
		for _, r := range in.Keys[k].Reads {
			add(in.Reads[r].Txn)
		}
	}
	slices.Sort(txns)
	refs := make([]TxnRef, len(txns))
	for i, t := range txns {
		refs[i] = c.txnRef(t)
	}
	return refs
}

// refutationTxns lists the transactions a refutation of model m with no cycle to show
// rests on, on the last problem built: the keys that have no segmentation (within the
// windows, or at all) when there are some, else the transactions on a cycle of the
// edges some attribution may have (the first maxListedCandidates of them).
func (c *checker) refutationTxns(m string) []TxnRef {
	p := c.p
	if p == nil {
		return nil
	}
	if keys := append(slices.Clone(p.UnsatKeys), p.WindowUnsatKeys...); len(keys) > 0 {
		return c.keyTxns(p.In, keys)
	}
	var refs []TxnRef
	txns := cycleCandidates(c.serialView(m))
	for _, t := range txns[:min(len(txns), maxListedCandidates)] {
		refs = append(refs, c.txnRef(t))
	}
	return refs
}
