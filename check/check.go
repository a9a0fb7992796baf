package check

import (
	"sort"
	"time"

	"doppel/encode"
	"doppel/history"
)

// Check decides h under each model of opts. An error means bad options, never a
// property of the history.
func Check(h *history.History, opts Options) (Result, error) {
	names, err := validateModels(opts.Models)
	if err != nil {
		return Result{}, err
	}
	c := &checker{h: h, opts: opts, cycleFound: map[string]bool{}, proven: map[string]bool{}}
	return c.run(names), nil
}

type checker struct {
	h          *history.History
	opts       Options
	p          *encode.Problem
	res        Result
	cycleFound map[string]bool // cycle kinds reported among known edges
	// edges: data edges of the problem, then process, then real-time ones.
	edges []encode.Edge
	start time.Time
	// siGuards holds the guards of edges only snapshot isolation has.
	siGuards []encode.Lit
	litNames []string // what each variable means, for explanations
	// c.edges is data edges, then process edges, then real-time ones.
	nData, nDataProcess int
	dataCyclic          bool            // the known data edges alone have a cycle
	proven              map[string]bool // models a verified serial replay proved
	strictEdges         []encode.Edge   // strictView's edges when c.edges lacks the orders
	strictTried         bool            // strictWitness ran; strictSat: it found a solution
	strictSat           bool
}

func (c *checker) run(names []string) Result {
	h := c.h
	t0 := time.Now()
	c.start = t0
	c.progress("inferring dependencies")
	in := encode.Infer(h)
	c.res.Stats.InferSeconds = time.Since(t0).Seconds()
	if len(in.Findings) == 0 && !c.opts.Solver.NoWitness {
		// Most histories are valid: a serial replay proves it without building the
		// problem. (Findings are anomalies every model forbids: nothing to prove then.)
		c.progress("replaying serially")
		t1 := time.Now()
		c.proveByReplay(in, names)
		c.res.Stats.SolveSeconds += time.Since(t1).Seconds()
		if len(c.proven) == len(names) {
			return c.replayResult(names)
		}
	}
	t0 = time.Now()
	c.p = encode.BuildFrom(in)
	p := c.p
	var needProcess, needRealtime bool
	for _, m := range names {
		needProcess = needProcess || models[m].process
		needRealtime = needRealtime || models[m].realtime
	}
	var process, realtime []encode.Edge
	if needProcess {
		process = p.ProcessEdges()
	}
	if needRealtime {
		realtime = p.RealtimeEdges()
	}
	// Extend the problem's edge list in place rather than copying it (it is the
	// biggest structure); p.Edges stays the data-edge prefix.
	c.nData, c.nDataProcess = len(p.Edges), len(p.Edges)+len(process)
	c.edges = append(append(p.Edges, process...), realtime...)
	p.Edges = c.edges[:c.nData:c.nData]
	c.res.Stats.InferSeconds += time.Since(t0).Seconds()
	c.fillStats()

	for _, f := range p.In.Findings {
		c.addFinding(f)
	}

	t1 := time.Now()
	c.progress("searching for cycles")
	c.knownCycles(&view{nodes: p.Nodes, edges: c.edges, hubFrom: p.HubBase})
	var si *view
	if contains(names, "snapshot-isolation") && (c.dataCyclic || !c.proven["snapshot-isolation"]) {
		si = c.siView(false)
		// A cycle of the split graph collapses to one of data edges, so only then
		// can snapshot isolation have known cycles of its own.
		if c.dataCyclic {
			c.knownCycles(si)
		}
	}
	c.res.Stats.ExplainSeconds = time.Since(t1).Seconds()

	open := p.NumVars > 0 || c.hasGuards()
	results := map[string]*ModelResult{}
	for _, m := range decideOrder(names) {
		v := si
		if m != "snapshot-isolation" {
			v = c.serialView(m)
		}
		mr := &ModelResult{Model: m, Valid: Valid}
		results[m] = mr
		switch {
		case len(c.forbiddenFound(m)) > 0:
			mr.Valid = Invalid
		case c.proven[m]:
			// A verified serial replay. (A forbidden anomaly above would contradict it.)
		case len(p.UnsatKeys) > 0:
			// Exactness first: a key without segmentation is a violation even if the
			// diagnosis found no named anomaly.
			mr.Valid = Invalid
		case impliedValid(m, results):
		case open || v.split && c.siPairs():
			c.progress("deciding " + m)
			mr.Valid, mr.Message = c.solve(m, v)
		}
	}
	// A model found not valid must name an anomaly it forbids. When nothing does (the
	// solver's proof by cases found no attribution at all), a key alone has no
	// segmentation with distinct writers: name it.
	for _, m := range names {
		if results[m].Valid == Invalid && len(c.forbiddenFound(m)) == 0 {
			n := len(p.In.Findings)
			if p.ExplainOpenKeys() {
				for _, f := range p.In.Findings[n:] {
					c.addFinding(f)
				}
			}
			break
		}
	}
	for _, m := range names {
		mr := results[m]
		mr.AnomalyTypes = c.forbiddenFound(m)
		c.res.Models = append(c.res.Models, *mr)
	}
	return c.finish()
}

// replayResult is the result when a serial replay proved every model.
func (c *checker) replayResult(names []string) Result {
	h := c.h
	s := &c.res.Stats
	s.Transactions, s.Operations, s.Keys = len(h.Txns), len(h.Ops), len(h.Keys)
	for _, m := range names {
		c.res.Models = append(c.res.Models, ModelResult{Model: m, Valid: Valid, AnomalyTypes: []string{}})
	}
	return c.finish()
}

// finish sets the overall verdict from the models'.
func (c *checker) finish() Result {
	c.res.Valid = Valid
	for _, mr := range c.res.Models {
		if mr.Valid == Invalid {
			c.res.Valid = Invalid
		} else if mr.Valid == Unknown && c.res.Valid == Valid {
			c.res.Valid = Unknown
			c.res.Message = mr.Message
		}
	}
	c.res.AnomalyTypes = []string{}
	for _, a := range c.res.Anomalies {
		if !contains(c.res.AnomalyTypes, a.Type) {
			c.res.AnomalyTypes = append(c.res.AnomalyTypes, a.Type)
		}
	}
	sort.Strings(c.res.AnomalyTypes)
	if c.res.Anomalies == nil {
		c.res.Anomalies = []Anomaly{}
	}
	return c.res
}

func (c *checker) progress(phase string) {
	if c.opts.Progress != nil {
		c.opts.Progress(phase)
	}
}

// forbiddenFound lists the anomaly types found so far that model m forbids.
func (c *checker) forbiddenFound(m string) []string {
	types := []string{}
	for _, a := range c.res.Anomalies {
		if a.Model != "" && !graphWithin(a.Model, m) {
			continue
		}
		if forbids(m, a.Type) && !contains(types, a.Type) {
			types = append(types, a.Type)
		}
	}
	sort.Strings(types)
	return types
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (c *checker) hasGuards() bool {
	for i := range c.p.Edges {
		if c.p.Edges[i].G1 > c.p.Edges[i].G0 {
			return true
		}
	}
	return false
}

func (c *checker) fillStats() {
	h, p := c.h, c.p
	s := &c.res.Stats
	s.Transactions = len(h.Txns)
	s.Operations = len(h.Ops)
	s.Keys = len(h.Keys)
	for _, pl := range p.Plans {
		switch pl.State {
		case encode.KeyFixed, encode.KeyUnread:
			s.KeysFixed++
		case encode.KeyOpen:
			s.KeysOpen++
		}
	}
	s.Edges = len(c.edges)
	for i := range c.edges {
		if c.edges[i].G1 > c.edges[i].G0 {
			s.GuardedEdges++
		}
	}
	s.Variables = int(p.NumVars)
	s.Clauses = len(p.ClauseEnd)
}

// txnRef describes transaction t for a report.
func (c *checker) txnRef(t int32) TxnRef {
	tx := &c.h.Txns[t]
	r := TxnRef{ID: int(t), Index: tx.Index, Line: int(tx.Line), Status: tx.Status.String(), Ops: encode.OpsString(c.h, t)}
	if tx.Process >= 0 {
		r.Process = c.h.Processes[tx.Process]
	}
	return r
}

func (c *checker) addFinding(f encode.Finding) {
	a := Anomaly{Type: f.Type, Explanation: f.Text}
	if f.Key >= 0 {
		a.Key = c.h.Keys[f.Key]
	}
	for _, t := range f.Txns {
		a.Txns = append(a.Txns, c.txnRef(t))
	}
	c.res.Anomalies = append(c.res.Anomalies, a)
}
