package check

import (
	"doppel/encode"
	"doppel/history"
)

// A serial replay in snapshot mode proves snapshot isolation for histories that are
// serializable but for a few transactions that read an older state (an injected write
// skew), where siSchedule's greedy start and commit choices get lost among duplicate
// values long before the anomaly. It is the serial replay (schedule.go) with its slot
// waits, deferrals and repairs, and one relaxation: a transaction whose reads all show
// the lists of one earlier state, its appended keys unchanged since, may run as if it
// had taken its snapshot then (first-committer-wins holds: nobody else appended to its
// keys in between). Like a stale per-read transaction it is kept aside until the
// replay is stuck. The order and the snapshots become start and commit events, which
// count only after verifySI accepts them.

// newSnapshotReplay is newReplay in snapshot mode.
func newSnapshotReplay(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge) *replay {
	r := newReplay(h, in, commit, orderEdges)
	r.snapshot = true
	r.startStep = make([]int32, len(r.traceAt))
	r.endStep = make([]int32, len(r.traceAt))
	r.lastWrite = make([]int32, len(in.Keys))
	r.snapAt = make([]int32, r.n)
	// A read before the transaction's own append to the key competes for the block
	// right after it (strandsPerRead).
	r.pendingRW = make([]int32, len(r.pending))
	r.readWrites = make([]bool, len(h.Ops))
	for i := range in.Reads {
		rd := &in.Reads[i]
		if s := r.readSlot[rd.Op]; s >= 0 && rd.Own == 0 && rd.Writes {
			r.readWrites[rd.Op] = true
			r.pendingRW[s]++
		}
	}
	return r
}

// takeSnapshot records, before t's appends are installed, the state t's snapshot
// shows (the latest one when its reads are all current) and where its blocks start.
func (r *replay) takeSnapshot(t int32) {
	now := int32(len(r.order)) - 1 // install appended t already
	snap, old := int32(0), false
	if r.h.Txns[t].Status == history.OK {
		tx := &r.h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			s := r.readSlot[i]
			if s < 0 {
				continue
			}
			k := r.h.Ops[i].Key
			if q := s - r.keys[k].base; q < r.keys[k].pos {
				snap, old = max(snap, r.endStep[s]), true
			} else {
				snap = max(snap, r.lastWrite[k])
			}
		}
	}
	for _, w := range r.in.TxnWriters(t) {
		k := r.in.Writers[w].Key
		snap = max(snap, r.lastWrite[k])
		if p := r.keys[k].pos; p <= r.keys[k].n {
			r.startStep[r.keys[k].base+p] = now + 1
		}
	}
	if !old {
		snap = now
	}
	r.snapAt[t] = snap
}

// stepInstalled records, after t's appends are installed, where its blocks end.
func (r *replay) stepInstalled(t int32) {
	step := int32(len(r.order))
	for _, w := range r.in.TxnWriters(t) {
		k := r.in.Writers[w].Key
		r.lastWrite[k] = step
		if p := r.keys[k].pos; p <= r.keys[k].n {
			r.endStep[r.keys[k].base+p] = step
		}
	}
}

// snapshotEvents turns a completed snapshot-mode replay into start and commit events:
// each transaction starts right after the commits its snapshot shows.
func (r *replay) snapshotEvents() []siEvent {
	startsAt := make([]int32, len(r.order)+1) // CSR: transactions by snapshot state
	for _, t := range r.order {
		startsAt[r.snapAt[t]+1]++
	}
	for i := range r.order {
		startsAt[i+1] += startsAt[i]
	}
	starts := make([]int32, len(r.order))
	fill := append([]int32(nil), startsAt[:len(r.order)]...)
	for _, t := range r.order {
		starts[fill[r.snapAt[t]]] = t
		fill[r.snapAt[t]]++
	}
	events := make([]siEvent, 0, 2*len(r.order))
	for i, t := range r.order {
		for _, u := range starts[startsAt[i]:startsAt[i+1]] {
			events = append(events, siEvent{u, false})
		}
		events = append(events, siEvent{t, true})
	}
	return events
}

// scheduleSnapshot replays h serially in snapshot mode (guided by orderEdges, ready
// transactions by midpoint or completion), repaired when stuck unless !repair. It
// returns the events and how many repairs it took.
func scheduleSnapshot(h *history.History, in *encode.Inference, commit []encode.Commit, orderEdges []encode.Edge, byCompletion, repair bool, stop func() bool) ([]siEvent, bool, int) {
	r := newSnapshotReplay(h, in, commit, orderEdges)
	r.byCompletion, r.stop = byCompletion, stop
	if !repair {
		if _, ok := r.run(); !ok {
			return nil, false, 0
		}
		return r.snapshotEvents(), true, 0
	}
	done, n, ok := r.runRepaired(stop)
	if !ok {
		return nil, false, n
	}
	return done.r.snapshotEvents(), true, n
}
