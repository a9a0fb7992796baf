package report

import (
	"fmt"
	"html/template"
	"slices"

	"doppel/check"
	"doppel/encode"
	"doppel/history"
)

// page is what the template shows.
type page struct {
	Source          string
	Verdict         string
	Class           string // valid, invalid, unknown
	Message         string
	Models          []modelView
	Anomalies       []anomalyView
	Counterexamples []cxView
	Timeline        template.HTML
	TimeNote        string
	Summary         string
	Plots           []plotView // a run's plots found in the directory, inlined
	CSS, JS         string
}

type plotView struct {
	File string
	SVG  template.HTML
}

type modelView struct {
	Name, Verdict, Class, Message string
	Types                         []string
	Anomalies                     []int // indices into page.Anomalies counted for this model
}

type anomalyView struct {
	ID, Type, Key, Model, Title, Explanation string
	Cases                                    bool // the explanation is a proof by cases (or one case: the attribution its cycle holds in)
	Steps                                    []stepView
	Txns                                     []txnView
	Cycle                                    cycle
	CycleSVG                                 template.HTML
	Keys                                     []keyView
	Files                                    []string // the files written for it, relative to the report
}

// cxView is a counterexample on the page.
type cxView struct {
	Models, Size, File string
	Txns               []txnView
	// Notes say what each synthetic transaction stands for, and which stretches of a
	// key keep their writers by their windows, with the count to check by hand.
	Notes     []string
	Anomalies []check.Anomaly
}

type stepView struct{ From, To, Kind, Key, Why string }

type txnView struct {
	ID          int
	Name, Where string
	Ops         string
}

// statusClass names a verdict for CSS.
func statusClass(v check.Validity) string {
	switch v {
	case check.Valid:
		return "valid"
	case check.Invalid:
		return "invalid"
	}
	return "unknown"
}

func build(h *history.History, res *check.Result) *page {
	pg := &page{Source: h.Source, Verdict: res.Valid.String(), Class: statusClass(res.Valid), Message: res.Message}
	if pg.Source == "" {
		pg.Source = "history"
	}
	s := res.Stats
	pg.Summary = fmt.Sprintf("%d transactions, %d operations, %d keys", s.Transactions, s.Operations, s.Keys)
	if s.Transactions == 0 {
		// The limits ran out while parsing (doppel check refuses a history without
		// transactions): the message says where.
		pg.Summary = "no transactions checked: the history was not read in full"
	}
	var in *encode.Inference
	if len(res.Anomalies) > 0 {
		in = encode.Infer(h) // the traces, for the per-key views
	}
	for i := range res.Anomalies {
		pg.Anomalies = append(pg.Anomalies, anomaly(h, in, &res.Anomalies[i], i))
	}
	for _, mr := range res.Models {
		mv := modelView{Name: mr.Model, Verdict: mr.Valid.String(), Class: statusClass(mr.Valid), Message: mr.Message, Types: mr.AnomalyTypes}
		for i := range res.Anomalies {
			if countsFor(&res.Anomalies[i], mr) {
				mv.Anomalies = append(mv.Anomalies, i)
			}
		}
		pg.Models = append(pg.Models, mv)
	}
	// The files each anomaly has, as writeModelFiles names them.
	for _, mv := range pg.Models {
		dots := map[string]int{}
		for _, i := range mv.Anomalies {
			a := &pg.Anomalies[i]
			a.Files = append(a.Files, mv.Name+"/"+fileName(a.Type)+".txt")
			if len(a.Steps) > 0 {
				dots[a.Type]++
				a.Files = append(a.Files, fmt.Sprintf("%s/%s-%d.dot", mv.Name, fileName(a.Type), dots[a.Type]))
			}
		}
	}
	pg.Timeline, pg.TimeNote = timeline(h, res)
	return pg
}

// countsFor reports whether anomaly a is evidence against model mr: the model forbids
// its type, and a solver-proved anomaly was proved for a model whose graph is within
// mr's (the rule check applies).
func countsFor(a *check.Anomaly, mr check.ModelResult) bool {
	if !slices.Contains(mr.AnomalyTypes, a.Type) {
		return false
	}
	if a.Model == "" || a.Model == mr.Model {
		return true
	}
	rank := map[string]int{"serializable": 0, "strong-session-serializable": 1, "strict-serializable": 2}
	ra, okA := rank[a.Model]
	rb, okB := rank[mr.Model]
	return okA && okB && ra <= rb
}

func anomaly(h *history.History, in *encode.Inference, a *check.Anomaly, i int) anomalyView {
	v := anomalyView{ID: fmt.Sprintf("a%d", i+1), Type: a.Type, Key: a.Key, Model: a.Model, Explanation: a.Explanation}
	v.Title = fmt.Sprintf("%d. %s", i+1, a.Type)
	if a.Key != "" {
		v.Title += " on key " + a.Key
	}
	if a.Model != "" {
		v.Title += " (proved for " + a.Model + ")"
	}
	v.Cases = len(a.Cases) > 0
	for _, t := range a.Txns {
		where := fmt.Sprintf("line %d", t.Line)
		if t.Index >= 0 {
			where = fmt.Sprintf("index %d, line %d", t.Index, t.Line)
		}
		if t.Process != "" {
			where += ", process " + t.Process
		}
		where += ", " + t.Status
		v.Txns = append(v.Txns, txnView{ID: t.ID, Name: txnName(h, t.ID), Where: where, Ops: t.Ops})
	}
	for _, s := range a.Steps {
		v.Steps = append(v.Steps, stepView{From: txnName(h, s.From), To: txnName(h, s.To), Kind: s.Kind, Key: s.Key, Why: s.Why})
	}
	if len(a.Steps) > 0 {
		v.Cycle = newCycle(h, a)
		v.CycleSVG = v.Cycle.svg()
	}
	v.Keys = keyViews(h, in, a)
	return v
}
