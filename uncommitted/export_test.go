package uncommitted

import "doppel/history"

// SearchDecides reports whether the search over attributions alone (no serial
// search, no caller's proof) decides x within polls polls of its stop.
func SearchDecides(x *Index, process, realtime bool, polls int) bool {
	n := 0
	d := &decider{h: x.h, n: len(x.h.Txns), stop: func() bool { n++; return n > polls }}
	d.orderEdges(process, realtime)
	for i, from := range x.fixFrom {
		d.push(from, x.fixEdge[i])
	}
	if d.findCycle() != nil {
		return true
	}
	d.from = make([]int32, len(d.adj))
	d.fromEdge = make([]edge, len(d.adj))
	d.stamp = make([]uint32, len(d.adj))
	d.initOrder()
	d.search(x.open, 0)
	return !d.stopped
}

// LazyListing lists the choices of the first state of a lazy runs search on h (real
// time on), with stop as its limits, and returns the work it did and whether stop
// stopped it.
func LazyListing(h *history.History, stop func() bool) (work int64, stopped, ok bool) {
	s := newRunsSearch(h, true, stop)
	if s == nil {
		return 0, false, false
	}
	s.narrow()
	s.lazy = true
	s.Candidates(nil)
	return s.work, s.stopped, true
}
