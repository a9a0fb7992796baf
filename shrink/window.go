package shrink

import (
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/prune"
)

// segment is a stretch (a, b] of a key's positions (counted from 1; a and b values
// before it and at its end) that, in every witness of the whole history the narrowing
// keeps, holds exactly the blocks of writers, all of them confined to it by their
// windows: no writer's block may lie on both sides of a or of b (rule 10, DESIGN.md,
// "Counterexamples").
type segment struct {
	a, b    int
	writers []int32 // the transactions (not :fail) whose blocks lie within it
	// overfull: its :ok writers append more values than it has positions, which no
	// witness allows (a pigeonhole of the order count, often): a place to start.
	overfull bool
	appends  int // the values its :ok writers append
}

// keySegments are one key's segments, and each writer's.
type keySegments struct {
	segs  []segment
	segOf map[int32]int // transaction -> index in segs
}

// windowSegments narrows the whole history's windows once, at the level of the
// model's cut row (nil when it has none), and splits each key into segments between
// its clean points.
func (s *shrinker) windowSegments() []keySegments {
	if s.segmentsDone {
		return s.segments
	}
	s.segmentsDone = true
	row := cutModels[s.model]
	if !row.confine {
		return nil
	}
	h := s.h
	var in *encode.Inference
	if s.reading == oneBase {
		in = encode.Infer(h)
	} else {
		in = encode.InferPerRead(h)
	}
	if len(in.Findings) > 0 {
		// The narrowing is proved for histories the inference finds nothing in; a
		// finding the model allows could leave windows it does not keep.
		return nil
	}
	// A quarter of the search's time at most (a 10K history's narrowing takes
	// seconds): windows narrowed less are still sound, only wider.
	opts := prune.Options{Level: row.level, Deadline: time.Now().Add(10 * time.Second)}
	if !s.deadline.IsZero() {
		opts.Deadline = time.Now().Add(time.Until(s.deadline) / 4)
	}
	res := prune.Run(in, opts)
	s.segments = segmentsOf(h, in, res.Win)
	return s.segments
}

// segmentsOf splits each key at its clean points: a count a of values such that every
// writer that is not :fail has its block either at or before a (start + length ≤ a)
// wherever its window lets it start, or after it (start ≥ a, or unobserved). Between
// two consecutive clean points lies a segment, with the writers confined to it.
func segmentsOf(h *history.History, in *encode.Inference, win *encode.Windows) []keySegments {
	out := make([]keySegments, len(h.Keys))
	for k := range in.Keys {
		key := &in.Keys[k]
		n := int32(len(key.Trace))
		if n == 0 || key.Bad {
			continue
		}
		// Each writer's placements span [minStart, maxEnd): its first allowed start to
		// its last one's end, or past every position (n+1) when it may be unobserved.
		// It lies on both sides of every a strictly inside: a is not clean there.
		diff := make([]int32, n+2)
		var minStart, maxEnd, txns, lens []int32
		for _, w := range key.Writers {
			wr := &in.Writers[w]
			if wr.Status == history.Fail {
				continue
			}
			lo, hi := win.Lo[w], min(win.Hi[w], n-1)
			first, last := lo, hi
			for first <= hi && !win.Allowed(w, first) {
				first++
			}
			for last >= first && !win.Allowed(w, last) {
				last--
			}
			end := last + (wr.End - wr.Start)
			if win.Hi[w] >= n || first > last {
				end = n + 1
			}
			if first > last {
				first = n
			}
			minStart, maxEnd, txns, lens = append(minStart, first), append(maxEnd, end), append(txns, wr.Txn), append(lens, wr.End-wr.Start)
			if from, to := first+1, min(end-1, n); from <= to {
				diff[from]++
				diff[to+1]--
			}
		}
		var clean []int32
		inside := int32(0)
		for a := int32(0); a <= n; a++ {
			inside += diff[a]
			if inside == 0 {
				clean = append(clean, a)
			}
		}
		ks := keySegments{segOf: map[int32]int{}}
		for i := 0; i+1 < len(clean); i++ {
			a, b := clean[i], clean[i+1]
			seg := segment{a: int(a), b: int(b)}
			apps := int32(0)
			for j := range minStart {
				if minStart[j] >= a && maxEnd[j] <= b {
					seg.writers = append(seg.writers, txns[j])
					if h.Txns[txns[j]].Status == history.OK {
						apps += lens[j]
					}
				}
			}
			seg.overfull, seg.appends = apps > b-a, int(apps)
			if len(seg.writers) == 0 {
				continue
			}
			for _, t := range seg.writers {
				ks.segOf[t] = len(ks.segs)
			}
			ks.segs = append(ks.segs, seg)
		}
		out[k] = ks
	}
	return out
}

// maxSeedWriters bounds the overfull segments overfullSeed starts from.
const maxSeedWriters = 32

// overfullSeed is a first candidate for an order count's violation that rule 10 can
// keep small: the writers of the smallest overfull segment, and every transaction
// that ran around them (as long again before and after), on their keys; nil when no
// segment is overfull.
func (s *shrinker) overfullSeed() []int32 {
	segs := s.windowSegments()
	var best *segment
	for k := range segs {
		for i := range segs[k].segs {
			if sg := &segs[k].segs[i]; sg.overfull && (best == nil || len(sg.writers) < len(best.writers)) {
				best = sg
			}
		}
	}
	if best == nil || len(best.writers) > maxSeedWriters {
		// A count over many writers keeps them all: the transactions around them are
		// most of the history, and checking them first only takes the time.
		return nil
	}
	h := s.h
	lo, hi := int32(-1), int32(-1)
	for _, t := range best.writers {
		tx := &h.Txns[t]
		end := tx.Complete
		if end < 0 {
			end = tx.Invoke
		}
		if lo < 0 || tx.Invoke < lo {
			lo = tx.Invoke
		}
		hi = max(hi, end)
	}
	width := hi - lo
	var out []int32
	for t := range h.Txns {
		tx := &h.Txns[t]
		if tx.Invoke <= hi+width && (tx.Complete < 0 || tx.Complete >= lo-width) {
			out = append(out, int32(t))
		}
	}
	if 2*len(out) > len(h.Txns) {
		return nil
	}
	return out
}
