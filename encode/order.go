package encode

import (
	"slices"
	"sort"

	"doppel/history"
)

// ProcessEdges orders each process's transactions (as strong-session models require):
// consecutive committed-or-maybe transactions of a process, in invoke order.
func (p *Problem) ProcessEdges() []Edge {
	h := p.In.H
	n := 0
	for t := range h.Txns {
		if h.Txns[t].Process >= 0 && p.Commit[t] != NotCommitted {
			n++
		}
	}
	// Sized exactly: at a million transactions growing them by appends allocated
	// five times what they hold.
	ids := make([]int32, 0, n)
	for t := range h.Txns {
		if h.Txns[t].Process >= 0 && p.Commit[t] != NotCommitted {
			ids = append(ids, int32(t))
		}
	}
	SortProcessOrder(h, ids)
	edges := make([]Edge, 0, max(n-1, 0))
	for i := 1; i < len(ids); i++ {
		if h.Txns[ids[i-1]].Process == h.Txns[ids[i]].Process {
			edges = append(edges, Edge{From: ids[i-1], To: ids[i], Kind: Process, Key: -1, Read: -1})
		}
	}
	return edges
}

// SortProcessOrder sorts transaction ids by process, then in each process's order:
// invoke order, or, without invokes in the file, completion order (the order of Txns).
func SortProcessOrder(h *history.History, ids []int32) {
	sort.SliceStable(ids, func(a, b int) bool {
		ta, tb := &h.Txns[ids[a]], &h.Txns[ids[b]]
		if ta.Process != tb.Process {
			return ta.Process < tb.Process
		}
		if ta.Invoke >= 0 && tb.Invoke >= 0 {
			return ta.Invoke < tb.Invoke
		}
		return ids[a] < ids[b]
	})
}

// RealtimeEdges orders T1 before T2 when T1 completed before T2 was invoked, as a
// transitive reduction (Elle's): each invoke gets edges only from the completed
// transactions not already implied by a later completion. :info transactions never
// complete. Transactions without an invoke position are taken to start at the beginning.
func (p *Problem) RealtimeEdges() []Edge {
	edges, _ := p.AppendRealtimeEdges(make([]Edge, 0, 4*len(p.In.H.Txns)), nil)
	return edges
}

// AppendRealtimeEdges appends RealtimeEdges to dst (no copy of them afterwards). It
// asks stop (when not nil) every so many events and gives up, returning false, as soon
// as it reports true: a checker's time limit.
func (p *Problem) AppendRealtimeEdges(dst []Edge, stop func() bool) ([]Edge, bool) {
	// Counted first, so that dst grows once: with many processes there are several
	// edges per transaction, and growing by appending copied them over and over (at
	// 1M transactions and 20 processes, 3–4 s of a check).
	need := p.realtime(nil, stop)
	if need < 0 {
		return dst, false
	}
	dst = slices.Grow(dst, need)
	n := p.realtime(func(from, to int32) {
		dst = append(dst, Edge{From: from, To: to, Kind: Realtime, Key: -1, Read: -1})
	}, stop)
	return dst, n >= 0
}

// realtime calls add for each edge of RealtimeEdges, in order (if add is not nil), and
// returns how many there are; -1 when stop said to give up.
func (p *Problem) realtime(add func(from, to int32), stop func() bool) int {
	h := p.In.H
	maxPos := int32(-1)
	for t := range h.Txns {
		maxPos = max(maxPos, h.Txns[t].Invoke, h.Txns[t].Complete)
	}
	// Events by position: +t+1 for an invoke, -(t+1) for a completion.
	ev := make([]int32, maxPos+1)
	for t := range h.Txns {
		tx := &h.Txns[t]
		if p.Commit[t] == NotCommitted {
			continue
		}
		if tx.Invoke >= 0 {
			ev[tx.Invoke] = int32(t) + 1
		}
		if tx.Complete >= 0 && tx.Status == history.OK {
			ev[tx.Complete] = -(int32(t) + 1)
		}
	}
	var from []int32     // the sources of the edges so far
	var frontier []int32 // completed transactions not yet followed by a completed successor
	// A transaction's real-time predecessors are the edges added at its invoke:
	// from[predStart[t]:predEnd[t]].
	predStart := make([]int32, len(h.Txns))
	predEnd := make([]int32, len(h.Txns))
	dominated := make([]bool, len(h.Txns))
	for i, e := range ev {
		if stop != nil && i&(1<<12-1) == 0 && stop() {
			return -1
		}
		switch {
		case e > 0:
			t := e - 1
			predStart[t] = int32(len(from))
			for _, f := range frontier {
				from = append(from, f)
				if add != nil {
					add(f, t)
				}
			}
			predEnd[t] = int32(len(from))
		case e < 0:
			t := -e - 1
			// Everything t's invoke saw completed now reaches later invokes through t.
			for _, f := range from[predStart[t]:predEnd[t]] {
				dominated[f] = true
			}
			live := frontier[:0]
			for _, f := range frontier {
				if !dominated[f] {
					live = append(live, f)
				}
			}
			frontier = append(live, t)
		}
	}
	return len(from)
}

// RealtimeGuide is the edge that stands for all of RealtimeEdges in a replay's
// guide (its order edges): a replay keeps real-time order through RealtimeGates
// instead, without the edges, which at a million transactions are millions (hundreds
// of megabytes of fresh memory, each page a fault) for one walk. IsRealtimeGuide tells
// it from a real edge.
func RealtimeGuide() Edge { return Edge{From: -1, To: -1, Kind: Realtime, Key: -1, Read: -1} }

// IsRealtimeGuide reports whether e is RealtimeGuide's stand-in, not an edge.
func (e *Edge) IsRealtimeGuide() bool { return e.Kind == Realtime && e.From < 0 }

// RealtimeGates gives the order of RealtimeEdges as thresholds: completed lists the
// :ok transactions that completed (and may be committed), by completion; gate[t] is
// how many of them completed before t was invoked (0 for a transaction without an
// invoke, and for those not committed). A transaction follows exactly
// completed[:gate[t]] in real time: RealtimeEdges is the transitive reduction of the
// same order.
func (p *Problem) RealtimeGates() (completed, gate []int32) {
	h := p.In.H
	for t := range h.Txns {
		if tx := &h.Txns[t]; tx.Status == history.OK && tx.Complete >= 0 && p.Commit[t] != NotCommitted {
			completed = append(completed, int32(t))
		}
	}
	// Txns are in completion order already; sorted anyway, stably, so that this never
	// depends on it.
	slices.SortStableFunc(completed, func(a, b int32) int { return int(h.Txns[a].Complete - h.Txns[b].Complete) })
	at := make([]int32, len(completed)) // completion positions, ascending
	for i, t := range completed {
		at[i] = h.Txns[t].Complete
	}
	gate = make([]int32, len(h.Txns))
	for t := range h.Txns {
		if inv := h.Txns[t].Invoke; inv >= 0 && p.Commit[t] != NotCommitted {
			i, _ := slices.BinarySearch(at, inv)
			gate[t] = int32(i)
		}
	}
	return completed, gate
}

// orderEdgeCount is how many edges ProcessEdges and RealtimeEdges return.
func (p *Problem) orderEdgeCount() int {
	h := p.In.H
	// Process edges join consecutive transactions of a process: one fewer than the
	// transactions of each process.
	var procs []int32
	n := 0
	for t := range h.Txns {
		if h.Txns[t].Process >= 0 && p.Commit[t] != NotCommitted {
			procs = append(procs, h.Txns[t].Process)
			n++
		}
	}
	slices.Sort(procs)
	for i := range procs {
		if i == 0 || procs[i] != procs[i-1] {
			n--
		}
	}
	return n + p.realtime(nil, nil)
}
