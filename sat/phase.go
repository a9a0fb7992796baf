package sat

// SetPhase sets the value the solver first tries for v when it branches on it (the saved
// phase), e.g. from a heuristic guess of a solution.
func (s *Solver) SetPhase(v Var, value bool) { s.polarity[v] = !value }
