package shrink

import (
	"slices"

	"doppel/history"
)

// Read uncommitted's cut (docs/DESIGN.md, "Counterexamples", rule 8). Its edges come
// from each key's version order, one of the key's longest reads, with each position
// taken by an append of that value by any transaction, and join only committed
// transactions; every read counts for duplicate-elements. So a cut keeps, for each key,
// a read of every distinct longest list of the whole (its candidates for the version
// order are then the whole's) and no other read, or only one read that shows a value
// more often than the whole appends it; one :fail synthetic transaction appends what
// the left-out writers may have to stand for (it can take any position, and a
// transaction that did not commit has no edge), and :ok fills stand for chains of
// committed writers left out.

// indexUncommitted counts the appends per (key, value), picks one read of each
// distinct longest list per key (known reads of :ok transactions, version reads
// included), and marks the reads that show a value more often than the key was
// appended it.
func (s *shrinker) indexUncommitted() {
	h := s.h
	s.allCount = map[[2]int32]int32{}
	s.notOK = map[[2]int32]int32{}
	s.uLongest = make([][]int32, len(h.Keys))
	s.readerOf = map[int32]int32{}
	s.listOf = map[int32]int{}
	s.excessRead = map[int32]bool{}
	read := func(tx *history.Txn, op *history.MicroOp) bool {
		return tx.Status == history.OK && op.Kind == history.Read && op.Known
	}
	for t := range h.Txns {
		tx := &h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			switch {
			case op.Kind == history.Append:
				s.allCount[[2]int32{op.Key, op.Value}]++
				if tx.Status != history.OK {
					s.notOK[[2]int32{op.Key, op.Value}]++
				}
			case read(tx, op) && op.End > op.Start:
				ls := s.uLongest[op.Key]
				switch n := op.End - op.Start; {
				case len(ls) == 0 || n > h.Ops[ls[0]].End-h.Ops[ls[0]].Start:
					s.uLongest[op.Key] = []int32{i}
				case n == h.Ops[ls[0]].End-h.Ops[ls[0]].Start:
					if !slices.ContainsFunc(ls, func(j int32) bool { return slices.Equal(h.ReadList(&h.Ops[j]), h.ReadList(op)) }) {
						s.uLongest[op.Key] = append(ls, i)
					}
				}
				s.readerOf[i] = int32(t)
			}
		}
	}
	count := map[int32]int32{}
	for t := range h.Txns {
		tx := &h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			if !read(tx, op) {
				continue
			}
			clear(count)
			for _, v := range h.ReadList(op) {
				if count[v]++; count[v] > s.allCount[[2]int32{op.Key, v}] {
					s.excessRead[i] = true
				}
			}
			if ls := s.uLongest[op.Key]; len(ls) > 0 && op.End-op.Start == h.Ops[ls[0]].End-h.Ops[ls[0]].Start {
				s.listOf[i] = slices.IndexFunc(ls, func(j int32) bool { return slices.Equal(h.ReadList(&h.Ops[j]), h.ReadList(op)) })
			}
		}
	}
}

// buildUncommitted makes c into a history for read uncommitted. Every append of a kept
// transaction to a kept key stays; of the reads, per key, one of each distinct longest
// list (when c leaves out its reader, the reader stays with that read alone, a stub
// whose appends the synthetic writers stand for; when c drops it, it stays), or, when
// a kept read shows a value more often than the whole appends it (duplicate-elements,
// garbage-read: no attribution of the whole at all), that read alone.
func (s *shrinker) buildUncommitted(c cand, keyAt map[int32]int, perKey [][]keyOp, removed map[int32]bool) (*built, bool) {
	h := s.h
	var prefixes []Prefix
	var prefixVals [][]int32
	var prefixKeys []int32
	inCut := make(map[int32]bool, len(c.txns))
	for _, t := range c.txns {
		inCut[t] = true
	}
	stubs := map[int32]map[int32]bool{} // reader left out -> the longest reads it keeps
	for ki, k := range c.keys {
		kept := map[int32]int32{}
		writers := int(s.appends[k])
		excess := int32(-1)
		for _, ko := range perKey[ki] {
			op := &h.Ops[ko.op]
			switch {
			case op.Kind == history.Append:
				kept[op.Value]++
				if h.Txns[ko.txn].Status != history.Fail {
					writers--
				}
			case excess < 0 && s.excessRead[ko.op] && !removed[ko.op]:
				excess = ko.op
			}
		}
		var reads []int32 // the reads the cut keeps
		if excess >= 0 {
			reads = []int32{excess}
		} else {
			for j, l := range s.uLongest[k] {
				rep := int32(-1)
				for _, ko := range perKey[ki] {
					if list, ok := s.listOf[ko.op]; ok && list == j && (rep < 0 || removed[rep] && !removed[ko.op]) {
						rep = ko.op
					}
				}
				if rep < 0 {
					rep = l
					t := s.readerOf[l]
					if stubs[t] == nil {
						stubs[t] = map[int32]bool{}
					}
					stubs[t][l] = true
				}
				reads = append(reads, rep)
			}
		}
		for _, ko := range perKey[ki] {
			if h.Ops[ko.op].Kind == history.Read {
				removed[ko.op] = !slices.Contains(reads, ko.op)
			}
		}
		if len(reads) == 0 {
			continue // no read of the key at all: no version order, no edge
		}
		// A run of the version order's positions whose values only :ok transactions
		// left out append, between two values kept transactions append (or at its
		// end), goes to one :ok fill, concurrent with everything: in every
		// attribution of the whole those positions' writers are committed and chained
		// by ww edges, which the fill's edges stand for; the :fail writer would break
		// the chain.
		var fills []Fill
		filled := map[int32]int32{}
		if excess < 0 && len(s.uLongest[k]) == 1 {
			l := h.ReadList(&h.Ops[s.uLongest[k][0]])
			fillable := func(v int32) bool { return s.notOK[[2]int32{k, v}] == 0 && kept[v] == 0 }
			// unplaced: a kept transaction appends a value more often than L shows it,
			// so some append of it is in no position and the run at L's end has an
			// edge out; else a fill there is on no cycle.
			unplaced := func(l []int32) bool {
				occ := map[int32]int32{}
				for _, v := range l {
					occ[v]++
				}
				for v := range kept {
					if s.allCount[[2]int32{k, v}] > occ[v] {
						return true
					}
				}
				return false
			}
			for q := 0; q < len(l); {
				if !fillable(l[q]) {
					q++
					continue
				}
				e := q
				for e < len(l) && fillable(l[e]) {
					e++
				}
				if q > 0 && kept[l[q-1]] > 0 && (e < len(l) && kept[l[e]] > 0 || e == len(l) && unplaced(l)) {
					fills = append(fills, Fill{Position: q + 1, vals: l[q:e], end: e})
					for _, v := range l[q:e] {
						filled[v]++
					}
				}
				q = e
			}
		}
		// Each value as often as a kept read shows it, at most as often as the whole's
		// appends the cut leaves out (and the fills do not append): every version order
		// of the whole can be placed, and a read shows a value more often than the cut
		// appends it only if it does in the whole.
		need := map[int32]int32{}
		for _, r := range reads {
			count := map[int32]int32{}
			for _, v := range h.ReadList(&h.Ops[r]) {
				count[v]++
				need[v] = max(need[v], count[v])
			}
		}
		var vals []int32
		added := map[int32]int32{}
		for _, r := range reads {
			for _, v := range h.ReadList(&h.Ops[r]) {
				if added[v] < min(need[v], s.allCount[[2]int32{k, v}]-kept[v]-filled[v]) {
					added[v]++
					vals = append(vals, v)
				}
			}
		}
		if len(vals) > 0 || len(fills) > 0 {
			for i := range fills {
				fills[i].Values = valueNames(h, fills[i].vals)
			}
			prefixKeys = append(prefixKeys, k)
			prefixVals = append(prefixVals, vals)
			prefixes = append(prefixes, Prefix{Key: h.Keys[k], Values: valueNames(h, vals), Writers: writers, Fills: fills, Excess: excess >= 0, Failed: true})
		}
	}
	if len(stubs) > 0 {
		txns := slices.Clone(c.txns)
		for t, keep := range stubs {
			txns = append(txns, t)
			for i := h.Txns[t].OpStart; i < h.Txns[t].OpEnd; i++ {
				removed[i] = !keep[i]
			}
		}
		slices.Sort(txns)
		c = c.withTxns(txns)
	}
	return s.assemble(c, keyAt, removed, prefixKeys, prefixVals, prefixes, history.Fail), true
}
