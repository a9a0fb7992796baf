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
	opts := prune.Options{Level: row.level, Deadline: s.deadline}
	if opts.Deadline.IsZero() {
		opts.Deadline = time.Now().Add(10 * time.Second)
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
		var minStart, maxEnd, txns []int32
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
			minStart, maxEnd, txns = append(minStart, first), append(maxEnd, end), append(txns, wr.Txn)
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
			for j := range minStart {
				if minStart[j] >= a && maxEnd[j] <= b {
					seg.writers = append(seg.writers, txns[j])
				}
			}
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
