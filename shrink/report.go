package shrink

import (
	"bytes"
	"encoding/json"
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
	// Prefixes are what the synthetic transactions append, per key, in place of writers
	// left out (docs/DESIGN.md, "Counterexamples"): the first one each key's prefix, one
	// more per fill. Synthetic lists their :index (in Txns: the first, and the last ones).
	Prefixes  []Prefix       `json:"prefixes,omitempty"`
	Synthetic []int64        `json:"synthetic_indexes,omitempty"`
	Txns      []check.TxnRef `json:"txns"` // the cut's transactions, named as in the original
	// Anomalies are the checker's on the cut: the explanation to follow by hand. For
	// the whole history they are the result's own, and the JSON gives only their
	// indexes there (AnomalyIndexes; see MarshalJSON).
	Anomalies      []check.Anomaly `json:"anomalies,omitempty"`
	AnomalyIndexes []int           `json:"anomaly_indexes,omitempty"`
	// EDN is the cut as a Jepsen EDN history; empty when the cut is the whole history
	// and not known minimal (WholeHistory: the input itself, no smaller cut verified),
	// as is Txns.
	EDN          string `json:"edn,omitempty"`
	WholeHistory bool   `json:"whole_history,omitempty"`
	File         string `json:"file,omitempty"` // where --directory wrote it
	Checks       int    `json:"checks"`         // candidate cuts the checker decided
	Minimal      bool   `json:"minimal"`        // every single removal was tried and decided
	// NotMinimal says why Minimal is false.
	NotMinimal string `json:"not_minimal,omitempty"`
	// WhyLarge, for a cut of more than largeCut transactions, says which key's writers
	// make it large and why the rules keep them (empty when no key has a writer no
	// read of its own pins).
	WhyLarge string  `json:"why_large,omitempty"`
	Seconds  float64 `json:"seconds"`

	cut *Counterexample
	edn string // the cut's EDN, also for a whole history (see EDNText)
}

// MarshalJSON leaves a whole history's anomalies out, as its transactions: they are
// the result's own, which AnomalyIndexes points to (repeated for each model found not
// valid, they were 23 of a 5,000-transaction history's 24 MB under --model all, and
// writing them took the process 40% past its --timeout).
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	p := plain(r)
	if r.WholeHistory && r.AnomalyIndexes != nil {
		p.Anomalies = nil
	}
	return json.Marshal(p)
}

// EDNText is the counterexample as a Jepsen EDN history, for the file --directory
// writes: EDN, or the whole history's when it is the counterexample.
func (r *Report) EDNText() string {
	if r.edn == "" {
		r.edn = EDN(r.cut) // on demand: a whole history's is megabytes, seldom asked for
	}
	return r.edn
}

// Counterexamples shrinks h for every model res found not valid, within the time
// before deadline (zero: none). A counterexample found for one model serves another of
// the same row of cutModels (whose proof covers the cut) when the checker finds it not
// valid under that one too. Models without one get an entry in failures. Each shrink
// gets an equal share of the time left, so that a model whose cuts stay large (cursor
// stability's lost update: per read, a read before its append pins nothing) does not
// take the time of the others; models of one row count once, as one cut mostly serves
// them all (read uncommitted's three forms).
func Counterexamples(h *history.History, res *check.Result, deadline time.Time) (reports []*Report, failures []string) {
	// shrinksLeft counts the shrinks still to come from model i on: one per row of
	// cutModels that no report serves yet, one per model without a row.
	shrinksLeft := func(i int) int {
		rows := map[cut]bool{}
		n := 0
		for _, r := range reports {
			rows[cutModels[r.cut.Model]] = true
		}
		for _, mr := range res.Models[i:] {
			if mr.Valid != check.Invalid {
				continue
			}
			if row, ok := cutModels[mr.Model]; !ok || !rows[row] {
				rows[row] = ok
				n++
			}
		}
		return max(n, 1)
	}
	var tried []string // the models searched so far, whose shrinks took the time
	for i, mr := range res.Models {
		if mr.Valid != check.Invalid {
			continue
		}
		m := mr.Model
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			// Say so, rather than "0 candidates checked", which reads as if no cut were
			// found not valid: none was tried.
			why := fmt.Sprintf("the time for counterexamples ran out before its turn (spent on %s)", strings.Join(tried, ", "))
			if len(tried) == 0 {
				// No shrink took it: the check itself used up the time (--timeout).
				why = "the time limit was reached before the search for counterexamples began"
			} else {
				for _, r := range reports {
					if Sound(m) && cutModels[m] == cutModels[r.cut.Model] {
						why = fmt.Sprintf("the time for counterexamples ran out (spent on %s) before the counterexample of %s, cut by the same rules, was re-checked under it",
							strings.Join(tried, ", "), r.cut.Model)
						break
					}
				}
			}
			if cx, ok := wholeCounterexample(h, m, res, why); ok {
				reports = append(reports, newReport(h, cx))
				continue
			}
			failures = append(failures, fmt.Sprintf("no counterexample for %s: %s", m, why))
			continue
		}
		share := deadline
		if !deadline.IsZero() {
			share = time.Now().Add(time.Until(deadline) / time.Duration(shrinksLeft(i)))
		}
		reused, unchecked := false, ""
		for _, r := range reports {
			// Only a cut made under the same row (reading, first reads) is proved
			// sound for m.
			if !Sound(m) || cutModels[m] != cutModels[r.cut.Model] {
				continue
			}
			switch stillInvalid(r.cut.History, m, deadline) {
			case check.Invalid:
				r.Models = append(r.Models, m)
				reused = true
			case check.Unknown:
				unchecked = r.cut.Model
			}
			if reused {
				break
			}
		}
		if reused {
			continue
		}
		tried = append(tried, m)
		seeds := res.Evidence(m)
		if len(seeds) > 4 {
			seeds = seeds[:4]
		}
		cx, err := Shrink(h, m, seeds, Options{Deadline: share, WholeInvalid: true, SearchOnly: res.RefutedBySearchOnly(m)})
		if afterShrink != nil {
			afterShrink()
		}
		if err != nil {
			if unchecked != "" {
				err = fmt.Errorf("%w; the counterexample of %s, cut by the same rules, could not be re-checked under %s in the time left", err, unchecked, m)
			}
			if cx, ok := wholeCounterexample(h, m, res, strings.TrimPrefix(err.Error(), "no counterexample for "+m+": ")); ok {
				reports = append(reports, newReport(h, cx))
				continue
			}
			failures = append(failures, err.Error())
			continue
		}
		reports = append(reports, newReport(h, cx))
	}
	return reports, failures
}

// afterShrink, when set (by tests), runs after each model's shrink.
var afterShrink func()

// stillInvalid re-checks cut h under model m within the time before deadline.
func stillInvalid(h *history.History, m string, deadline time.Time) check.Validity {
	opts := check.Options{Models: []string{m}}
	if !deadline.IsZero() {
		if opts.Timeout = time.Until(deadline); opts.Timeout <= 0 {
			return check.Unknown
		}
	}
	res, err := check.Check(h, opts)
	if err != nil {
		return check.Unknown
	}
	return res.Valid
}

func newReport(orig *history.History, cx *Counterexample) *Report {
	h := cx.History
	r := &Report{Models: []string{cx.Model}, Transactions: len(h.Txns), Original: len(orig.Txns),
		Prefixes: cx.Prefixes, Anomalies: cx.Result.Anomalies, Checks: cx.Checks, Minimal: cx.Minimal, NotMinimal: cx.NotMinimal,
		Seconds: cx.Seconds, cut: cx}
	for i := range h.Txns {
		if cx.Orig[i] < 0 {
			r.Synthetic = append(r.Synthetic, h.Txns[i].Index)
		}
	}
	r.WhyLarge = whyLarge(cx)
	if r.WholeHistory = len(h.Txns) == len(orig.Txns) && len(r.Synthetic) == 0 && !cx.Minimal; r.WholeHistory {
		r.AnomalyIndexes = cx.AnomalyIndexes
		// The input itself, no smaller cut verified: not listed again (at 100K
		// transactions it would be most of the output).
		return r
	}
	for i := range h.Txns {
		r.Txns = append(r.Txns, check.NewTxnRef(h, int32(i)))
	}
	r.EDN = r.EDNText()
	return r
}

// largeCut is the size past which a counterexample says why it is large (the issue's
// bar for a small one).
const largeCut = 10

// whyLarge names the key with the most writers in cx's cut that no read of their own
// (after their appends) pins, when the cut has more than largeCut transactions: a
// cut keeps such a writer only where the positions it could take are accounted for.
func whyLarge(cx *Counterexample) string {
	h := cx.History
	if len(h.Txns) <= largeCut {
		return ""
	}
	writers, unpinned := map[int32]int{}, map[int32]int{}
	for t := range h.Txns {
		if cx.Orig[t] < 0 {
			continue
		}
		appended := map[int32]bool{}
		pinned := map[int32]bool{}
		for i := h.Txns[t].OpStart; i < h.Txns[t].OpEnd; i++ {
			op := &h.Ops[i]
			switch {
			case op.Kind == history.Append:
				appended[op.Key] = true
			case op.Known && appended[op.Key]:
				pinned[op.Key] = true
			}
		}
		for k := range appended {
			writers[k]++
			if !pinned[k] {
				unpinned[k]++
			}
		}
	}
	best := int32(-1)
	for k, n := range unpinned {
		if best < 0 || n > unpinned[best] || n == unpinned[best] && k < best {
			best = k
		}
	}
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("%d transactions: %d of them append to key %s, %d with no read of it after their own appends to pin their blocks; a counterexample keeps such a writer only where the positions it could take are accounted for (past every kept read, with every writer of its values, or with every writer its key's narrowing confines to the same stretch: docs/DESIGN.md, \"Counterexamples\", rules 4, 9 and 10), so a proof that counts where those blocks can go keeps them all",
		len(h.Txns), writers[best], h.Keys[best], unpinned[best])
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
	for _, line := range SyntheticText(cx.History, cx.Orig, cx.Prefixes) {
		b.WriteString("; " + line + "\n")
	}
	for _, line := range ConfinedText(cx.Prefixes) {
		b.WriteString("; " + line + "\n")
	}
	if err := history.WriteHistoryEDN(&b, h); err != nil {
		fmt.Fprintf(&b, "; could not write the history: %v\n", err)
	}
	return b.String()
}

// ConfinedText says, one line per stretch of a key that rule 10 keeps, why its writers
// are there and where they lie.
func ConfinedText(prefixes []Prefix) []string {
	var lines []string
	for _, p := range prefixes {
		for _, sp := range p.Confined {
			names := make([]string, len(sp.Writers))
			for i, ix := range sp.Writers {
				names[i] = fmt.Sprintf("T%d", ix)
			}
			n := sp.To - sp.From + 1
			where := fmt.Sprintf("positions %d-%d (counted from 1: %d positions)", sp.From, sp.To, n)
			if n == 1 {
				where = fmt.Sprintf("position %d (counted from 1: 1 position)", sp.From)
			}
			count := "they fill it exactly in every attribution that narrowing allows"
			if sp.Appends > n {
				count = fmt.Sprintf("their :ok ones append %d values and it has %d: no attribution allows that (the count, checkable by hand)", sp.Appends, n)
			}
			lines = append(lines, fmt.Sprintf("key %s, %s: the whole history's narrowing confines the blocks of %s (:ok ones: %d values) there, and no other writer's block can reach in, so all of them are kept, whether or not a read pins them (rule 10); %s",
				p.Key, where, strings.Join(names, ", "), sp.Appends, count))
		}
	}
	return lines
}

// SyntheticText says, one line per synthetic transaction of a cut, what it appends and
// why it is there.
func SyntheticText(h *history.History, orig []int32, prefixes []Prefix) []string {
	var lines []string
	fill := 0
	var fills []string
	for _, p := range prefixes {
		for _, f := range p.Fills {
			if p.Failed {
				fills = append(fills, fmt.Sprintf("appends to key %s the values its longest read shows at positions %d-%d (counted from 1), in place of the :ok writers left out, whose ww edges chain those positions; invoked before and completed after everything else",
					p.Key, f.Position, f.Position+len(f.Values)-1))
				continue
			}
			byValue := ""
			if len(p.ByValue) > 0 {
				byValue = fmt.Sprintf(" (every transaction of the history that appends %s to key %s is kept, so the positions showing those values are theirs, wherever their blocks lie)",
					strings.Join(p.ByValue, " or "), p.Key)
			}
			fills = append(fills, fmt.Sprintf("appends to key %s, at positions %d-%d (counted from 1), the values every longer kept read shows there, in place of the writers left out%s; invoked before and completed after everything else",
				p.Key, f.Position, f.Position+len(f.Values)-1, byValue))
		}
	}
	for i, t := range orig {
		if t >= 0 {
			continue
		}
		name := fmt.Sprintf("T%d", h.Txns[i].Index)
		if i == 0 && h.Txns[i].Invoke == 0 && h.Txns[i].Complete == 1 && h.Txns[i].Status == history.Fail {
			var parts []string
			for _, p := range prefixes {
				parts = append(parts, fmt.Sprintf("to key %s %d values, each as often as a kept read shows it and at most as often as the whole history's appends left out", p.Key, len(p.Values)))
			}
			lines = append(lines, fmt.Sprintf("%s is synthetic and :fail, first of all: it appends %s; read uncommitted lets its appends stand anywhere in a key's version order in place of the writers left out, and a failed transaction has no edge", name, strings.Join(parts, "; ")))
			continue
		}
		if i == 0 && h.Txns[i].Invoke == 0 && h.Txns[i].Complete == 1 {
			var parts []string
			for _, p := range prefixes {
				switch {
				case p.Excess:
					parts = append(parts, fmt.Sprintf("to key %s %d values: what its kept reads start with, each value no more often than the whole history appends it to that key less the kept transactions' appends (a kept read shows some value more often than that: duplicate-elements)", p.Key, len(p.Values)))
				case len(p.Values) > 0:
					parts = append(parts, fmt.Sprintf("to key %s the %d values every kept read of it starts with", p.Key, len(p.Values)))
				}
			}
			lines = append(lines, fmt.Sprintf("%s is synthetic, first of all: it appends %s, in place of the writers left out", name, strings.Join(parts, "; ")))
			continue
		}
		if fill < len(fills) {
			lines = append(lines, fmt.Sprintf("%s is synthetic: it %s", name, fills[fill]))
			fill++
		}
	}
	return lines
}

// History is the cut; Orig maps its transactions to the original's (-1: synthetic).
func (r *Report) History() *history.History { return r.cut.History }
func (r *Report) Orig() []int32             { return r.cut.Orig }
