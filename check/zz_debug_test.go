package check

import (
	"os"
	"testing"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/prune"
)

func TestZZDebugWindowReplay(t *testing.T) {
	f := os.Getenv("DOPPEL_DEBUG_FILE")
	if f == "" {
		t.Skip()
	}
	h, err := history.ParseFile(f)
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	pr := prune.Run(in, prune.Options{Level: prune.Level{Process: true, Realtime: true}})
	commit := make([]encode.Commit, len(h.Txns))
	for t := range h.Txns {
		if h.Txns[t].Status == history.OK {
			commit[t] = encode.Committed
		} else if h.Txns[t].Status == history.Info {
			commit[t] = encode.MayCommit
		}
	}
	p := &encode.Problem{In: in, Commit: commit}
	guide := append(p.ProcessEdges(), p.RealtimeEdges()...)
	r := newReplay(h, in, commit, guide)
	r.win = pr.Win
	_, ok := r.run()
	ran := 0
	for tt := range h.Txns {
		if r.state[tt] == rDone {
			ran++
		}
	}
	t.Logf("ok=%v ran %d of %d, failed=%v", ok, ran, len(h.Txns), r.failed)
	shown := 0
	for tt := int32(0); tt < int32(len(h.Txns)) && shown < 10; tt++ {
		if commit[tt] == encode.Committed && r.state[tt] != rDone && r.preds[tt] == 0 {
			okc, s := r.check(tt)
			t.Logf("T%d not run: ok=%v wait=%d ops=%s", tt, okc, s, encode.OpsString(h, tt))
			for _, w := range in.TxnWriters(tt) {
				k := in.Writers[w].Key
				t.Logf("   writer key %d pos now %d window [%d,%d] n=%d", k, r.keys[k].pos, pr.Win.Lo[w], pr.Win.Hi[w], r.keys[k].n)
			}
			shown++
		}
	}
}

func TestZZDebugPrune(t *testing.T) {
	f := os.Getenv("DOPPEL_DEBUG_FILE")
	if f == "" {
		t.Skip()
	}
	h, _ := history.ParseFile(f)
	in := encode.Infer(h)
	for _, lvl := range []prune.Level{{Process: true, Realtime: true}, {}} {
		t0 := time.Now()
		pr := prune.Run(in, prune.Options{Level: lvl})
		t.Logf("level %+v: rounds %d narrowed %d contradiction %v in %v", lvl, pr.Rounds, pr.Narrowed, pr.Contradiction != nil, time.Since(t0))
		p := encode.BuildWithin(in, pr.Win)
		t.Logf("   vars %d clauses %d", p.NumVars, len(p.ClauseEnd))
	}
}

func TestZZDebugGuessCycle(t *testing.T) {
	f := os.Getenv("DOPPEL_DEBUG_FILE")
	if f == "" {
		t.Skip()
	}
	h, _ := history.ParseFile(f)
	in := encode.Infer(h)
	pr := prune.Run(in, prune.Options{Level: prune.Level{Process: true, Realtime: true}})
	c := &checker{h: h, opts: Options{}, cycleFound: map[string]bool{}, proven: map[string]bool{}, reported: map[string]bool{}}
	c.p = encode.BuildWithin(in, pr.Win)
	p := c.p
	c.nData, c.nDataProcess = len(p.Edges), len(p.Edges)
	pe := p.ProcessEdges()
	c.nDataProcess += len(pe)
	c.edges = append(append(p.Edges, pe...), p.RealtimeEdges()...)
	v := c.serialView("strict-serializable")
	guess, ok := c.witness(v)
	t.Logf("witness ok=%v", ok)
	holds := c.holdsUnder(guess)
	g := newGraph(v.nodes, v.edges, holds)
	comps := g.sccs(func(int32) bool { return true }, holds)
	t.Logf("%d cyclic components, sizes:", len(comps))
	var scratch bfsScratch
	for i, comp := range comps {
		if i >= 5 {
			break
		}
		inComp := make([]bool, g.n)
		for _, x := range comp {
			inComp[x] = true
		}
		cycle := g.path(comp[0], comp[0], func(x int32) bool { return inComp[x] }, holds, &scratch)
		t.Logf("comp of %d: cycle %s", len(comp), c.classify(v, cycle))
		for _, st := range c.steps(v, cycle) {
			t.Logf("   %s", c.explain(st))
		}
	}
}
