package shrink

import (
	"slices"
	"strconv"

	"doppel/history"
)

// cand is a candidate cut of the original history: the transactions and keys it keeps
// and the reads it leaves out. Which other micro-ops go follows from these (build):
// ops on keys not kept, and per key whose writers are not all kept, the ops the shared
// prefix replaces (docs/DESIGN.md, "Counterexamples").
type cand struct {
	txns    []int32        // original transaction ids, ascending
	keys    []int32        // original key ids kept, ascending
	dropped map[int32]bool // read micro-ops (indexes into the original Ops) left out
}

func (c cand) withTxns(txns []int32) cand { return cand{txns: txns, keys: c.keys, dropped: c.dropped} }
func (c cand) withKeys(keys []int32) cand { return cand{txns: c.txns, keys: keys, dropped: c.dropped} }

// Prefix is a key whose list starts, in every kept read, with the same values that the
// kept transactions cannot have appended: the synthetic first transaction appends them
// in place of the writers left out.
type Prefix struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
	// Writers is how many of the original history's committed or possibly committed
	// appends to the key the cut leaves out (the prefix stands for some of them; the
	// rest lie beyond every kept read).
	Writers int `json:"writers_left_out"`
}

// built is a candidate made into a history.
type built struct {
	h        *history.History
	orig     []int32 // orig[i]: the original transaction of h.Txns[i]; -1: the synthetic one
	prefixes []Prefix
}

// keyOp is one micro-op of a kept transaction on one key.
type keyOp struct {
	txn int32 // original transaction
	op  int32 // index into the original Ops
}

// build makes c into a history, or reports false when c is not a sound cut (a key
// whose left-out writers no shared prefix can stand for).
func (s *shrinker) build(c cand) (*built, bool) {
	h := s.h
	keyAt := make(map[int32]int, len(c.keys)) // key -> index in c.keys
	for i, k := range c.keys {
		keyAt[k] = i
	}
	perKey := make([][]keyOp, len(c.keys))
	kept := make([]int, len(c.keys)) // appends of non-:fail kept transactions per key
	for _, t := range c.txns {
		tx := &h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			ki, ok := keyAt[h.Ops[i].Key]
			if !ok {
				continue
			}
			perKey[ki] = append(perKey[ki], keyOp{txn: t, op: i})
			if h.Ops[i].Kind == history.Append && tx.Status != history.Fail {
				kept[ki]++
			}
		}
	}
	removed := map[int32]bool{} // micro-ops of kept transactions left out
	for i := range c.dropped {
		removed[i] = true
	}
	var prefixes []Prefix
	var prefixVals [][]int32
	var prefixKeys []int32
	for ki, k := range c.keys {
		if kept[ki] == int(s.appends[k]) {
			continue // every writer of the key is kept: nothing to stand for
		}
		vals, ok := s.prefix(perKey[ki], removed)
		if !ok {
			return nil, false
		}
		if len(vals) > 0 {
			prefixKeys = append(prefixKeys, k)
			prefixVals = append(prefixVals, vals)
			prefixes = append(prefixes, Prefix{Key: h.Keys[k], Values: valueNames(h, vals)})
		}
		writers := int(s.appends[k])
		for _, ko := range perKey[ki] {
			if h.Ops[ko.op].Kind == history.Append && h.Txns[ko.txn].Status != history.Fail && !removed[ko.op] {
				writers--
			}
		}
		if len(vals) > 0 {
			prefixes[len(prefixes)-1].Writers = writers
		}
	}
	return s.assemble(c, keyAt, removed, prefixKeys, prefixVals, prefixes), true
}

// prefix decides the ops on one key whose writers are not all kept (ops: the kept
// transactions' micro-ops on it, grouped by transaction). Writers that are not pinned
// beyond the prefix lose their ops on the key (they are among those the prefix stands
// for); reads that the kept writers' pinned blocks cannot cover are left out (unless
// kept reads contradict each other: then the whole has no witness and nothing needs
// covering). It returns the prefix every kept read shares, or false when the reads
// disagree on it (the key must then keep every writer).
func (s *shrinker) prefix(ops []keyOp, removed map[int32]bool) ([]int32, bool) {
	h := s.h
	type txnOps struct {
		from, to int  // its ops are ops[from:to]
		pinned   bool // :ok, and its first kept op on the key is a known read
		apps     int  // its appends to the key
		out      bool // a writer the prefix stands for: its ops on the key are left out
	}
	var ts []txnOps
	for i, ko := range ops {
		if i == 0 || ops[i-1].txn != ko.txn {
			ts = append(ts, txnOps{from: i})
		}
		t := &ts[len(ts)-1]
		t.to = i + 1
		if h.Ops[ko.op].Kind == history.Append {
			t.apps++
		}
	}
	for i := range ts {
		t := &ts[i]
		for _, ko := range ops[t.from:t.to] {
			if !removed[ko.op] {
				op := &h.Ops[ko.op]
				t.pinned = h.Txns[ko.txn].Status == history.OK && op.Kind == history.Read && op.Known
				break
			}
		}
		t.out = t.apps > 0 && !t.pinned && h.Txns[ops[t.from].txn].Status != history.Fail
	}
	// seen is a read's length without the reader's own earlier appends: where a pinned
	// reader's own block starts, or how far the others' appends reach.
	seen := func(ko keyOp) int {
		own := 0
		for i := h.Txns[ko.txn].OpStart; i < ko.op; i++ {
			if o := &h.Ops[i]; o.Kind == history.Append && o.Key == h.Ops[ko.op].Key {
				own++
			}
		}
		op := &h.Ops[ko.op]
		return int(op.End-op.Start) - own
	}
	// contradiction reports whether kept reads of the key contradict each other, so
	// that the whole history has no witness: a transaction whose own reads see
	// different lengths besides its own appends, or fewer values than its own appends
	// (serially and under snapshot isolation, one transaction's reads of a key all see
	// one list before its own appends), or two reads whose values before their readers'
	// own appends are not prefixes of one list. It returns the values all those reads
	// start with (at most the shortest's).
	contradiction := func(ts []txnOps) ([]int32, bool) {
		var parts [][]int32 // what each kept read saw besides its reader's own appends
		found := false
		for i := range ts {
			if ts[i].out {
				continue
			}
			n := -1
			for _, ko := range ops[ts[i].from:ts[i].to] {
				op := &h.Ops[ko.op]
				if removed[ko.op] || op.Kind != history.Read || !op.Known || h.Txns[ko.txn].Status != history.OK {
					continue
				}
				l := seen(ko)
				if l < 0 || n >= 0 && l != n {
					found = true
				}
				n = l
				if l >= 0 {
					parts = append(parts, h.ReadValues[op.Start:op.Start+int32(l)])
				}
			}
		}
		var common []int32
		for i, part := range parts {
			if i == 0 {
				common = part
				continue
			}
			q := 0
			for q < len(common) && q < len(part) && common[q] == part[q] {
				q++
			}
			if q < len(common) && q < len(part) {
				found = true // neither is a prefix of the other
			}
			common = common[:q]
		}
		return common, found
	}
	// counted: a read that constrains the cut (known, of an :ok transaction, kept).
	counted := func(t *txnOps, ko keyOp) bool {
		op := &h.Ops[ko.op]
		return !t.out && !removed[ko.op] && op.Kind == history.Read && op.Known && h.Txns[ko.txn].Status == history.OK
	}
	// bounds returns the shortest and longest counted read (-1 if none).
	bounds := func() (p, longest int, ok bool) {
		p, longest = -1, -1
		for i := range ts {
			for _, ko := range ops[ts[i].from:ts[i].to] {
				if !counted(&ts[i], ko) {
					continue
				}
				n := seen(ko)
				if n < 0 {
					return 0, 0, false
				}
				if p < 0 || n < p {
					p = n
				}
				longest = max(longest, n)
			}
		}
		return p, longest, true
	}
	if prefix, ok := contradiction(ts); ok {
		// Kept reads that contradict each other: the whole has no witness, so the cut
		// needs no cover; it keeps those reads as they are.
		for i := range ts {
			if ts[i].out {
				for _, ko := range ops[ts[i].from:ts[i].to] {
					removed[ko.op] = true
				}
			}
		}
		return prefix, true
	}
	for {
		p, longest, ok := bounds()
		if !ok {
			return nil, false
		}
		if p < 0 { // no read left: every writer's appends can go
			for i := range ts {
				ts[i].out = ts[i].apps > 0 && h.Txns[ops[ts[i].from].txn].Status != history.Fail
			}
			break
		}
		// How far past the prefix the kept writers' pinned blocks cover the list without a
		// gap: no left-out writer can lie there.
		var blocks [][2]int // [start, end], 1-based
		for i := range ts {
			if t := &ts[i]; !t.out && t.apps > 0 && t.pinned {
				st := seen(ops[t.from+firstKept(ops[t.from:t.to], removed)]) + 1
				blocks = append(blocks, [2]int{st, st + t.apps - 1})
			}
		}
		slices.SortFunc(blocks, func(a, b [2]int) int { return a[0] - b[0] })
		cover := p
		for _, b := range blocks {
			if b[0] <= cover+1 {
				cover = max(cover, b[1])
			}
		}
		if longest <= cover {
			break
		}
		// Reads reaching beyond the cover go; a pinned writer whose pinning read goes is
		// left out.
		for i := range ts {
			t := &ts[i]
			for j, ko := range ops[t.from:t.to] {
				if counted(t, ko) && seen(ko) > cover {
					if t.apps > 0 && j == firstKept(ops[t.from:t.to], removed) {
						t.out = true
					} else {
						removed[ko.op] = true
					}
				}
			}
		}
	}
	for i := range ts {
		if ts[i].out {
			for _, ko := range ops[ts[i].from:ts[i].to] {
				removed[ko.op] = true
			}
		}
	}
	// The prefix: the values every counted read starts with.
	p, _, _ := bounds()
	if p <= 0 {
		return nil, true
	}
	var prefix []int32
	for i := range ts {
		for _, ko := range ops[ts[i].from:ts[i].to] {
			if !counted(&ts[i], ko) {
				continue
			}
			op := &h.Ops[ko.op]
			got := h.ReadValues[op.Start : op.Start+int32(p)]
			if prefix == nil {
				prefix = got
			} else if !slices.Equal(prefix, got) {
				return nil, false
			}
		}
	}
	return prefix, true
}

// firstKept is the position in ops of the first op not removed (-1 if none).
func firstKept(ops []keyOp, removed map[int32]bool) int {
	for i, ko := range ops {
		if !removed[ko.op] {
			return i
		}
	}
	return -1
}

// assemble writes the cut as a history: the synthetic transaction first (when a key has
// a prefix), then the kept transactions with their kept ops, in the original order,
// with the original :index, line and status, event positions renumbered in order.
// Transactions left without ops go.
func (s *shrinker) assemble(c cand, keyAt map[int32]int, removed map[int32]bool, prefixKeys []int32, prefixVals [][]int32, prefixes []Prefix) *built {
	h := s.h
	out := &history.History{Source: h.Source + " (counterexample)"}
	b := &built{h: out, prefixes: prefixes}
	keyID, valID, procID := map[int32]int32{}, map[int32]int32{}, map[int32]int32{}
	intern := func(m map[int32]int32, table *[]string, names []string, id int32) int32 {
		if n, ok := m[id]; ok {
			return n
		}
		n := int32(len(*table))
		m[id] = n
		*table = append(*table, names[id])
		return n
	}
	// Positions: the synthetic transaction takes 0 and 1, the others keep their order.
	var positions []int32
	type kept struct {
		t        int32
		from, to int
	}
	var txns []kept
	var ops []history.MicroOp
	var reads []int32
	addOp := func(op *history.MicroOp, key int32) {
		m := history.MicroOp{Kind: op.Kind, Known: op.Known, Key: intern(keyID, &out.Keys, h.Keys, key)}
		if op.Kind == history.Append {
			m.Value = intern(valID, &out.Values, h.Values, op.Value)
		} else if op.Known {
			m.Start = int32(len(reads))
			for _, v := range h.ReadValues[op.Start:op.End] {
				reads = append(reads, intern(valID, &out.Values, h.Values, v))
			}
			m.End = int32(len(reads))
		}
		ops = append(ops, m)
	}
	for i, k := range prefixKeys {
		for _, v := range prefixVals[i] {
			op := history.MicroOp{Kind: history.Append, Key: k, Value: v}
			addOp(&op, k)
		}
	}
	synthetic := len(ops)
	for _, t := range c.txns {
		tx := &h.Txns[t]
		from := len(ops)
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			if _, ok := keyAt[op.Key]; ok && !removed[i] {
				addOp(op, op.Key)
			}
		}
		if len(ops) == from {
			continue
		}
		txns = append(txns, kept{t: t, from: from, to: len(ops)})
		for _, p := range [2]int32{tx.Invoke, tx.Complete} {
			if p >= 0 {
				positions = append(positions, p)
			}
		}
	}
	slices.Sort(positions)
	base := int32(0)
	if synthetic > 0 {
		base = 2
		maxIndex, maxProc := int64(-1), int64(-1)
		for i := range h.Txns {
			maxIndex = max(maxIndex, h.Txns[i].Index)
		}
		for _, p := range h.Processes {
			if n, err := strconv.ParseInt(p, 10, 64); err == nil {
				maxProc = max(maxProc, n)
			}
		}
		index := int64(-1)
		if maxIndex >= 0 {
			index = maxIndex + 1
		}
		out.Processes = append(out.Processes, strconv.FormatInt(maxProc+1, 10))
		out.Txns = append(out.Txns, history.Txn{Status: history.OK, Process: 0, Invoke: 0, Complete: 1,
			Index: index, Line: 0, OpStart: 0, OpEnd: int32(synthetic)})
		b.orig = append(b.orig, -1)
		out.Events = 2
	}
	newPos := func(p int32) int32 {
		if p < 0 {
			return p
		}
		i, _ := slices.BinarySearch(positions, p)
		return base + int32(i)
	}
	for _, k := range txns {
		tx := h.Txns[k.t]
		tx.Invoke, tx.Complete = newPos(tx.Invoke), newPos(tx.Complete)
		tx.OpStart, tx.OpEnd = int32(k.from), int32(k.to)
		if tx.Process >= 0 {
			tx.Process = intern(procID, &out.Processes, h.Processes, tx.Process)
		}
		out.Txns = append(out.Txns, tx)
		b.orig = append(b.orig, k.t)
	}
	out.Ops, out.ReadValues = ops, reads
	out.Events += len(positions)
	return b
}

func valueNames(h *history.History, vals []int32) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = h.Values[v]
	}
	return out
}
