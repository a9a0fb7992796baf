package encode

import (
	"doppel/history"
)

// EdgeKind is why one transaction must precede another.
type EdgeKind uint8

const (
	WW          EdgeKind = iota // write-write: consecutive blocks of a key
	WR                          // write-read: the reader saw the writer's last append
	RW                          // read-write (anti-dependency): the writer's block follows what was read
	Process                     // same process, earlier first
	Realtime                    // completed before the other was invoked
	Hub                         // from a key's hub to a writer never observed in any read of it
	StartCommit                 // snapshot isolation: a transaction starts before it commits
)

var edgeKindNames = [...]string{"ww", "wr", "rw", "process", "realtime", "unobserved", "start-commit"}

func (k EdgeKind) String() string { return edgeKindNames[k] }

// Edge is a dependency From -> To between graph nodes (transactions, or a key's hub).
// A key's hub stands for "after the whole trace": the last writer and the readers of
// the whole trace go into it, and it goes to every writer never observed, so those
// edges are linear in number rather than quadratic.
type Edge struct {
	From, To int32
	Kind     EdgeKind
	Key      int32 // -1 for process and real-time edges
	Read     int32 // the read that shows it (wr, rw), -1 otherwise
	Pos      int32 // the trace position the edge is about (the start of To's block)
	// The edge holds when all its guard literals are true: Problem.Guards[G0:G1].
	G0, G1 int32
}

// Lit is a literal of the problem's variables: 2*v for v, 2*v+1 for not v (the
// solver's encoding).
type Lit = int32

// Pos and Neg make literals.
func Pos(v int32) Lit { return 2 * v }
func Neg(v int32) Lit { return 2*v + 1 }

// Commit says whether a transaction is in the graph.
type Commit uint8

const (
	NotCommitted Commit = iota
	Committed
	MayCommit // an :info transaction observed only where other attributions exist
)

// Problem is the whole decision problem for the data dependencies of a history.
type Problem struct {
	In    *Inference
	Plans []Plan
	// Nodes: transactions 0..len(Txns)-1, then one hub per key at HubBase+key.
	Nodes   int
	HubBase int32
	Edges   []Edge
	Guards  []Lit
	// Boolean part.
	NumVars   int32
	Clauses   []Lit   // flat
	ClauseEnd []int32 // clause i is Clauses[ClauseEnd[i-1]:ClauseEnd[i]]
	Commit    []Commit
	CommitVar []int32 // per transaction, the variable of MayCommit ones, else -1
	// SegVar[k][i] is the variable of Plans[k].Cands[i] (open keys).
	SegVar [][]int32
	// Unsat keys: no segmentation exists; the history is not valid.
	UnsatKeys []int32

	unobsVar map[unobsKey]int32
}

// IsHub reports whether node is a key's hub.
func (p *Problem) IsHub(node int32) bool { return node >= p.HubBase }

// Guard returns edge e's guard.
func (p *Problem) Guard(e *Edge) []Lit { return p.Guards[e.G0:e.G1] }

func (p *Problem) newVar() int32 {
	p.NumVars++
	return p.NumVars - 1
}

func (p *Problem) clause(lits ...Lit) {
	p.Clauses = append(p.Clauses, lits...)
	p.ClauseEnd = append(p.ClauseEnd, int32(len(p.Clauses)))
}

// Clause returns clause i.
func (p *Problem) Clause(i int) []Lit {
	start := int32(0)
	if i > 0 {
		start = p.ClauseEnd[i-1]
	}
	return p.Clauses[start:p.ClauseEnd[i]]
}

func (p *Problem) edge(from, to int32, kind EdgeKind, key, read, pos int32, guard ...Lit) {
	g0 := int32(len(p.Guards))
	p.Guards = append(p.Guards, guard...)
	p.Edges = append(p.Edges, Edge{From: from, To: to, Kind: kind, Key: key, Read: read, Pos: pos, G0: g0, G1: int32(len(p.Guards))})
}

// Build infers, segments every key and produces the data-dependency problem.
func Build(h *history.History) *Problem {
	in := Infer(h)
	return BuildFrom(in)
}

// BuildFrom is Build for an existing inference.
func BuildFrom(in *Inference) *Problem {
	h := in.H
	p := &Problem{In: in, Plans: make([]Plan, len(in.Keys)), HubBase: int32(len(h.Txns)), unobsVar: map[unobsKey]int32{}}
	p.Nodes = len(h.Txns) + len(in.Keys)
	p.Edges = make([]Edge, 0, 2*len(in.Reads)+len(in.Writers)+len(in.Writers)/2)
	p.Clauses = make([]Lit, 0, 2*len(in.WriterVals))
	p.ClauseEnd = make([]int32, 0, len(in.WriterVals))
	for k := range in.Keys {
		if in.Keys[k].Bad {
			p.Plans[k] = Plan{State: KeyUnsat}
			continue
		}
		p.Plans[k] = in.Segment(int32(k))
		if p.Plans[k].State == KeyUnsat {
			p.UnsatKeys = append(p.UnsatKeys, int32(k))
		}
	}

	// Which transactions are in the graph: ok ones; :info ones observed in a fixed
	// segmentation; :info ones that some open key may use get a variable; other :info
	// ones were never observed and leaving them out can only remove constraints.
	p.Commit = make([]Commit, len(h.Txns))
	p.CommitVar = make([]int32, len(h.Txns))
	for t := range h.Txns {
		p.CommitVar[t] = -1
		if h.Txns[t].Status == history.OK {
			p.Commit[t] = Committed
		}
	}
	for k := range p.Plans {
		for _, c := range p.Plans[k].Blocks {
			p.Commit[in.Writers[c.Writer].Txn] = Committed
		}
	}
	for k := range p.Plans {
		for _, c := range p.Plans[k].Cands {
			t := in.Writers[c.Writer].Txn
			if p.Commit[t] == NotCommitted && h.Txns[t].Status == history.Info {
				p.Commit[t] = MayCommit
				p.CommitVar[t] = p.newVar()
			}
		}
	}

	p.SegVar = make([][]int32, len(in.Keys))
	for k := range p.Plans {
		switch p.Plans[k].State {
		case KeyFixed:
			p.fixedKey(int32(k))
		case KeyOpen:
			p.openKey(int32(k))
		case KeyUnsat:
			p.diagnose(int32(k))
		case KeyUnread:
			p.unreadKey(int32(k))
		}
	}
	return p
}

// commitGuard returns the guard for "transaction t committed" and whether t can commit.
func (p *Problem) commitGuard(t int32) ([]Lit, bool) {
	switch p.Commit[t] {
	case Committed:
		return nil, true
	case MayCommit:
		return []Lit{Pos(p.CommitVar[t])}, true
	}
	return nil, false
}

func (p *Problem) blockEnd(c Cand) int32 {
	w := &p.In.Writers[c.Writer]
	return c.Pos + w.End - w.Start
}

// fixedKey emits the known edges of a key with exactly one segmentation.
func (p *Problem) fixedKey(k int32) {
	in := p.In
	key := &in.Keys[k]
	plan := &p.Plans[k]
	n := int32(len(key.Trace))
	blocks := plan.Blocks
	hub := p.HubBase + k
	for j := 1; j < len(blocks); j++ {
		p.edge(in.Writers[blocks[j-1].Writer].Txn, in.Writers[blocks[j].Writer].Txn, WW, k, key.TraceBy, blocks[j].Pos)
	}
	// blockAt finds the block covering position pos.
	blockAt := func(pos int32) int {
		lo, hi := 0, len(blocks)
		for lo+1 < hi {
			mid := (lo + hi) / 2
			if blocks[mid].Pos <= pos {
				lo = mid
			} else {
				hi = mid
			}
		}
		return lo
	}
	inSeg := make(map[int32]bool, len(blocks))
	for _, b := range blocks {
		inSeg[b.Writer] = true
	}
	var unobserved []int32
	for _, w := range key.Writers {
		if in.Writers[w].Status != history.Fail && !inSeg[w] {
			if _, ok := p.commitGuard(in.Writers[w].Txn); ok {
				unobserved = append(unobserved, w)
			}
		}
	}
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 {
			continue
		}
		if r.Len > 0 {
			b := blocks[blockAt(r.Len-1)]
			if t := in.Writers[b.Writer].Txn; t != r.Txn {
				p.edge(t, r.Txn, WR, k, ri, b.Pos)
			}
		}
		if r.Len < n {
			b := blocks[blockAt(r.Len)]
			if t := in.Writers[b.Writer].Txn; t != r.Txn {
				p.edge(r.Txn, t, RW, k, ri, b.Pos)
			}
		} else {
			p.fullReader(k, ri, unobserved)
		}
	}
	if len(unobserved) > 0 && len(blocks) > 0 {
		last := blocks[len(blocks)-1]
		p.edge(in.Writers[last.Writer].Txn, hub, WW, k, key.TraceBy, n)
	}
	p.hubOut(k, unobserved)
}

// fullReader emits the anti-dependencies of a read of the whole trace: the reader
// precedes every writer never observed. A reader that is itself such a writer gets
// direct edges, since going through the hub would make it precede itself.
func (p *Problem) fullReader(k, ri int32, unobserved []int32) {
	in := p.In
	r := &in.Reads[ri]
	n := int32(len(in.Keys[k].Trace))
	if !r.Writes {
		if len(unobserved) > 0 {
			p.edge(r.Txn, p.HubBase+k, RW, k, ri, n)
		}
		return
	}
	for _, w := range unobserved {
		t := in.Writers[w].Txn
		if t == r.Txn {
			continue
		}
		g, _ := p.commitGuard(t)
		p.edge(r.Txn, t, RW, k, ri, n, p.unobservedGuard(k, w, g)...)
	}
}

// UnobservedVar returns the variable "writer w is committed but unobserved on key k",
// for writers of open keys that may or may not be observed.
func (p *Problem) UnobservedVar(k, w int32) (int32, bool) {
	v, ok := p.unobsVar[unobsKey{k, w}]
	return v, ok
}

// UnobservedGuard is the condition for writer w (one of Plans[k].Unobserved) to be a
// committed writer of key k that no read observed.
func (p *Problem) UnobservedGuard(k, w int32) []Lit {
	g, _ := p.commitGuard(p.In.Writers[w].Txn)
	return p.unobservedGuard(k, w, g)
}

// unobservedGuard maps (key, writer) to the variable "writer is unobserved on key" for
// open keys (set by openKey), else to the writer's commit condition.
func (p *Problem) unobservedGuard(k, w int32, commit []Lit) []Lit {
	if v, ok := p.unobsVar[unobsKey{k, w}]; ok {
		return []Lit{Pos(v)}
	}
	return commit
}

type unobsKey struct{ key, writer int32 }

// hubOut emits hub -> writer for every possibly-unobserved writer, and records them.
func (p *Problem) hubOut(k int32, unobserved []int32) {
	p.Plans[k].Unobserved = unobserved
	for _, w := range unobserved {
		t := p.In.Writers[w].Txn
		g, _ := p.commitGuard(t)
		p.edge(p.HubBase+k, t, Hub, k, -1, int32(len(p.In.Keys[k].Trace)), p.unobservedGuard(k, w, g)...)
	}
}

// unreadKey: nobody read the key; every committed writer is unobserved and nothing
// precedes them through the key, so no edge is needed (snapshot isolation still orders
// them among themselves, from Plans[k].Unobserved).
func (p *Problem) unreadKey(k int32) {
	for _, w := range p.In.Keys[k].Writers {
		if p.In.Writers[w].Status == history.Fail {
			continue
		}
		if _, ok := p.commitGuard(p.In.Writers[w].Txn); ok {
			p.Plans[k].Unobserved = append(p.Plans[k].Unobserved, w)
		}
	}
}
