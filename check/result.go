// Package check decides whether a list-append history satisfies consistency models,
// exactly, even when values are appended more than once. Check is the whole API.
package check

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"doppel/encode"
	"doppel/history"
)

// Validity is a verdict: valid, not valid, or unknown (a limit was reached).
type Validity int8

const (
	Valid Validity = iota
	Invalid
	Unknown
)

func (v Validity) String() string {
	switch v {
	case Valid:
		return "valid"
	case Invalid:
		return "not valid"
	}
	return "unknown"
}

// MarshalJSON writes true, false or "unknown".
func (v Validity) MarshalJSON() ([]byte, error) {
	switch v {
	case Valid:
		return []byte("true"), nil
	case Invalid:
		return []byte("false"), nil
	}
	return []byte(`"unknown"`), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Validity) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		*v = Valid
	case "false":
		*v = Invalid
	default:
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = Unknown
	}
	return nil
}

// Options select the models and limits of a check.
type Options struct {
	// Models to check; empty means serializable; "all" means every model. Names as in
	// Elle, with its aliases (ModelNames, CanonicalModel).
	Models []string
	// Limits; zero means none. Reaching one gives Unknown for the models not yet
	// decided. Every phase honours them; MaxConflicts counts the conflicts of every
	// solver stage (pre-searches, portfolio, explanations) of every model together.
	Timeout      time.Duration
	MaxConflicts int64
	// MaxMemory bounds the memory the checker's process holds from the system, in
	// bytes (0: none); reaching it gives Unknown like the other limits.
	MaxMemory int64
	// Reserve is the part of Timeout kept for the caller's work once the check ends
	// (a command line tool's counterexamples): the check stops that much earlier, and
	// says so when it does.
	Reserve time.Duration
	// Start is when Timeout's clock started (a command line tool: before parsing); zero
	// means when Check is called.
	Start time.Time
	// Solver knobs for research on heuristics (see --stats).
	Solver SolverOptions
	// Progress, when set, is told each phase as it starts (for a terminal display).
	Progress func(phase string)
	// VerdictOnly skips the proof by cases that explains a solver's "not valid" (the
	// verdict stands without it): a counterexample search decides many cuts and
	// explains only the one it keeps.
	VerdictOnly bool
}

// SolverOptions select solver heuristics.
type SolverOptions struct {
	NoTheoryPropagation bool // the acyclicity theory only detects conflicts
	NoWitness           bool // always search: no replay, first guess or strict/serializable shortcut
	// NoPrune builds the problem without narrowing the blocks by thresholds first.
	NoPrune bool
	// NoRepair leaves a stuck replay stuck: no choice among writers of the same values
	// is undone (check/repair.go).
	NoRepair bool
	// MergedLNS runs the neighbourhood search for merged appends (check/mergedlns.go)
	// where their chains fail: an experiment, off by default (it decided none of the
	// dup-noop family's read-committed unknowns; BENCHMARKS.md, lns).
	MergedLNS bool
	// NoSerialSearch skips the backtracking search for a serial order (searchSerial)
	// where the greedy replays got stuck.
	NoSerialSearch bool
	// NoSnapshotSearch skips the backtracking search for a snapshot-isolated execution
	// (searchSnapshot) where the greedy snapshot replays got stuck; NoSerialSearch
	// skips it too.
	NoSnapshotSearch bool
	// NoLocalSearch leaves the local search for a serial order (package localsearch)
	// out of the serializable search's rounds.
	NoLocalSearch bool
	// NoGCursorPins decides the models that forbid G-single on read committed's
	// per-read inference, without the G-cursor pins (encode.Inference.GCursorPins).
	NoGCursorPins bool
	// Heuristic ("vsids" or "static") and Restarts ("glucose", "luby" or "none") pick one
	// solver configuration; left empty (with theory propagation on), a portfolio runs:
	// static order without propagation for a while, then VSIDS + glucose + propagation.
	Heuristic string
	Restarts  string
	// ChronoLevels: a conflict whose learned clause would jump back over more than this
	// many decision levels backtracks one level only (sat.Options.ChronoLevels); 0 means
	// the solver's default (100), negative never.
	ChronoLevels int
	// ClausalTiling encodes "at most one block per position" and "at most one block
	// per writer" as clauses (sequential counters) instead of leaving them to the
	// append-adjacency theory (theory.Segments); the instances --export writes are
	// always clausal.
	ClausalTiling bool
	// NoCounting leaves out the supply-counting theory (theory.Counting) that runs
	// beside the append-adjacency theory (for measurements and tests).
	NoCounting bool
	// NoMatching leaves out Hall's condition over the trace positions (theory.Matching)
	// that runs beside the append-adjacency and counting theories (for measurements and
	// tests).
	NoMatching bool
	// ExportPrefix, when set, writes each solver instance as PREFIX-MODEL.cnf (DIMACS)
	// and PREFIX-MODEL.graph (one "from to guard-literals..." edge per line) for study.
	ExportPrefix string
}

// Result is the outcome of checking one history against one or more models.
type Result struct {
	Valid        Validity      `json:"valid"`
	Models       []ModelResult `json:"models"`
	AnomalyTypes []string      `json:"anomaly_types"`
	Anomalies    []Anomaly     `json:"anomalies"`
	Message      string        `json:"message,omitempty"` // why Unknown, when it is
	// Elle's summary, over the models doppel decides (lattice.go): Not, the weakest
	// models the verdicts and anomalies rule out; AlsoNot, the stronger ones ruled out
	// with them; Strongest, the strongest models the history was found to satisfy.
	Not       []string `json:"not"`
	AlsoNot   []string `json:"also_not"`
	Strongest []string `json:"strongest"`
	// Warnings say what was asked for but not done in full (an --export that could not
	// be written, and why); they never change a verdict.
	Warnings []string `json:"warnings,omitempty"`
	Stats    Stats    `json:"stats"`

	proofs []proof // the thresholds' contradictions, also when a named anomaly replaced them
}

// ModelResult is the verdict for one model.
type ModelResult struct {
	Model        string   `json:"model"`
	Valid        Validity `json:"valid"`
	AnomalyTypes []string `json:"anomaly_types"` // the anomalies found that this model forbids
	// Anomalies lists the positions in Result.Anomalies of those that count against this
	// model (it forbids them, and they hold under it): only those.
	Anomalies []int  `json:"anomalies"`
	Message   string `json:"message,omitempty"`
}

// Anomaly is one violation a person can check against the history by hand.
type Anomaly struct {
	Type string `json:"type"` // G0, G1a, G1b, G1c, G-single, G2-item, internal, incompatible-order, ... with -process/-realtime
	Key  string `json:"key,omitempty"`
	// Model is set when the violation depends on how duplicates are attributed: the
	// solver proved it for this model only.
	Model       string   `json:"model,omitempty"`
	Txns        []TxnRef `json:"txns"`
	Steps       []Step   `json:"steps,omitempty"` // the cycle, for cycle anomalies
	Explanation string   `json:"explanation"`
	// Cases are a proof by cases (duplicate values attributed each way; Steps are the
	// first case's), and CasesCover says why they cover every attribution.
	Cases      []Case `json:"cases,omitempty"`
	CasesCover string `json:"cases_cover,omitempty"`
	// OrderCount is the order count's proof, structured (G1c-process, G1c-realtime
	// found without search).
	OrderCount *OrderCount `json:"order_count,omitempty"`

	windowUnsat bool // a key without segmentation within windows: a proof, not a name
	// seed: the transactions a counterexample search starts from, when Txns (cut for
	// reading) are not all of them (Evidence).
	seed []int32
	// oneBase: found on the one-base inference (all reads of a key in a transaction
	// share a base; a read before an own append places the block), so it holds only for
	// the models that are not per read.
	oneBase bool
	// uncommitted: found by read uncommitted's own decision, it counts for those
	// models only (and nothing else counts for them).
	uncommitted bool
	// narrowed: a proof by thresholds (prune), whose steps hold in the attributions
	// the other keys' reads and the model's orders allow, as they say (prune's
	// TestContradictionsAreSound checks them).
	narrowed bool
	// searched: the exhaustive search over the processes' orders found no order
	// (addSerialSearchAnomaly): a proof no cycle names, which only that search repeats.
	searched bool
}

// countsFor reports whether anomaly a, of a type model m forbids, is evidence for m:
// found on an attribution space and graph that m's lie within.
func (a *Anomaly) countsFor(m string) bool {
	if a.uncommitted != models[m].uncommitted {
		return false
	}
	if a.oneBase && models[m].perRead {
		return false
	}
	return a.Model == "" || graphWithin(a.Model, m)
}

// TxnRef names a transaction of the history. In JSON it also has Elle's fields: type
// (its status), f ("txn"), a numeric process when the process is a number, and value,
// its micro-ops structured as [f k v] (reads longer than maxJSONList values cut: the
// first and last few, a string saying how many between).
type TxnRef struct {
	ID      int    `json:"id"`    // position in History.Txns
	Index   int64  `json:"index"` // :index in the file, -1 if absent
	Line    int    `json:"line"`
	Process string `json:"-"`
	Status  string `json:"status"`
	Ops     string `json:"ops"`   // the transaction's micro-ops in EDN, long reads cut
	Value   []any  `json:"value"` // the same, structured
}

type plainTxnRef TxnRef

// MarshalJSON writes the process as a number when it is one, as Elle does, and Elle's
// type and f.
func (t TxnRef) MarshalJSON() ([]byte, error) {
	out := struct {
		plainTxnRef
		Process any    `json:"process,omitempty"`
		Type    string `json:"type"`
		F       string `json:"f"`
	}{plainTxnRef: plainTxnRef(t), Type: t.Status, F: "txn"}
	if t.Process != "" {
		out.Process = jsonAtom(t.Process)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *TxnRef) UnmarshalJSON(b []byte) error {
	var in struct {
		plainTxnRef
		Process any `json:"process"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*t = TxnRef(in.plainTxnRef)
	if in.Process != nil {
		t.Process = fmt.Sprint(in.Process)
	}
	return nil
}

// maxJSONList is the longest read list written whole in a TxnRef's value.
const maxJSONList = 32

// jsonAtom is a printed EDN atom as a JSON value: a number when it is an integer, else
// the printed form.
func jsonAtom(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

// NewTxnRef describes transaction t of h for a report.
func NewTxnRef(h *history.History, t int32) TxnRef {
	tx := &h.Txns[t]
	r := TxnRef{ID: int(t), Index: tx.Index, Line: int(tx.Line), Status: tx.Status.String(), Ops: encode.OpsString(h, t)}
	if tx.Process >= 0 {
		r.Process = h.Processes[tx.Process]
	}
	r.Value = []any{}
	for _, op := range h.TxnOps(int(t)) {
		if op.Kind == history.Append {
			r.Value = append(r.Value, []any{"append", jsonAtom(h.Keys[op.Key]), jsonAtom(h.Values[op.Value])})
			continue
		}
		if !op.Known {
			r.Value = append(r.Value, []any{"r", jsonAtom(h.Keys[op.Key]), nil})
			continue
		}
		list := h.ReadValues[op.Start:op.End]
		vals := []any{}
		for i, v := range list {
			if len(list) > maxJSONList && i == 3 {
				vals = append(vals, fmt.Sprintf("… %d values …", len(list)-7))
			}
			if len(list) <= maxJSONList || i < 3 || i >= len(list)-4 {
				vals = append(vals, jsonAtom(h.Values[v]))
			}
		}
		r.Value = append(r.Value, []any{"r", jsonAtom(h.Keys[op.Key]), vals})
	}
	return r
}

// Step is one edge of a cycle: From must precede To, of kind ww, wr, rw, process or
// realtime. From and To are positions in the history's transactions, FromIndex and
// ToIndex their :index (-1 when absent); AMop and BMop are the micro-ops of From and To
// the step relates (indexes within each transaction, as Elle's a-mop-index and
// b-mop-index; -1 for process and real-time steps).
type Step struct {
	From      int    `json:"from"`
	To        int    `json:"to"`
	FromIndex int64  `json:"from_index"`
	ToIndex   int64  `json:"to_index"`
	Kind      string `json:"kind"`
	Key       string `json:"key,omitempty"`
	AMop      int    `json:"a_mop_index"`
	BMop      int    `json:"b_mop_index"`
	Why       string `json:"why"`
}

// Stats describe the work done.
type Stats struct {
	Transactions int `json:"transactions"`
	Operations   int `json:"operations"`
	Keys         int `json:"keys"`
	KeysFixed    int `json:"keys_fixed"` // keys with exactly one segmentation
	KeysOpen     int `json:"keys_open"`  // keys left to the solver
	Pruned       int `json:"pruned"`     // choices removed before solving
	Witnessed    int `json:"witnessed"`  // models decided by a witness, without search
	Replayed     int `json:"replayed"`   // ... of them by a verified serial replay, before any encoding
	// Models refuted by a cycle of blocks their writers' reads place (check/pinref.go),
	// before any replay or encoding.
	PinRefuted int `json:"pin_refuted,omitempty"`
	// A replay that verifySerial rejected: a bug in the replay, caught (tests want 0).
	ReplayRejected int `json:"replay_rejected,omitempty"`
	// A read-by-read replay that the verification rejected on a version read (a read
	// missing its own appends): expected, the replay leaves those reads to it.
	VersionReadRejected int `json:"version_read_rejected,omitempty"`
	// Choices among writers of the same values that stuck replays undid (check/repair.go).
	Repairs int `json:"replay_repairs,omitempty"`
	// Searched counts serial orders found by the backtracking search (searchSerial).
	Searched int `json:"serial_searched,omitempty"`
	// LocalSearched counts serial orders found by the local search (localsearch).
	LocalSearched int `json:"local_searched,omitempty"`
	// SearchTurns counts the turns the strict search within windows was continued in,
	// between the solver's rounds (check/strictrounds.go).
	SearchTurns int `json:"search_turns,omitempty"`
	// StrictRaces counts the strict searches within windows run with the other choice
	// order beside them (raceStrict), RaceWonBeside those where the one beside found
	// the order first.
	StrictRaces   int   `json:"strict_races,omitempty"`
	RaceWonBeside int   `json:"race_won_beside,omitempty"`
	Edges         int   `json:"edges"`
	GuardedEdges  int   `json:"guarded_edges"` // edges that hold only under some attributions
	Variables     int   `json:"variables"`
	Clauses       int   `json:"clauses"`
	Decisions     int64 `json:"decisions"`
	Conflicts     int64 `json:"conflicts"`
	// SearchStates counts the failed states of the searches over orders that report
	// them (read uncommitted's runs and serial searches, read committed's serial
	// search), which run before or instead of any solver stage.
	SearchStates int64 `json:"search_states"`
	Propagations int64 `json:"propagations"`
	TheoryProps  int64 `json:"theory_propagations"`   // the acyclicity theory's
	TilingProps  int64 `json:"tiling_propagations"`   // the append-adjacency theory's
	CountProps   int64 `json:"counting_propagations"` // the supply-counting theory's
	// HallConflicts: the conflicts Hall's condition over the trace positions found
	// (theory.Matching).
	HallConflicts int64 `json:"hall_conflicts"`
	Learned       int64 `json:"learned_clauses"`
	// Conflicts whose long backjump the solver made chronological (sat.Options.ChronoLevels).
	Chrono int64 `json:"chronological_backtracks"`
	// Pairs of unobserved writers of a key given an orientation variable by the lazy
	// orientation's refinement (check/view.go), all searches together.
	OrientedPairs int64 `json:"oriented_pairs,omitempty"`
	// Time per phase in seconds.
	ParseSeconds   float64 `json:"parse_seconds"`
	InferSeconds   float64 `json:"infer_seconds"`
	PruneSeconds   float64 `json:"prune_seconds"`
	SolveSeconds   float64 `json:"solve_seconds"`
	ExplainSeconds float64 `json:"explain_seconds"`
}

// Encoded reports whether the segmentation encoding was built (it is not when a
// verified replay or the pins' cycles decided every model).
func (s Stats) Encoded() bool {
	return s.Edges > 0 || s.Variables > 0 || s.Replayed == 0 && s.PinRefuted == 0
}
