package encode

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"doppel/history"
)

// valueFindings checks each read key's trace against the values appended to it, which
// needs no segmentation: a value in the trace that no transaction appended
// (garbage-read), that only failed transactions appended (G1a), or that occurs in some
// prefix of the trace more often than the non-failed appends that can lie in that prefix
// (duplicate-elements, as Elle calls a value read more often than it was appended: each
// append is installed at most once, and a transaction that read the key before appending
// to it has its append after what it read). Such a key has no segmentation at all, so
// it is marked Bad and left out of the encoding. Runs once, after traces. It reports
// false when stop (nil: none) said to give up.
func (in *Inference) valueFindings(stop func() bool) bool {
	h := in.H
	// Scratch indexed by value id, reset after each key: occurrences so far and the
	// non-failed appends available so far. writerAt: a transaction's index in the key's
	// writers, -1 otherwise.
	occ := make([]int32, len(h.Values))
	avail := make([]int32, len(h.Values))
	writerAt := make([]int32, len(h.Txns))
	for i := range writerAt {
		writerAt[i] = -1
	}
	var zero []int32
	var pin, pinned []int32
	for k := range in.Keys {
		if stop != nil && k&(stopEvery-1) == 0 && k > 0 && stop() {
			return false
		}
		key := &in.Keys[k]
		if key.Bad || key.TraceBy < 0 {
			continue
		}
		L := key.Trace
		reset := func() {
			for _, v := range L {
				occ[v], avail[v] = 0, 0
			}
			for _, w := range key.Writers {
				for _, v := range in.Vals(w) {
					occ[v], avail[v] = 0, 0
				}
				writerAt[in.Writers[w].Txn] = -1
			}
		}
		// Values no non-failed transaction appended at all.
		for _, w := range key.Writers {
			if in.Writers[w].Status != history.Fail {
				for _, v := range in.Vals(w) {
					avail[v]++
				}
			}
		}
		zero = zero[:0]
		for _, v := range L {
			if avail[v] == 0 && occ[v] == 0 {
				zero = append(zero, v)
				occ[v] = 1 // each value once
			}
		}
		if len(zero) > 0 {
			reset()
			in.valueNotAppended(int32(k), zero)
			key.Bad = true
			continue
		}
		// Pins: a read in T after k own appends puts T's block at len - k, so T's values
		// can be read only from that position on.
		pin = pin[:0]
		for j, w := range key.Writers {
			writerAt[in.Writers[w].Txn] = int32(j)
			pin = append(pin, -1)
			if in.Writers[w].Status != history.Fail {
				for _, v := range in.Vals(w) {
					avail[v] = 0
				}
			}
		}
		for _, ri := range key.Reads {
			r := &in.Reads[ri]
			if j := writerAt[r.Txn]; r.Writes && j >= 0 {
				pin[j] = r.Len - r.Own
			}
		}
		pinned = pinned[:0]
		for j, w := range key.Writers {
			if in.Writers[w].Status == history.Fail {
				continue
			}
			if pin[j] < 0 {
				for _, v := range in.Vals(w) {
					avail[v]++
				}
			} else {
				pinned = append(pinned, int32(j))
			}
		}
		slices.SortFunc(pinned, func(a, b int32) int { return cmp.Compare(pin[a], pin[b]) })
		// Sweep the trace: only the value just read can go over what is available, and
		// a pinned writer becomes available at its position.
		bad := -1
		next := 0
		for i, v := range L {
			for next < len(pinned) && pin[pinned[next]] <= int32(i) {
				for _, x := range in.Vals(key.Writers[pinned[next]]) {
					avail[x]++
				}
				next++
			}
			occ[v]++
			if occ[v] > avail[v] {
				bad = i
				break
			}
		}
		if bad >= 0 {
			in.duplicateElements(int32(k), bad, pin)
			key.Bad = true
		}
		reset()
	}
	return true
}

func occurrences(L []int32, v int32) int32 {
	n := int32(0)
	for _, x := range L {
		if x == v {
			n++
		}
	}
	return n
}

// positionsOf returns the 0-based positions of v in L.
func positionsOf(L []int32, v int32) []int {
	var ps []int
	for i, x := range L {
		if x == v {
			ps = append(ps, i)
		}
	}
	return ps
}

// shortestReadThrough returns the shortest read of key k whose list reaches trace
// position pos (0-based): the smallest evidence of what is at pos.
func (in *Inference) shortestReadThrough(k int32, pos int) int32 {
	best := in.Keys[k].TraceBy
	for _, ri := range in.Keys[k].Reads {
		if r := &in.Reads[ri]; int(r.Len) > pos && r.Len < in.Reads[best].Len {
			best = ri
		}
	}
	return best
}

// valueNotAppended reports values of key k's trace that no non-failed transaction
// appended: the first one only failed ones appended (G1a), and the first one nobody
// appended (garbage-read).
func (in *Inference) valueNotAppended(k int32, vals []int32) {
	var g1a, garbage bool
	for _, v := range vals {
		if in.failedAppenders(k, v) != nil {
			if !g1a {
				in.valueNotAppended1(k, v)
			}
			g1a = true
		} else {
			if !garbage {
				in.valueNotAppended1(k, v)
			}
			garbage = true
		}
	}
}

// failedAppenders lists the failed transactions that appended v to key k.
func (in *Inference) failedAppenders(k, v int32) []int32 {
	var failed []int32
	for _, w := range in.Keys[k].Writers {
		if in.Writers[w].Status == history.Fail && occurrences(in.Vals(w), v) > 0 {
			failed = append(failed, in.Writers[w].Txn)
		}
	}
	return dedup(failed)
}

func (in *Inference) valueNotAppended1(k int32, v int32) {
	key := &in.Keys[k]
	failed := in.failedAppenders(k, v)
	first := positionsOf(key.Trace, v)[0]
	r := &in.Reads[in.shortestReadThrough(k, first)]
	list := ListAround(in.H, key.Trace[:r.Len], first)
	if len(failed) > 0 {
		in.Findings = append(in.Findings, Finding{Type: "G1a", Key: k, Txns: append([]int32{r.Txn}, failed...), Ops: []int32{r.Op},
			Text: fmt.Sprintf("%s read %s = %s, whose %s was appended only by %s, which failed (aborted)",
				in.txnName(r.Txn), in.keyName(k), list, in.valName(v), in.txnNames(failed))})
		return
	}
	in.Findings = append(in.Findings, Finding{Type: "garbage-read", Key: k, Txns: []int32{r.Txn}, Ops: []int32{r.Op},
		Text: fmt.Sprintf("%s read %s = %s, but no transaction appended %s to %s",
			in.txnName(r.Txn), in.keyName(k), list, in.valName(v), in.keyName(k))})
}

// duplicateElements reports value L[end] of key k's trace, which occurs in L[:end+1]
// more often than the non-failed appends that can lie there (pin: each writer's block
// start, -1 if free).
func (in *Inference) duplicateElements(k int32, end int, pin []int32) {
	key := &in.Keys[k]
	L := key.Trace
	v := L[end]
	r := &in.Reads[in.shortestReadThrough(k, end)]
	ps := positionsOf(L[:end+1], v)
	txns := []int32{r.Txn}
	var could, late, failed []string
	n := 0 // appends of v that can lie in L[:end+1]
	for j, w := range key.Writers {
		c := int(occurrences(in.Vals(w), v))
		if c == 0 {
			continue
		}
		t := in.Writers[w].Txn
		name := in.txnName(t)
		if c > 1 {
			name += " " + times(c)
		}
		switch {
		case in.Writers[w].Status == history.Fail:
			failed = append(failed, in.txnName(t))
		case pin[j] < 0 || int(pin[j]) <= end:
			n += c
			could = append(could, name)
			txns = append(txns, t)
		default:
			late = append(late, fmt.Sprintf("%s appended it only after reading the first %d values", in.txnName(t), pin[j]))
			txns = append(txns, t)
		}
	}
	// A transaction whose own later append of v is the only one that could make up the
	// count read its own future: name it for that (future-read) rather than the count.
	for j, w := range key.Writers {
		if len(late) != 1 {
			break
		}
		c := int(occurrences(in.Vals(w), v))
		if c == 0 || in.Writers[w].Status == history.Fail || pin[j] < 0 || int(pin[j]) <= end || n+c < len(ps) {
			continue
		}
		t := in.Writers[w].Txn
		var own *Read
		for _, ri := range key.Reads {
			if in.Reads[ri].Txn == t {
				own = &in.Reads[ri]
				break
			}
		}
		others := "no other append"
		if n > 0 {
			others = fmt.Sprintf("%s (by %s)", appends(n), strings.Join(could, ", "))
		}
		in.Findings = append(in.Findings, Finding{Type: "future-read", Key: k, Txns: dedup(append([]int32{t}, txns[1:]...)), Ops: []int32{own.Op},
			Text: fmt.Sprintf("%s read %s = %s and then appended %s to it: %s occurs %s in the first %d values (at %s), and %s of it can lie there, so only %s's own later append could make up the count",
				in.txnName(t), in.keyName(k), ListAround(in.H, L[:own.Len], ps...), in.valName(v), in.valName(v), times(len(ps)), end+1, positionList(ps), others, in.txnName(t))})
		return
	}
	text := fmt.Sprintf("%s read %s = %s: %s occurs %s in its first %d values (at %s), but ",
		in.txnName(r.Txn), in.keyName(k), ListAround(in.H, L[:r.Len], ps...), in.valName(v), times(len(ps)), end+1, positionList(ps))
	if len(late) == 0 {
		text += fmt.Sprintf("was appended %s (by %s)", times(n), strings.Join(could, ", "))
	} else {
		by := "nobody else"
		if n > 0 {
			by = strings.Join(could, ", ")
		}
		text += fmt.Sprintf("only %s of it can lie there (by %s): %s", appends(n), by, strings.Join(late, "; "))
	}
	if len(failed) > 0 {
		text += fmt.Sprintf("; %s also appended it but failed", strings.Join(failed, ", "))
	}
	text += "; each append is installed at most once"
	in.Findings = append(in.Findings, Finding{Type: "duplicate-elements", Key: k, Txns: dedup(txns), Ops: []int32{r.Op}, Text: text})
}

// appends says a number of appends in words: no append, one append, 3 appends.
func appends(n int) string {
	switch n {
	case 0:
		return "no append"
	case 1:
		return "one append"
	}
	return fmt.Sprintf("%d appends", n)
}

// times says a count in words: once, twice, 3 times.
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// positionList prints 0-based positions 1-based: "positions 1, 3 and 4" (at most 6).
func positionList(ps []int) string {
	const most = 6
	var parts []string
	for i, p := range ps {
		if i == most {
			parts = append(parts, fmt.Sprintf("%d more", len(ps)-most))
			break
		}
		parts = append(parts, fmt.Sprint(p+1))
	}
	word := "position "
	if len(ps) > 1 {
		word = "positions "
	}
	if len(parts) == 1 {
		return word + parts[0]
	}
	return word + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// diagnose explains why key k has no segmentation. With unique attribution (every value
// of the trace appended exactly once) it names the anomalies as Elle does and adds the
// per-position dependency edges, whose cycles explain the rest; otherwise it finds which
// kind of observation (read cuts or read-then-append pins) no attribution can satisfy.
func (p *Problem) diagnose(k int32) {
	in := p.In
	key := &in.Keys[k]
	if key.Bad {
		return
	}
	if in.GCursorPins {
		// Where read committed's pins leave a segmentation, the G-cursor pins alone
		// rule every one out: a G-single. Where they leave none, the key fails as it
		// does for read committed, and is named as there (the same finding, found on
		// both); undecided, it is named with the G-cursor pins.
		p.sc.noGCursor = true
		ok, decided := p.segmentable(k, true, true)
		p.sc.noGCursor = false
		switch {
		case ok && decided:
			p.gcursorSingle(k)
			return
		case decided:
			p.sc.noGCursor = true
			defer func() { p.sc.noGCursor = false }()
		}
	}
	L := key.Trace
	n := int32(len(L))
	before := len(in.Findings)

	// Who can have appended each value at all. (Values nobody could have appended, or
	// appended fewer times than read, were found by valueFindings: the key is Bad then.)
	type occ struct{ writer, offset int32 }
	byVal := map[int32][]occ{}
	for _, w := range key.Writers {
		for o, v := range in.Vals(w) {
			byVal[v] = append(byVal[v], occ{w, int32(o)})
		}
	}

	// Unique attribution: each value of the trace has exactly one non-failed append.
	unique := true
	ws, offs := make([]int32, n), make([]int32, n)
	for i, v := range L {
		var live []occ
		for _, o := range byVal[v] {
			if in.Writers[o.writer].Status != history.Fail {
				live = append(live, o)
			}
		}
		if len(live) != 1 {
			unique = false
			break
		}
		ws[i], offs[i] = live[0].writer, live[0].offset
	}
	if unique {
		p.diagnoseUnique(k, ws, offs)
	}
	if len(in.Findings) > before {
		return
	}
	// Name what cannot be satisfied: which relaxation (no read cuts, no pins) leaves a
	// segmentation with distinct writers. Each claim below rests only on searches that
	// decided: the key has no segmentation with both (the caller knows), and a relaxation
	// whose bounded search ran out proves nothing either way.
	noCuts, noCutsDecided := p.segmentable(k, false, true)
	noPins, noPinsDecided := p.segmentable(k, true, false)
	pinned := p.hasPins(k)
	var typ, why string
	switch {
	case noCuts && noCutsDecided && pinned:
		where := "where its own reads of the key show them"
		if in.PerRead {
			where = "after what it read of the key before appending and where its own later reads show them"
		}
		typ, why = "G1b", "every way to attribute its values to appends that puts each transaction's appends "+where+" makes some read end in the middle of one transaction's appends (an intermediate read)"
	case noCuts && noCutsDecided:
		typ, why = "G1b", "every way to attribute its values to appends makes some read end in the middle of one transaction's appends (an intermediate read)"
	case in.PerRead && noPins && noPinsDecided:
		// Per read, a pin is no anti-dependency (read committed allows those): a block
		// would have to lie inside what its own transaction read before appending (a
		// future read) or away from the values its own read showed right after P.
		typ, why = "incomplete-append", "no way to split its values into whole appends that ends every read at the end of an append puts each transaction's appends after what it read before appending and right where its own reads show them"
	case !in.PerRead && noPins && noPinsDecided:
		typ, why = "G-single", "some transaction read it and then appended to it, and no way to attribute its values that ends every read at the end of an append puts each such append right after what its transaction read (a lost update)"
		if a, b, l, ok := p.pinCollision(k); ok {
			// The usual case, named by its two transactions first.
			in.Findings = append(in.Findings, Finding{Type: typ, Key: k, Txns: []int32{a, b},
				Text: fmt.Sprintf("%s: %s and %s both read it with %d values and then appended to it, so each append must come right after those %d values, and only one can: a lost update",
					in.keyName(k), in.txnName(a), in.txnName(b), l, l)})
			return
		}
	default:
		if ok, decided := p.segmentable(k, false, false); !ok && decided {
			typ, why = "incomplete-append", "its values cannot be split into whole appends of distinct transactions, each transaction's appends together"
		} else {
			// What is known: no split honours both the reads and the pins (each alone
			// was not decided, or can be met).
			typ, why = "incomplete-append", "no way to split its values into whole appends of distinct transactions, each transaction's appends together, both ends every read at the end of an append and puts each transaction's appends where its own reads of the key show them"
		}
	}
	txns, lines := p.keyObservations(k)
	in.Findings = append(in.Findings, Finding{Type: typ, Key: k, Txns: txns,
		Text: fmt.Sprintf("%s: %s. %s.", in.keyName(k), why, lines)})
}

// gcursorSingle names key k's failure under the G-cursor pins (Inference.GCursorPins)
// where read committed's pins leave a segmentation: a G-single in every attribution.
func (p *Problem) gcursorSingle(k int32) {
	in := p.In
	if a, b, l, ok := p.pinCollision(k); ok {
		in.Findings = append(in.Findings, Finding{Type: "G-single", Key: k, Txns: []int32{a, b},
			Text: fmt.Sprintf("%s: %s and %s both read it with %d values and then appended to it, so each append must come right after those %d values (else the block there is another's, and the reader's anti-dependency to it comes back by ww edges), and only one can: a lost update",
				in.keyName(k), in.txnName(a), in.txnName(b), l, l)})
		return
	}
	txns, lines := p.keyObservations(k)
	in.Findings = append(in.Findings, Finding{Type: "G-single", Key: k, Txns: txns,
		Text: fmt.Sprintf("%s: some transaction read it and then appended to it, and no way to attribute its values that ends every read at the end of an append puts each such append right after what its transaction read; where one is not, the block after what it read is another's, and reader →rw that block →ww … →ww the reader's block has exactly one anti-dependency. %s.",
			in.keyName(k), lines)})
}

// keyObservations lists key k's reads and appends, a bounded number of them (a key
// read by thousands of transactions would otherwise print all their lists), and
// their transactions.
func (p *Problem) keyObservations(k int32) ([]int32, string) {
	in := p.In
	key := &in.Keys[k]
	const most = 12
	var txns []int32
	var lines []string
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		txns = append(txns, r.Txn)
		lines = append(lines, fmt.Sprintf("%s read %s", in.txnName(r.Txn), in.listString(in.H.ReadList(&in.H.Ops[r.Op]))))
	}
	for _, w := range key.Writers {
		wr := &in.Writers[w]
		if wr.Status == history.Fail {
			continue
		}
		txns = append(txns, wr.Txn)
		lines = append(lines, fmt.Sprintf("%s appended %s", in.txnName(wr.Txn), in.listString(in.Vals(w))))
	}
	if len(lines) > most {
		lines = append(lines[:most], fmt.Sprintf("and %d more reads and appends", len(lines)-most))
		txns = txns[:most]
	}
	return dedup(txns), strings.Join(lines, "; ")
}

// hasPins reports whether a read of key k places its own transaction's block (a read
// by a transaction that appends to the key): the pins of segment.
func (p *Problem) hasPins(k int32) bool {
	for _, ri := range p.In.Keys[k].Reads {
		if r := &p.In.Reads[ri]; r.Writes && !r.Version {
			return true
		}
	}
	return false
}

// segmentBudget bounds the depth-first search for a segmentation with distinct
// writers in explanations; past it a relaxation is undecided (a var for tests).
var segmentBudget = 200000

// segmentable reports whether key k's trace has a segmentation into blocks of distinct
// writers, with read cuts and pins as chosen; decided is false when the search ran out
// of budget first.
func (p *Problem) segmentable(k int32, useCuts, usePins bool) (ok, decided bool) {
	if ok, decided, answered := p.sc.segmentableGrouped(k, useCuts, usePins, segmentBudget); answered {
		return ok, decided
	}
	pl := p.sc.segment(k, useCuts, usePins)
	switch pl.State {
	case KeyUnsat:
		return false, true
	case KeyFixed, KeyUnread:
		return true, true
	}
	return p.In.distinctSegmentation(k, pl.Cands, segmentBudget)
}

// distinctSegmentation searches depth first for blocks among cands (sorted by
// position; each respects the key's cuts and pins) that tile key k's trace from 0 with
// distinct writers. decided is false when budget steps ran out first.
func (in *Inference) distinctSegmentation(k int32, cands []Cand, budget int) (ok, decided bool) {
	n := int32(len(in.Keys[k].Trace))
	used := map[int32]bool{}
	steps := 0
	var from func(pos int32) bool
	from = func(pos int32) bool {
		if pos >= n {
			return true
		}
		i, _ := slices.BinarySearchFunc(cands, pos, func(c Cand, p int32) int { return cmp.Compare(c.Pos, p) })
		for ; i < len(cands) && cands[i].Pos == pos; i++ {
			if steps++; steps > budget {
				return false
			}
			w := cands[i].Writer
			if used[w] {
				continue
			}
			used[w] = true
			if from(pos + in.Writers[w].End - in.Writers[w].Start) {
				return true
			}
			used[w] = false
		}
		return false
	}
	ok = from(0)
	return ok, ok || steps <= budget
}

// ExplainOpenKeys names the open keys that have no segmentation with distinct writers
// (the counting that made them open ignores that a writer is used once), as diagnose
// names unsatisfiable keys, and reports whether it found any. The checker calls it
// when a model is not valid and nothing named so far explains why.
func (p *Problem) ExplainOpenKeys() bool {
	p.sc = newScratch(p.In, false)
	defer func() { p.sc = nil }()
	before := len(p.In.Findings)
	for k := range p.Plans {
		if p.Plans[k].State != KeyOpen || p.In.Keys[k].Bad {
			continue
		}
		if ok, decided := p.In.distinctSegmentation(int32(k), p.Plans[k].Cands, segmentBudget); !ok && decided {
			p.diagnose(int32(k))
		}
	}
	return len(p.In.Findings) > before
}

// diagnoseUnique names the anomalies of a key whose every value has one writer, and adds
// Elle's per-position edges (consecutive writers ww, the reader after the writer of its
// last value wr, the writer of the next value after the reader rw).
func (p *Problem) diagnoseUnique(k int32, W, off []int32) {
	in := p.In
	key := &in.Keys[k]
	L := key.Trace
	n := int32(len(L))
	seqLen := func(w int32) int32 { return in.Writers[w].End - in.Writers[w].Start }
	seen := map[int32]bool{}
	for i := int32(0); i < n; i++ {
		w := W[i]
		startsWrong := off[i] > 0 && (i == 0 || W[i-1] != w || off[i-1] != off[i]-1)
		endsEarly := off[i] < seqLen(w)-1 && i+1 < n && W[i+1] != w
		if (startsWrong || endsEarly) && !seen[w] {
			seen[w] = true
			t := in.Writers[w].Txn
			what := "with other values between them"
			if startsWrong && (i == 0 || W[i-1] != w) {
				what = "without the values it appended before " + in.valName(L[i])
			} else if endsEarly {
				what = "followed by another transaction's " + in.valName(L[i+1]) + " instead of its own next value"
			}
			in.Findings = append(in.Findings, Finding{Type: "incomplete-append", Key: k, Txns: []int32{t, in.Reads[key.TraceBy].Txn},
				Ops: []int32{in.Reads[key.TraceBy].Op},
				Text: fmt.Sprintf("%s appended %s to %s, but %s read %s: its %s appears %s, so its appends were not installed together",
					in.txnName(t), in.listString(in.Vals(w)), in.keyName(k), in.txnName(in.Reads[key.TraceBy].Txn), ListAround(in.H, L, int(i)), in.valName(L[i]), what)})
		}
		if i > 0 && W[i-1] != w {
			p.edge(in.Writers[W[i-1]].Txn, in.Writers[w].Txn, WW, k, key.TraceBy, i)
		}
	}
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 || r.Len == 0 || r.Version {
			if r.Own == 0 && !r.Version && r.Len < n && in.Writers[W[0]].Txn != r.Txn {
				p.edge(r.Txn, in.Writers[W[0]].Txn, RW, k, ri, 0)
			}
			if r.Version && r.Len > 0 {
				p.intermediateRead(k, r, W, off)
			}
			continue
		}
		for i := int32(0); i < r.Len; i++ {
			if in.Writers[W[i]].Txn == r.Txn {
				in.Findings = append(in.Findings, Finding{Type: "future-read", Key: k, Txns: []int32{r.Txn}, Ops: []int32{r.Op},
					Text: fmt.Sprintf("%s read %s = %s, which contains its own append of %s, made only after the read",
						in.txnName(r.Txn), in.keyName(k), ListAround(in.H, L[:r.Len], int(i)), in.valName(L[i]))})
				break
			}
		}
		p.intermediateRead(k, r, W, off)
		lt := in.Writers[W[r.Len-1]].Txn
		if lt != r.Txn {
			p.edge(lt, r.Txn, WR, k, ri, r.Len-1)
		}
		if r.Len < n {
			if nt := in.Writers[W[r.Len]].Txn; nt != r.Txn {
				p.edge(r.Txn, nt, RW, k, ri, r.Len)
			}
		}
	}
}

func (in *Inference) txnNames(ts []int32) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = in.txnName(t)
	}
	return strings.Join(names, ", ")
}

func dedup(ts []int32) []int32 {
	seen := map[int32]bool{}
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Diagnose explains why key k has no segmentation at all (Segment says KeyUnsat), as
// the encoding would, adding to in.Findings, without building the problem.
func (in *Inference) Diagnose(k int32) {
	p := &Problem{In: in, Plans: make([]Plan, len(in.Keys)), sc: newScratch(in, false)}
	p.diagnose(k)
}

// intermediateRead records a G1b when read r (of at least one value) of key k, whose
// trace values have the unique writers W at offsets off, ends inside another
// transaction's appends.
func (p *Problem) intermediateRead(k int32, r *Read, W, off []int32) {
	in := p.In
	L := in.Keys[k].Trace
	last := W[r.Len-1]
	lt := in.Writers[last].Txn
	if off[r.Len-1] < in.Writers[last].End-in.Writers[last].Start-1 && lt != r.Txn {
		in.Findings = append(in.Findings, Finding{Type: "G1b", Key: k, Txns: []int32{r.Txn, lt}, Ops: []int32{r.Op},
			Text: fmt.Sprintf("%s read %s = %s, which ends with %s's append of %s, but %s appended %s to it: the read saw an intermediate state of %s",
				in.txnName(r.Txn), in.keyName(k), ListAround(in.H, L[:r.Len], int(r.Len-1)), in.txnName(lt), in.valName(L[r.Len-1]),
				in.txnName(lt), in.listString(in.Vals(last)), in.txnName(lt))})
	}
}

// pinCollision finds two committed transactions whose reads of key k pin their blocks
// at the same position inside the trace: both read the key with the same values before
// their own appends and appended to it.
func (p *Problem) pinCollision(k int32) (a, b, l int32, ok bool) {
	in := p.In
	n := int32(len(in.Keys[k].Trace))
	at := map[int32]int32{}
	for _, ri := range in.Keys[k].Reads {
		r := &in.Reads[ri]
		if !r.Writes {
			continue
		}
		q := r.Len - r.Own
		if q >= n {
			continue
		}
		if t, seen := at[q]; seen && t != r.Txn {
			return t, r.Txn, q, true
		}
		at[q] = r.Txn
	}
	return 0, 0, 0, false
}
