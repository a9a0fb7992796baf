package check

import "slices"

// CountsFor reports whether anomaly a counts against model m: m forbids its type, and
// it holds in every attribution or was proved under a model whose graph lies within
// m's.
func CountsFor(a *Anomaly, m string) bool {
	return forbids(m, a.Type) && (a.Model == "" || graphWithin(a.Model, m))
}

// proof is a contradiction the narrowing by thresholds found under model: a cycle
// through txns in every attribution.
type proof struct {
	model string
	txns  []int32
}

// Evidence lists, for model m, the transactions of each piece of evidence found against
// it, smallest first: the anomalies that count for m, and the narrowing's
// contradictions under m or a model whose graph lies within m's (on a short history a
// named anomaly replaces those in the report, though they are often smaller). A
// counterexample search starts from them.
func (r *Result) Evidence(m string) [][]int32 {
	var out [][]int32
	add := func(txns []int32) {
		txns = slices.Clone(txns)
		slices.Sort(txns)
		txns = slices.Compact(txns)
		for _, o := range out {
			if slices.Equal(o, txns) {
				return
			}
		}
		out = append(out, txns)
	}
	for _, p := range r.proofs {
		if graphWithin(p.model, m) && len(p.txns) > 0 {
			add(p.txns)
		}
	}
	for i := range r.Anomalies {
		a := &r.Anomalies[i]
		if !CountsFor(a, m) || len(a.Txns) == 0 {
			continue
		}
		var txns []int32
		for _, t := range a.Txns {
			txns = append(txns, int32(t.ID))
		}
		add(txns)
	}
	slices.SortStableFunc(out, func(a, b []int32) int { return len(a) - len(b) })
	return out
}
