package check

import (
	"fmt"
	"slices"
	"strings"

	"doppel/encode"
	"doppel/history"
)

// CountsFor reports whether anomaly a counts against model m: m forbids its type, and
// it holds in every attribution of m's reading (one base or per read) or was proved
// under a model whose graph lies within m's.
func CountsFor(a *Anomaly, m string) bool {
	return forbids(m, a.Type) && a.countsFor(m)
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
		if len(a.seed) > 0 {
			txns = a.seed
		}
		add(txns)
	}
	slices.SortStableFunc(out, func(a, b []int32) int { return len(a) - len(b) })
	return out
}

// RefutedBySearchOnly reports whether the only evidence against model m is the
// exhaustive search over the processes' orders (G1c-process or G1c-realtime with no
// cycle named): a check that leaves that search out cannot refute m on this history,
// nor, most likely, on a part of it.
func (r *Result) RefutedBySearchOnly(m string) bool {
	for _, p := range r.proofs {
		if graphWithin(p.model, m) {
			return false
		}
	}
	searched := false
	for i := range r.Anomalies {
		a := &r.Anomalies[i]
		if !CountsFor(a, m) {
			continue
		}
		if !a.searched {
			return false
		}
		searched = true
	}
	return searched
}

// Case is one case of a proof by cases: the choices of an attribution of duplicate
// values (where some appends lie, which are not observed, which :info transactions
// committed) and the cycle every attribution making those choices closes.
type Case struct {
	N       int      `json:"case"`
	Choices []Choice `json:"choices"`
	Steps   []Step   `json:"steps"`
}

// Choice is one choice of a case.
type Choice struct {
	// Kind is position (Txn's appends lie at Position.. of Key), covers (Txn's appends
	// cover Position of Key, the last a read shows), unobserved (Txn's
	// append to Key is in no read), committed (the :info Txn committed), or order
	// (snapshot isolation: Txn committed before Other started); Not negates it.
	Kind  string `json:"kind"`
	Not   bool   `json:"not,omitempty"`
	Txn   int64  `json:"txn"` // :index (-1 when the history has none)
	Other int64  `json:"other,omitempty"`
	Key   string `json:"key,omitempty"`
	// Values are Txn's appended values; Position is where the first lies, counted from 1.
	Values   []string `json:"values,omitempty"`
	Position int      `json:"position,omitempty"`
	// Window is the key's list around the positions the choice refers to.
	Window *Window `json:"window,omitempty"`
	Text   string  `json:"text"`
}

// Window is part of a key's list: Values start at position From (counted from 1), and
// positions MarkFrom..MarkTo are the ones a choice or step refers to.
type Window struct {
	From     int      `json:"from"`
	Values   []string `json:"values"`
	MarkFrom int      `json:"mark_from"`
	MarkTo   int      `json:"mark_to"`
	Length   int      `json:"length"` // of the whole list
}

// windowContext is how many values a window shows on each side of what it marks.
const windowContext = 3

// newWindow cuts list around positions [from, to] (1-based, inclusive).
func newWindow(h *history.History, list []int32, from, to int) *Window {
	lo := max(1, from-windowContext)
	hi := min(len(list), to+windowContext)
	w := &Window{From: lo, MarkFrom: from, MarkTo: to, Length: len(list)}
	for _, v := range list[lo-1 : max(lo-1, hi)] {
		w.Values = append(w.Values, h.Values[v])
	}
	return w
}

// String shows the window with the marked positions in brackets, and where it lies:
// "… 1 2 [2] 1 1 … (positions 47-53 of 60; marked: 50)".
func (w *Window) String() string {
	var b strings.Builder
	if w.From > 1 {
		b.WriteString("… ")
	}
	for i, v := range w.Values {
		p := w.From + i
		if i > 0 {
			b.WriteByte(' ')
		}
		if p == w.MarkFrom {
			b.WriteByte('[')
		}
		b.WriteString(v)
		if p == w.MarkTo || p == w.Length && w.MarkFrom <= p && w.MarkTo > p {
			b.WriteByte(']') // (a block reaching past the list is closed at its end)
		}
	}
	to := w.From + len(w.Values) - 1
	if to < w.Length {
		b.WriteString(" …")
	}
	marked := fmt.Sprint(w.MarkFrom)
	if w.MarkTo != w.MarkFrom {
		marked = fmt.Sprintf("%d-%d", w.MarkFrom, w.MarkTo)
	}
	if w.MarkFrom > w.Length {
		return fmt.Sprintf("%s (positions %d-%d of %d; marked: %s, past the end of every read)", b.String(), w.From, to, w.Length, marked)
	}
	fmt.Fprintf(&b, " (positions %d-%d of %d; marked: %s)", w.From, to, w.Length, marked)
	return b.String()
}

// choiceOf describes guard literal l structurally, with its words.
func (c *checker) choiceOf(v *view, l encode.Lit) Choice {
	_, ch := c.varMeaning(v, l>>1)
	ch.Text = c.describeLit(v, l)
	ch.Not = l&1 == 1
	return ch
}

// caseText prints a case as a block: its choices, each with the window of the list it
// refers to, then its cycle, one step per line.
func caseText(cs Case) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Case %d, the attributions in which", cs.N)
	for i, ch := range cs.Choices {
		sep := " and"
		if i == len(cs.Choices)-1 {
			sep = ":"
		}
		fmt.Fprintf(&b, "\n    %s%s", ch.Text, sep)
		if ch.Window != nil {
			fmt.Fprintf(&b, "\n        key %s: %s", ch.Key, ch.Window)
		}
	}
	if len(cs.Choices) == 0 {
		b.WriteString(" (any):")
	}
	b.WriteString("\n  then")
	for _, st := range cs.Steps {
		fmt.Fprintf(&b, "\n    %s;", st.Why)
	}
	b.WriteString("\n    a cycle.")
	return b.String()
}

// stepOf makes step s a reported Step: transactions by position and by :index, the
// micro-ops it relates (as Elle's a-mop-index and b-mop-index), and why it holds,
// prefixed by cond (the case it holds in).
func (c *checker) stepOf(s step, cond string) Step {
	h := c.h
	st := Step{From: int(s.from), To: int(s.to), FromIndex: h.Txns[s.from].Index, ToIndex: h.Txns[s.to].Index,
		Kind: s.kind.String(), Why: cond + c.explain(s), AMop: -1, BMop: -1}
	e := s.in
	if e.Key < 0 {
		return st
	}
	st.Key = h.Keys[e.Key]
	readOp := func(t int32) int {
		if e.Read >= 0 && c.p.In.Reads[e.Read].Txn == t {
			return int(c.p.In.Reads[e.Read].Op - h.Txns[t].OpStart)
		}
		return c.mop(t, e.Key, history.Read, false)
	}
	switch s.kind {
	case encode.WW:
		st.AMop, st.BMop = c.mop(s.from, e.Key, history.Append, true), c.mop(s.to, e.Key, history.Append, false)
	case encode.WR:
		st.AMop, st.BMop = c.mop(s.from, e.Key, history.Append, true), readOp(s.to)
	case encode.RW:
		st.AMop, st.BMop = readOp(s.from), c.mop(s.to, e.Key, history.Append, false)
	}
	return st
}

// mop is the index, within transaction t, of its first (last if last) micro-op of kind
// on key k, -1 if none.
func (c *checker) mop(t int32, k int32, kind history.Kind, last bool) int {
	found := -1
	for i, op := range c.h.TxnOps(int(t)) {
		if op.Kind == kind && op.Key == k {
			found = i
			if !last {
				break
			}
		}
	}
	return found
}
