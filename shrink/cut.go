package shrink

import (
	"slices"
	"strconv"

	"doppel/history"
	"doppel/internal/slicesx"
)

// cand is a candidate cut of the original history: the transactions and keys it keeps
// and the reads it leaves out. Which other micro-ops go follows from these (build):
// ops on keys not kept, and per key whose writers are not all kept, the ops the shared
// prefix replaces (docs/DESIGN.md, "Counterexamples").
type cand struct {
	txns    []int32        // original transaction ids, ascending
	keys    []int32        // original key ids kept, ascending
	dropped map[int32]bool // read micro-ops (indexes into the original Ops) left out
	// vals chooses, per key, the values V whose writers rule 9 keeps by their values
	// (docs/DESIGN.md, "Counterexamples"); a key without an entry takes the values of
	// the writers rule 4 would leave out.
	vals map[int32][]int32
	// confine: rule 10 keeps the unpinned writers of segments the cut keeps whole
	// (the search turns it on only where it pays, Shrink's start).
	confine bool
}

func (c cand) withTxns(txns []int32) cand {
	return cand{txns: txns, keys: c.keys, dropped: c.dropped, vals: c.vals, confine: c.confine}
}
func (c cand) withKeys(keys []int32) cand {
	return cand{txns: c.txns, keys: keys, dropped: c.dropped, vals: c.vals, confine: c.confine}
}

// withVals is c with V chosen for key k.
func (c cand) withVals(k int32, vals []int32) cand {
	m := make(map[int32][]int32, len(c.vals)+1)
	for key, v := range c.vals {
		m[key] = v
	}
	m[k] = vals
	return cand{txns: c.txns, keys: c.keys, dropped: c.dropped, vals: m, confine: c.confine}
}

// Prefix is a key whose list starts, in every kept read, with the same values that the
// kept transactions cannot have appended: the synthetic first transaction appends them
// in place of the writers left out.
type Prefix struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
	// Writers is how many of the original history's committed or possibly committed
	// appends to the key the cut leaves out (the prefix and the fills stand for some of
	// them; the rest lie beyond every kept read).
	Writers int `json:"writers_left_out"`
	// Fills are the runs of positions between the prefix and the longest kept read that
	// no kept writer covers.
	Fills []Fill `json:"fills,omitempty"`
	// ByValue: the values whose writers rule 9 keeps by their values: every writer
	// of them is in the cut, unpinned ones included, and the fills cover only
	// positions that show other values.
	ByValue []string `json:"kept_by_value,omitempty"`
	// Confined: the stretches of positions whose writers rule 10 keeps, unpinned ones
	// included: in every witness of the whole that its narrowing keeps, each holds
	// exactly the blocks of those writers, so no fill covers it.
	Confined []Span `json:"kept_by_window,omitempty"`
	// Excess: a kept read shows a value more often than the whole history appends it to
	// the key (duplicate-elements), so Values are what the kept reads start with less
	// the occurrences past that count: the cut appends each value as often as the whole.
	Excess bool `json:"excess,omitempty"`
	// Failed: the synthetic transaction that appends Values is :fail (read
	// uncommitted): its appends can take the left-out writers' positions in a key's
	// version order, and a transaction that did not commit has no edge.
	Failed bool `json:"failed,omitempty"`
}

// Span is a stretch of positions of a key, From to To, counted from 1.
type Span struct {
	From int `json:"from"`
	To   int `json:"to"`
	// Writers are the :index of the transactions whose blocks make it up (rule 10),
	// and Appends the values its :ok ones append: more than To-From+1 is the order count's
	// pigeonhole, which no attribution of the whole allows.
	Writers []int64 `json:"writers,omitempty"`
	Appends int     `json:"appends,omitempty"`
}

// Fill is a run of positions of a key, past its prefix, that no kept writer's pinned
// block covers: one synthetic transaction, invoked before and completed after every
// other event, appends Values there in place of the writers left out.
type Fill struct {
	Position int      `json:"position"` // of the first value, counted from 1
	Values   []string `json:"values"`

	vals []int32
	end  int
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
	if s.reading == uncommitted {
		return s.buildUncommitted(c, keyAt, perKey, removed)
	}
	// Per read, a read that misses its transaction's own appends (a version read)
	// stays: on a key whose writers are all kept the cut's list is the whole's, and on
	// the others prefix counts it as a kept read (DESIGN.md, "Counterexamples", rule
	// 4's version reads).
	if s.firstReads {
		s.keepFirstReads(c.txns, keyAt, removed)
	}
	var prefixes []Prefix
	var prefixVals [][]int32
	var prefixKeys []int32
	for ki, k := range c.keys {
		if kept[ki] == int(s.appends[k]) && c.vals[k] == nil {
			continue // every writer of the key is kept: nothing to stand for
		}
		vals, fills, excess, byValue, confined, ok := s.prefix(perKey[ki], removed, c.vals[k], c.confine)
		if !ok {
			return nil, false
		}
		writers := int(s.appends[k])
		for _, ko := range perKey[ki] {
			if h.Ops[ko.op].Kind == history.Append && h.Txns[ko.txn].Status != history.Fail && !removed[ko.op] {
				writers--
			}
		}
		if len(vals) > 0 || len(fills) > 0 || excess || len(byValue) > 0 || len(confined) > 0 {
			for i := range fills {
				fills[i].Values = valueNames(h, fills[i].vals)
			}
			prefixKeys = append(prefixKeys, k)
			prefixVals = append(prefixVals, vals)
			prefixes = append(prefixes, Prefix{Key: h.Keys[k], Values: valueNames(h, vals), Writers: writers, Fills: fills, Excess: excess,
				ByValue: valueNames(h, byValue), Confined: confined})
		}
	}
	return s.assemble(c, keyAt, removed, prefixKeys, prefixVals, prefixes, history.OK), true
}

// prefix decides the ops on one key whose writers are not all kept (ops: the kept
// transactions' micro-ops on it, grouped by transaction). Writers that are not pinned
// beyond the prefix lose their ops on the key (they are among those the prefix stands
// for); reads that the kept writers' pinned blocks cannot cover are left out (unless
// kept reads contradict each other: then the whole has no witness and nothing needs
// covering). It returns the prefix every kept read shares, or false when the reads
// disagree on it (the key must then keep every writer). vset is the key's V of rule 9
// (nil: the values of the writers rule 4 would leave out); byValue lists V when rule 9
// applies (sorted), nil otherwise; confined lists the segments whose writers rule 10
// keeps.
func (s *shrinker) prefix(ops []keyOp, removed map[int32]bool, vset []int32, confine bool) (prefixVals []int32, fills []Fill, excess bool, byValue []int32, confined []Span, ok bool) {
	h := s.h
	type txnOps struct {
		from, to int  // its ops are ops[from:to]
		pin      int  // its first known kept read (:ok only), which pins its block; -1 if none
		start    int  // where its block starts in every witness (1-based), 0 if unknown
		apps     int  // its appends to the key
		out      bool // a writer the prefix stands for: its ops on the key are left out
		late     int  // unpinned, per read: its longest kept read before its appends (-1 if none)
		seg      int  // unpinned, kept by rule 10: its segment (-1 if none)
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
		t.pin = -1
		for j, ko := range ops[t.from:t.to] {
			if op := &h.Ops[ko.op]; !removed[ko.op] && h.Txns[ko.txn].Status == history.OK && op.Kind == history.Read && op.Known && s.pins(ko.txn, ko.op) {
				t.pin = t.from + j
				break
			}
		}
		if t.apps > 0 && t.pin < 0 && h.Txns[ops[t.from].txn].Status != history.Fail {
			t.start = s.valuePin(h.Ops[ops[t.from].op].Key, ops[t.from].txn)
			t.out = t.start == 0
		}
		t.late = -1
		if t.out && s.reading == perRead && h.Txns[ops[t.from].txn].Status == history.OK {
			// Its reads before its own appends: its block lies past each one's base in
			// every witness (else a future read), so past every kept read if the longest
			// of them is a longest (below).
			for j, ko := range ops[t.from:t.to] {
				op := &h.Ops[ko.op]
				if op.Kind == history.Append {
					break
				}
				if !removed[ko.op] && op.Known && (t.late < 0 || op.End-op.Start > h.Ops[ops[t.late].op].End-h.Ops[ops[t.late].op].Start) {
					t.late, t.out = t.from+j, false
				}
			}
		}
	}
	// Rule 10: an unpinned writer stays when the whole's windows confine it to a
	// segment all of whose writers the cut keeps: in every witness the narrowing keeps,
	// the segment's positions are exactly those writers' blocks.
	key := int32(-1)
	if len(ops) > 0 {
		key = h.Ops[ops[0].op].Key
	}
	keptSeg := map[int]bool{}
	for i := range ts {
		ts[i].seg = -1
	}
	if segs := s.windowSegments(); confine && segs != nil && key >= 0 && len(segs[key].segs) > 0 {
		ks := &segs[key]
		inCut := map[int32]bool{}
		for i := range ts {
			inCut[ops[ts[i].from].txn] = true
		}
		for i := range ts {
			t := &ts[i]
			txn := ops[t.from].txn
			if t.apps == 0 || t.pin >= 0 || t.start > 0 || h.Txns[txn].Status == history.Fail {
				continue
			}
			si, in := ks.segOf[txn]
			if !in {
				continue
			}
			whole := true
			for _, w := range ks.segs[si].writers {
				whole = whole && inCut[w]
			}
			if whole {
				t.out, t.late, t.seg = false, -1, si
				keptSeg[si] = true
			}
		}
	}
	// Rule 9: the unpinned writers whose values are all in V stay, when every writer of
	// the whole that appends a value of V to the key is kept and every other unpinned
	// one appends no value of V (it joins D, or stays late, as rule 4 says).
	inV := map[int32]bool{}
	var unpinned []int // writers rule 4 cannot place: not pinned by a read or a value
	for i := range ts {
		if t := &ts[i]; t.apps > 0 && t.pin < 0 && t.start == 0 && t.seg < 0 && h.Txns[ops[t.from].txn].Status != history.Fail {
			unpinned = append(unpinned, i)
		}
	}
	appended := func(i int, each func(v int32)) {
		for _, ko := range ops[ts[i].from:ts[i].to] {
			if op := &h.Ops[ko.op]; op.Kind == history.Append {
				each(op.Value)
			}
		}
	}
	if vset != nil {
		for _, v := range vset {
			inV[v] = true
		}
	} else {
		for _, i := range unpinned {
			appended(i, func(v int32) { inV[v] = true })
		}
	}
	var stay []int
	mixed := false
	for _, i := range unpinned {
		in, out := 0, 0
		appended(i, func(v int32) {
			if inV[v] {
				in++
			} else {
				out++
			}
		})
		mixed = mixed || in > 0 && out > 0
		if in > 0 {
			stay = append(stay, i)
		}
	}
	if len(stay) > 0 && !mixed {
		kept := map[int32]int32{}
		for i := range ts {
			if h.Txns[ops[ts[i].from].txn].Status != history.Fail {
				appended(i, func(v int32) {
					if inV[v] {
						kept[v]++
					}
				})
			}
		}
		all := true
		for v := range inV {
			all = all && kept[v] == s.appendCount[[2]int32{h.Ops[ops[0].op].Key, v}]
		}
		if all {
			for _, i := range stay {
				ts[i].out, ts[i].late = false, -1
			}
			for v := range inV {
				byValue = append(byValue, v)
			}
			slices.Sort(byValue)
		}
	}
	// seen is a read's length without the reader's own earlier appends: where a pinned
	// reader's own block starts, or how far the others' appends reach.
	seen := func(ko keyOp) int {
		if s.versionRead(ko) {
			// A version read: its whole list is a state of the key.
			return int(h.Ops[ko.op].End - h.Ops[ko.op].Start)
		}
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
	contradiction := func(ts []txnOps) ([]int32, bool, bool) {
		var parts [][]int32 // what each kept read saw besides its reader's own appends
		found, excess := false, false
		// over: a read shows a value more often than the whole history appends it to
		// the key (an attributable read is a prefix of the key's list in every witness).
		over := func(ko keyOp) bool {
			op := &h.Ops[ko.op]
			count := map[int32]int32{}
			for _, v := range h.ReadList(op) {
				count[v]++
				if count[v] > s.appendCount[[2]int32{op.Key, v}] {
					return true
				}
			}
			return false
		}
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
				if s.reading != oneBase {
					// Each read is its own observation: reads of one transaction may
					// see different lengths; only reads that are not prefixes of one
					// list contradict. A version read is a prefix of the key's list
					// too, whole.
					parts = append(parts, h.ReadValues[op.Start:op.Start+int32(seen(ko))])
					if over(ko) {
						found, excess = true, true
					}
					continue
				}
				l := seen(ko)
				if l < 0 || n >= 0 && l != n {
					found = true
				}
				n = l
				if l >= 0 {
					parts = append(parts, h.ReadValues[op.Start:op.Start+int32(l)])
					if over(ko) {
						found, excess = true, true
					}
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
		return common, found, excess
	}
	for i := range ts {
		if t := &ts[i]; t.pin >= 0 {
			t.start = seen(ops[t.pin]) + 1
		}
	}
	// counted: a read that constrains the cut (known, of an :ok transaction, kept).
	// Per read a version read counts too, with its whole list: it ends at a block
	// boundary of the key's list in every witness, or inside its reader's block, which
	// is then pinned (a late writer's block lies past every counted read).
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
	// Per read, an unpinned writer stays when its read before its own appends is a
	// longest kept read: its block lies past every kept read in every witness, where
	// the cut's order puts it as the whole's does (DESIGN.md, rule 4's late writers).
	// The others join D.
	if s.reading == perRead {
		longest := -1
		for i := range ts {
			for _, ko := range ops[ts[i].from:ts[i].to] {
				if counted(&ts[i], ko) {
					longest = max(longest, seen(ko))
				}
			}
		}
		for i := range ts {
			if t := &ts[i]; t.late >= 0 && seen(ops[t.late]) < longest {
				t.out = true
			}
		}
	}
	if prefix, ok, excess := contradiction(ts); ok {
		// Kept reads that contradict each other: the whole has no witness, so the cut
		// needs no cover; it keeps those reads as they are.
		for i := range ts {
			if ts[i].out {
				for _, ko := range ops[ts[i].from:ts[i].to] {
					removed[ko.op] = true
				}
			}
		}
		if excess {
			// A read shows a value more often than the whole appends it: the synthetic
			// writer appends each value at most as often as the whole does, less the
			// kept writers' appends, so the cut keeps the excess (and so its anomaly).
			allowed := map[int32]int32{}
			k := h.Ops[ops[0].op].Key
			for _, ko := range ops {
				if op := &h.Ops[ko.op]; op.Kind == history.Append && !removed[ko.op] && h.Txns[ko.txn].Status != history.Fail {
					allowed[op.Value]--
				}
			}
			var kept []int32
			for _, v := range prefix {
				if allowed[v]+s.appendCount[[2]int32{k, v}] > 0 {
					allowed[v]--
					kept = append(kept, v)
				}
			}
			prefix = kept
		}
		return prefix, nil, excess, nil, nil, true
	}
	p, longest, ok := bounds()
	if !ok {
		return nil, nil, false, nil, nil, false
	}
	if p < 0 { // no read left: every writer's appends can go
		for i := range ts {
			if ts[i].apps > 0 && h.Txns[ops[ts[i].from].txn].Status != history.Fail {
				for _, ko := range ops[ts[i].from:ts[i].to] {
					removed[ko.op] = true
				}
			}
		}
		return nil, nil, false, nil, nil, true
	}
	// A writer pinned by a value inside the kept reads' shortest length stays: the
	// prefix stops right before its block (a block boundary too).
	for i := range ts {
		if t := &ts[i]; !t.out && t.pin < 0 && t.start > 0 {
			p = min(p, t.start-1)
		}
	}
	// Rule 10: a kept segment's blocks lie past its start a, a block boundary in every
	// witness: the prefix stops there at the latest.
	var segIdx []int
	for si := range keptSeg {
		segIdx = append(segIdx, si)
	}
	slices.Sort(segIdx)
	segs := s.windowSegments()
	for _, si := range segIdx {
		p = min(p, segs[key].segs[si].a)
	}
	for i := range ts {
		if ts[i].out {
			for _, ko := range ops[ts[i].from:ts[i].to] {
				removed[ko.op] = true
			}
		}
	}
	// The list up to the longest kept read, as every kept read agrees (else they
	// contradict each other, handled above).
	var list []int32
	boundary := map[int]bool{} // lengths kept reads see besides their readers' own appends
	for i := range ts {
		for _, ko := range ops[ts[i].from:ts[i].to] {
			if counted(&ts[i], ko) {
				n := seen(ko)
				boundary[n] = true
				if n == longest {
					op := &h.Ops[ko.op]
					list = h.ReadValues[op.Start : op.Start+int32(n)]
				}
			}
		}
	}
	if byValue != nil {
		// Rule 9: a position showing a value of V is a kept writer's, so the prefix
		// stops before the first one, and no fill covers one.
		for q := 1; q <= p; q++ {
			if inV[list[q-1]] {
				p = q - 1
				break
			}
		}
	}
	// Positions past the prefix that no kept writer's pinned block covers are filled, a
	// run at a time, by synthetic writers; a run ends where a kept read ends.
	covered := make([]bool, longest+2)
	if byValue != nil {
		for q := 1; q <= longest; q++ {
			covered[q] = inV[list[q-1]]
		}
	}
	for _, si := range segIdx {
		sg := &segs[key].segs[si]
		for q := sg.a + 1; q <= sg.b && q <= longest; q++ {
			covered[q] = true
		}
		sp := Span{From: sg.a + 1, To: sg.b, Appends: sg.appends}
		for _, t := range sg.writers {
			sp.Writers = append(sp.Writers, h.Txns[t].Index)
		}
		confined = append(confined, sp)
	}
	for i := range ts {
		if t := &ts[i]; !t.out && t.apps > 0 && t.start > 0 {
			st := t.start
			for q := st; q < st+t.apps && q <= longest; q++ {
				covered[q] = true
			}
		}
	}
	for q := p + 1; q <= longest; q++ {
		if covered[q] {
			continue
		}
		if len(fills) == 0 || fills[len(fills)-1].end != q-1 || boundary[q-1] {
			fills = append(fills, Fill{Position: q})
		}
		f := &fills[len(fills)-1]
		f.vals = append(f.vals, list[q-1])
		f.end = q
	}
	return list[:p], fills, false, byValue, confined, true
}

// assemble writes the cut as a history: the synthetic first transaction (when a key has
// a prefix), then the kept transactions with their kept ops, in the original order, with
// the original :index, line and status, then the fills' synthetic transactions, which
// were invoked right after the first and complete after everything else (so that no
// real-time or process order constrains them). Event positions are renumbered in
// order; transactions left without ops go.
//
// firstStatus is the first synthetic transaction's status: :ok, or :fail for read
// uncommitted, where it takes the left-out writers' positions without an edge.
func (s *shrinker) assemble(c cand, keyAt map[int32]int, removed map[int32]bool, prefixKeys []int32, prefixVals [][]int32, prefixes []Prefix, firstStatus history.Status) *built {
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
	var ops []history.MicroOp
	var reads []int32
	addOp := func(op *history.MicroOp, key int32) {
		m := history.MicroOp{Kind: op.Kind, Known: op.Known, Key: intern(keyID, &out.Keys, h.Keys, key)}
		if op.Kind == history.Append {
			m.Value = intern(valID, &out.Values, h.Values, op.Value)
		} else if op.Known {
			m.Start = int32(len(reads))
			reads = slicesx.Double(reads, int(op.End-op.Start))
			for _, v := range h.ReadValues[op.Start:op.End] {
				reads = append(reads, intern(valID, &out.Values, h.Values, v))
			}
			m.End = int32(len(reads))
		}
		ops = append(ops, m)
	}
	appendAll := func(k int32, vals []int32) {
		for _, v := range vals {
			op := history.MicroOp{Kind: history.Append, Key: k, Value: v}
			addOp(&op, k)
		}
	}
	// The synthetic transactions: :index past every original one, processes past every
	// numeric original one.
	nextIndex, nextProc := int64(-1), int64(-1)
	for i := range h.Txns {
		nextIndex = max(nextIndex, h.Txns[i].Index)
	}
	for _, p := range h.Processes {
		if n, err := strconv.ParseInt(p, 10, 64); err == nil {
			nextProc = max(nextProc, n)
		}
	}
	synthetic := func(from int) history.Txn {
		nextProc++
		out.Processes = append(out.Processes, strconv.FormatInt(nextProc, 10))
		tx := history.Txn{Status: history.OK, Process: int32(len(out.Processes) - 1), Index: -1, OpStart: int32(from), OpEnd: int32(len(ops))}
		if nextIndex >= 0 {
			nextIndex++
			tx.Index = nextIndex
		}
		return tx
	}
	var first *history.Txn
	for i, k := range prefixKeys {
		appendAll(k, prefixVals[i])
	}
	if len(ops) > 0 {
		tx := synthetic(0)
		tx.Status = firstStatus
		first = &tx
	}
	type kept struct {
		t        int32
		from, to int
	}
	var txns []kept
	var positions []int32
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
	var fills []history.Txn
	for i, k := range prefixKeys {
		for _, f := range prefixes[i].Fills {
			from := len(ops)
			appendAll(k, f.vals)
			fills = append(fills, synthetic(from))
		}
	}
	slices.Sort(positions)
	// Events: the first synthetic transaction's invoke and completion, the fills'
	// invokes, the kept transactions' events, the fills' completions.
	pos := int32(0)
	if first != nil {
		first.Invoke, first.Complete = 0, 1
		pos = 2
		out.Txns = append(out.Txns, *first)
		b.orig = append(b.orig, -1)
	}
	for i := range fills {
		fills[i].Invoke = pos
		pos++
	}
	base := pos
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
	pos = base + int32(len(positions))
	for i := range fills {
		fills[i].Complete = pos
		pos++
		out.Txns = append(out.Txns, fills[i])
		b.orig = append(b.orig, -1)
	}
	out.Ops, out.ReadValues = ops, reads
	out.Events = int(pos)
	return b
}

func valueNames(h *history.History, vals []int32) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = h.Values[v]
	}
	return out
}

// valuePin is where transaction t's block of appends to key k starts in every witness,
// when one of its values pins it: no other transaction that is not :fail appends that
// value to k, and the longest read of k in the whole history shows it exactly once (at
// q: the block starts q - i, i the value's place among t's appends to k). 0 if none.
func (s *shrinker) valuePin(k, t int32) int {
	pos := s.tracePositions(k)
	i := 0
	for _, op := range s.h.TxnOps(int(t)) {
		if op.Kind != history.Append || op.Key != k {
			continue
		}
		if s.appendCount[[2]int32{k, op.Value}] == 1 {
			if q := pos[op.Value]; q > 0 && q-i > 0 {
				return q - i
			}
		}
		i++
	}
	return 0
}

// tracePositions maps each value of key k's longest read in the whole history to its
// position (1-based), or -1 when it occurs there more than once.
func (s *shrinker) tracePositions(k int32) map[int32]int {
	if pos, ok := s.positions[k]; ok {
		return pos
	}
	pos := map[int32]int{}
	if r := s.longest[k]; r >= 0 {
		for i, v := range s.h.ReadList(&s.h.Ops[r]) {
			if _, seen := pos[v]; seen {
				pos[v] = -1
			} else {
				pos[v] = i + 1
			}
		}
	}
	s.positions[k] = pos
	return pos
}

// attributable reports whether read op ends with its transaction's own earlier appends
// to the key, in order: the part before them is then a prefix of the key's list in
// every witness. Per read, a read that does not is ignored; under the one-base models
// it is an internal anomaly (no witness at all).
func attributable(h *history.History, t, op int32) bool {
	r := &h.Ops[op]
	var own []int32
	for i := h.Txns[t].OpStart; i < op; i++ {
		if o := &h.Ops[i]; o.Kind == history.Append && o.Key == r.Key {
			own = append(own, o.Value)
		}
	}
	vals := h.ReadList(r)
	return len(vals) >= len(own) && slices.Equal(vals[len(vals)-len(own):], own)
}

// versionRead reports whether ko is, per read, a version read: a known read of an :ok
// transaction that misses the transaction's own earlier appends to the key.
func (s *shrinker) versionRead(ko keyOp) bool {
	op := &s.h.Ops[ko.op]
	return s.reading != oneBase && op.Kind == history.Read && op.Known && s.h.Txns[ko.txn].Status == history.OK &&
		!attributable(s.h, ko.txn, ko.op)
}

// pins reports whether known read op of an :ok transaction fixes where its
// transaction's block of appends to the key starts in every witness: right after the
// part before its own appends. One base: always (serially it reads the list before its
// block; under snapshot isolation no concurrent writer commits between its snapshot and
// its commit). Per read: only a read that shows at least one own append, last (a read
// before them may see an older list than the one its block follows). Per read without
// G-single: every attributable read, since a block placed later than a read before it
// makes a G-single in every attribution (DESIGN.md, "Counterexamples", rule 7).
func (s *shrinker) pins(t, op int32) bool {
	h := s.h
	switch s.reading {
	case oneBase:
		return true
	case perReadSingle:
		return attributable(h, t, op)
	}
	r := &h.Ops[op]
	for i := h.Txns[t].OpStart; i < op; i++ {
		if o := &h.Ops[i]; o.Kind == history.Append && o.Key == r.Key {
			return attributable(h, t, op)
		}
	}
	return false
}

// keepFirstReads leaves out, for each kept transaction and kept key it appends to whose
// first read of the key before its first append is left out, every read of the key
// before that append: a later one would otherwise become the cut's first read and could
// make a lost update the whole does not have (docs/DESIGN.md, "Counterexamples"). A
// transaction's appends to a key are kept or left out together, so the cut's first
// append is the whole's.
func (s *shrinker) keepFirstReads(txns []int32, keyAt map[int32]int, removed map[int32]bool) {
	h := s.h
	for _, t := range txns {
		tx := &h.Txns[t]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			if _, ok := keyAt[op.Key]; !ok || op.Kind != history.Read || !removed[i] {
				continue
			}
			// A left-out read: was it the first of its key, before the first append?
			first := true
			for j := tx.OpStart; j < i; j++ {
				if h.Ops[j].Key == op.Key {
					first = false
					break
				}
			}
			if !first {
				continue
			}
			var before []int32 // the key's later reads before its first append
			for j := i + 1; j < tx.OpEnd; j++ {
				if o := &h.Ops[j]; o.Key == op.Key {
					if o.Kind == history.Append {
						for _, r := range before {
							removed[r] = true
						}
						break
					}
					before = append(before, j)
				}
			}
		}
	}
}
