package shrink

import (
	"slices"

	"doppel/history"
)

// Read uncommitted's cut (docs/DESIGN.md, "Counterexamples", rule 8). Its edges come
// from each key's version order, one of the key's longest reads, with each position
// taken by an append of that value by any transaction, and join only committed
// transactions; every read counts for duplicate-elements. So a cut keeps, for each key
// it keeps a read of, a read of every distinct longest list of the whole (its
// candidates for the version order are then the whole's), and one :fail synthetic
// transaction appends what the left-out writers may have to stand for: it can take
// any position, and a transaction that did not commit has no edge.

// indexUncommitted counts every append per (key, value), :fail ones too, and picks one
// read of each distinct longest list per key (known reads of :ok transactions, version
// reads included).
func (s *shrinker) indexUncommitted() {
	h := s.h
	s.allCount = map[[2]int32]int32{}
	s.uLongest = make([][]int32, len(h.Keys))
	s.readerOf = map[int32]int32{}
	for t := range h.Txns {
		tx := &h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			switch {
			case op.Kind == history.Append:
				s.allCount[[2]int32{op.Key, op.Value}]++
			case tx.Status == history.OK && op.Known && op.End > op.Start:
				s.readerOf[i] = int32(t)
				ls := s.uLongest[op.Key]
				switch n := op.End - op.Start; {
				case len(ls) == 0 || n > h.Ops[ls[0]].End-h.Ops[ls[0]].Start:
					s.uLongest[op.Key] = []int32{i}
				case n == h.Ops[ls[0]].End-h.Ops[ls[0]].Start:
					if !slices.ContainsFunc(ls, func(j int32) bool { return slices.Equal(h.ReadList(&h.Ops[j]), h.ReadList(op)) }) {
						s.uLongest[op.Key] = append(ls, i)
					}
				}
			}
		}
	}
}

// buildUncommitted makes c into a history for read uncommitted. Every op of a kept
// transaction on a kept key stays unless c drops it (a read), and so does every
// distinct longest list of a kept key (unless a kept read shows a value more often than
// the whole appends it): when c leaves out its reader, the reader stays with that read
// alone (a stub: its other ops go, the :fail writer standing for its appends), and a
// dropped longest read stays. The cut's candidates for each version order are then the
// whole's.
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
		var reads []int32 // the kept known reads of :ok transactions
		kept := map[int32]int32{}
		writers := int(s.appends[k])
		for _, ko := range perKey[ki] {
			op := &h.Ops[ko.op]
			switch {
			case op.Kind == history.Append:
				kept[op.Value]++
				if h.Txns[ko.txn].Status != history.Fail {
					writers--
				}
			case op.Known && h.Txns[ko.txn].Status == history.OK && !removed[ko.op]:
				reads = append(reads, ko.op)
			}
		}
		// A read that shows a value more often than the whole appends it
		// (duplicate-elements, garbage-read) holds in every attribution of the whole:
		// the cut need not keep the whole's version orders.
		excess := false
		for _, r := range reads {
			count := map[int32]int32{}
			for _, v := range h.ReadList(&h.Ops[r]) {
				if count[v]++; count[v] > s.allCount[[2]int32{k, v}] {
					excess = true
				}
			}
		}
		if !excess {
			for _, l := range s.uLongest[k] {
				if slices.ContainsFunc(reads, func(r int32) bool { return slices.Equal(h.ReadList(&h.Ops[r]), h.ReadList(&h.Ops[l])) }) {
					continue
				}
				t := s.readerOf[l]
				if inCut[t] {
					delete(removed, l) // a dropped longest read stays
				} else {
					if stubs[t] == nil {
						stubs[t] = map[int32]bool{}
					}
					stubs[t][l] = true
				}
				reads = append(reads, l)
			}
		}
		if len(reads) == 0 {
			continue // no read of the key at all: no version order, no edge
		}
		// Each value as often as some kept read shows it, at most as often as the
		// whole's appends the cut leaves out: every version order of the whole can be
		// placed, no read shows a value more often than the cut appends it unless it
		// does in the whole.
		need := map[int32]int32{}
		for _, r := range reads {
			count := map[int32]int32{}
			for _, v := range h.ReadList(&h.Ops[r]) {
				count[v]++
				need[v] = max(need[v], count[v])
			}
		}
		// Values in the order the longest kept read shows them, then the others'.
		slices.SortStableFunc(reads, func(a, b int32) int { return int((h.Ops[b].End - h.Ops[b].Start) - (h.Ops[a].End - h.Ops[a].Start)) })
		var vals []int32
		added := map[int32]int32{}
		for _, r := range reads {
			for _, v := range h.ReadList(&h.Ops[r]) {
				if added[v] < min(need[v], s.allCount[[2]int32{k, v}]-kept[v]) {
					added[v]++
					vals = append(vals, v)
				}
			}
		}
		if len(vals) > 0 {
			prefixKeys = append(prefixKeys, k)
			prefixVals = append(prefixVals, vals)
			prefixes = append(prefixes, Prefix{Key: h.Keys[k], Values: valueNames(h, vals), Writers: writers, Excess: excess, Failed: true})
		}
	}
	if len(stubs) > 0 {
		txns := slices.Clone(c.txns)
		for t, keep := range stubs {
			txns = append(txns, t)
			for i := h.Txns[t].OpStart; i < h.Txns[t].OpEnd; i++ {
				if keep[i] {
					delete(removed, i) // a longest read stays, dropped or not
				} else {
					removed[i] = true
				}
			}
		}
		slices.Sort(txns)
		c = c.withTxns(txns)
	}
	return s.assemble(c, keyAt, removed, prefixKeys, prefixVals, prefixes, history.Fail), true
}
