package shrink

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"doppel/check"
	"doppel/history"
)

// Report is one counterexample as the command line tools print it.
type Report struct {
	// Models are the models the cut is not valid under (each re-checked on it).
	Models []string `json:"models"`
	// Transactions counts the cut's transactions, the synthetic one included; Original
	// the history's.
	Transactions int `json:"transactions"`
	Original     int `json:"original_transactions"`
	// Prefixes are what the synthetic first transaction appends, per key, in place of
	// writers left out (docs/DESIGN.md, "Counterexamples"); Synthetic is its :index.
	Prefixes  []Prefix       `json:"prefixes,omitempty"`
	Synthetic *int64         `json:"synthetic_index,omitempty"`
	Txns      []check.TxnRef `json:"txns"` // the cut's transactions, named as in the original
	// Anomalies are the checker's on the cut: the explanation to follow by hand.
	Anomalies []check.Anomaly `json:"anomalies"`
	EDN       string          `json:"edn"`            // the cut as a Jepsen EDN history
	File      string          `json:"file,omitempty"` // where --directory wrote it
	Checks    int             `json:"checks"`         // candidate cuts the checker decided
	Minimal   bool            `json:"minimal"`        // every single removal was tried
	Seconds   float64         `json:"seconds"`

	cut *Counterexample
}

// Counterexamples shrinks h for every model res found not valid, within the time
// before deadline (zero: none). A counterexample found for one model serves another when
// the checker finds it not valid under that one too. Models without one get an entry in
// failures.
func Counterexamples(h *history.History, res *check.Result, deadline time.Time) (reports []*Report, failures []string) {
	for _, mr := range res.Models {
		if mr.Valid != check.Invalid {
			continue
		}
		m := mr.Model
		reused := false
		for _, r := range reports {
			if stillInvalid(r.cut.History, m, deadline) {
				r.Models = append(r.Models, m)
				reused = true
				break
			}
		}
		if reused {
			continue
		}
		seeds := res.Evidence(m)
		if len(seeds) > 4 {
			seeds = seeds[:4]
		}
		cx, err := Shrink(h, m, seeds, Options{Deadline: deadline})
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		reports = append(reports, newReport(h, cx))
	}
	return reports, failures
}

func stillInvalid(h *history.History, m string, deadline time.Time) bool {
	opts := check.Options{Models: []string{m}}
	if !deadline.IsZero() {
		if opts.Timeout = time.Until(deadline); opts.Timeout <= 0 {
			return false
		}
	}
	res, err := check.Check(h, opts)
	return err == nil && res.Valid == check.Invalid
}

func newReport(orig *history.History, cx *Counterexample) *Report {
	h := cx.History
	r := &Report{Models: []string{cx.Model}, Transactions: len(h.Txns), Original: len(orig.Txns),
		Prefixes: cx.Prefixes, Anomalies: cx.Result.Anomalies, Checks: cx.Checks, Minimal: cx.Minimal,
		Seconds: cx.Seconds, cut: cx}
	for i := range h.Txns {
		ref := check.NewTxnRef(h, int32(i))
		if cx.Orig[i] < 0 {
			idx := h.Txns[i].Index
			r.Synthetic = &idx
			ref.Line = 0
		}
		r.Txns = append(r.Txns, ref)
	}
	r.EDN = EDN(cx)
	return r
}

// EDN writes the counterexample as a Jepsen EDN history, headed by comments that say
// what it is and where each transaction comes from.
func EDN(cx *Counterexample) string {
	var b bytes.Buffer
	h := cx.History
	fmt.Fprintf(&b, "; doppel counterexample: not valid under %s; %d transactions cut from %s\n", cx.Model, len(h.Txns), strings.TrimSuffix(h.Source, " (counterexample)"))
	fmt.Fprintf(&b, "; every transaction keeps its original :index; lines in the original:")
	for i, t := range cx.Orig {
		if t >= 0 {
			fmt.Fprintf(&b, " T%d line %d", h.Txns[i].Index, h.Txns[i].Line)
		}
	}
	b.WriteString("\n")
	for i, t := range cx.Orig {
		if t < 0 {
			fmt.Fprintf(&b, "; T%d is synthetic: it appends, first of all, the values every kept read of these keys starts with, in place of the writers left out:", h.Txns[i].Index)
			for _, p := range cx.Prefixes {
				fmt.Fprintf(&b, " key %s (%d values, for %d appends)", p.Key, len(p.Values), p.Writers)
			}
			b.WriteString("\n")
		}
	}
	if err := history.WriteHistoryEDN(&b, h); err != nil {
		fmt.Fprintf(&b, "; could not write the history: %v\n", err)
	}
	return b.String()
}
