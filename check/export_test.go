package check

import (
	"doppel/encode"
	"doppel/history"
)

// SolverProblemHook, for the external tests, sets a function told, for each problem
// handed to the solver, whether strict serializability was already refuted and whether
// the problem is the strict-serializable view (nil removes it).
func SolverProblemHook(f func(strictRefuted, strictView bool)) {
	if f == nil {
		solveHook = nil
		return
	}
	solveHook = func(c *checker, v *view) {
		strict := c.strictEdges != nil && len(v.edges) > 0 && len(c.strictEdges) > 0 && &v.edges[0] == &c.strictEdges[0]
		f(c.strictRefuted, strict)
	}
}

// MergedChainsOrder replays h without the appends its version reads miss and places
// them by mergedChains: tried says the replay without them ran through (and h has
// such appends), order is mergedChains's (nil: none found), err its verification.
func MergedChainsOrder(h *history.History) (tried bool, order []int32, err error) {
	in := encode.InferPerRead(h)
	merged := mergedWriters(h, in)
	if len(merged) == 0 || !perReadClean(in) {
		return false, nil, nil
	}
	h2 := stripMerged(h, in)
	in2 := encode.InferPerRead(h2)
	if !perReadClean(in2) {
		return false, nil, nil
	}
	order2, ok, _ := perReadReplays(h2, in2, nil, true, nil, func() bool { return false })
	if !ok {
		return false, nil, nil
	}
	order = mergedChains(h, in, order2, merged, nil)
	if order != nil {
		_, err = verifyPerReadLists(h, in, order)
	}
	return true, order, err
}
