package check

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
