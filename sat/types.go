// Package sat is a CDCL SAT solver in the style of MiniSat, with an interface for theory
// propagators (used by package theory for graph acyclicity).
//
// Variables are numbered from 0; a literal is 2*v for v and 2*v+1 for NOT v. The solver
// keeps two watched literals per clause (with blocker literals), learns first-UIP clauses
// minimized recursively, branches with VSIDS and phase saving, restarts (glucose-style LBD
// averages by default, or Luby; under the static order keeping the trail it would rebuild),
// backtracks chronologically where a backjump would undo many levels (Options.ChronoLevels),
// and reduces its learned clauses by LBD, keeping glue clauses.
// Theory-implied literals get lazy reasons: Theory.Explain is asked only when conflict
// analysis or minimization needs them.
//
// Notes for theories:
//   - Imply may grow the trail (and reallocate it): re-read s.Trail() after calling it.
//   - An empty non-nil conflict clause means the theory is inconsistent with the level-0
//     assignment: Solve returns Unsat, for good.
//   - Explain may be called for any theory-implied literal still assigned (during conflict
//     analysis, clause minimization and FinalConflict); each answer is cached until the
//     literal is unassigned. Explanations and conflicts are copied, so the theory may reuse
//     its buffers.
//   - After chronological backtracking the trail is not in level order: Backtrack(n) may
//     leave literals of lower levels at positions n and beyond, which the theory then
//     reads as new on its next Propagate. Theory-implied ones among them have had their
//     explanations fetched before Backtrack (Explain is never asked about a literal the
//     theory was told to forget).
//   - Solve ends at level 0 (Backtrack is called with the length of the level-0 trail, and
//     level-0 literals learned after chronological backtracking may follow); the model is
//     then read with ModelValue.
//   - A conflict literal that is not false, or an explanation that is not a valid reason,
//     is a bug in the theory and panics with a message starting "sat: theory".
package sat

import "strconv"

// Var is a variable, numbered from 0.
type Var int32

// Lit is a literal: 2*v for the positive literal of v, 2*v+1 for the negative one.
type Lit int32

// litUndef marks "no literal" in internal slots.
const litUndef Lit = -1

// PosLit returns the positive literal of v.
func PosLit(v Var) Lit { return Lit(2 * v) }

// NegLit returns the negative literal of v.
func NegLit(v Var) Lit { return Lit(2*v + 1) }

// Var returns the variable of l.
func (l Lit) Var() Var { return Var(l >> 1) }

// Not returns the negation of l.
func (l Lit) Not() Lit { return l ^ 1 }

// IsNeg reports whether l is a negative literal.
func (l Lit) IsNeg() bool { return l&1 == 1 }

// String formats l in 1-based DIMACS numbering: "3" or "-3" for variable 2.
func (l Lit) String() string {
	n := int64(l.Var()) + 1
	if l.IsNeg() {
		n = -n
	}
	return strconv.FormatInt(n, 10)
}

// LBool is a three-valued truth value.
type LBool int8

// Truth values. LFalse is the negation of LTrue, so the value of NOT l is -value(l).
const (
	LUndef LBool = 0
	LTrue  LBool = 1
	LFalse LBool = -1
)

func (b LBool) String() string {
	switch b {
	case LTrue:
		return "true"
	case LFalse:
		return "false"
	}
	return "undef"
}

// Status is the outcome of Solve.
type Status int8

// Solve outcomes. Unknown means a limit (conflicts, deadline, interrupt) was reached.
const (
	Unknown Status = 0
	Sat     Status = 1
	Unsat   Status = 2
)

func (s Status) String() string {
	switch s {
	case Sat:
		return "SAT"
	case Unsat:
		return "UNSAT"
	}
	return "UNKNOWN"
}

// Theory is a solver extension (e.g. graph acyclicity). All literals it sees or returns are
// the solver's.
type Theory interface {
	// Propagate is called whenever Boolean propagation reaches a fixpoint (and before each
	// decision). The theory reads the assignment trail from where it stopped last
	// (s.Trail()[seen:]), may call s.Imply(l) for literals it implies (their reasons are asked
	// for lazily through Explain), and returns a conflict clause — literals all false under the
	// current assignment — or nil. After Imply returns false (l already false), the theory must
	// return a conflict.
	Propagate(s *Solver) (conflict []Lit)
	// Explain returns the reason for a literal l the theory implied: a clause that contains l
	// and whose other literals were false when l was implied (assigned earlier on the trail).
	Explain(l Lit) []Lit
	// Backtrack tells the theory the trail was cut back to length n (the theory must forget
	// everything it saw at positions >= n).
	Backtrack(n int)
}

// Stats counts the solver's work since New.
type Stats struct {
	Decisions, Conflicts, Propagations, TheoryPropagations, Learned, Restarts, Deleted int64
	Chrono                                                                             int64 // conflicts that backtracked chronologically (Options.ChronoLevels)
}

// Options tunes the search. SetOptions replaces all of them; start from DefaultOptions.
type Options struct {
	Heuristic   string  // "vsids" (default) or "static" (lowest-numbered unassigned variable)
	Restarts    string  // "glucose" (default: LBD moving averages), "luby" or "none"
	PhaseSaving bool    // branch on a variable's last value (default true); else always false
	VarDecay    float64 // VSIDS activity decay in (0,1); 0 means 0.95
	LubyUnit    int64   // conflicts per Luby unit; 0 means 100
	ReduceFirst int64   // conflicts before the first learned-clause reduction; 0 means 2000
	ReduceInc   int64   // growth of the reduction interval; 0 means 300
	NoMinimize  bool    // skip recursive learned-clause minimization (for measurements)
	// ChronoLevels: a conflict whose learned clause would jump back over more than this
	// many decision levels backtracks one level only (chronological backtracking), the
	// asserting literal assigned at its own lower level; 0 means 100, negative never.
	ChronoLevels int
}

// DefaultOptions returns the options New uses.
func DefaultOptions() Options {
	return Options{Heuristic: "vsids", Restarts: "glucose", PhaseSaving: true}
}
