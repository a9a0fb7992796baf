// Package encode turns a list-append history into the problem the checker decides: per
// key, the possible segmentations of its trace (DESIGN.md section 4), the dependency
// edges they imply, each guarded by the choices it needs, and the anomalies that need
// no search at all (internal, incompatible-order, G1a, G1b, ...).
package encode

import (
	"slices"
	"sort"
	"strconv"
	"sync/atomic"

	"doppel/history"
	"doppel/internal/parallel"
)

// Read is one committed, known read of a key.
type Read struct {
	Txn    int32
	Op     int32 // index into History.Ops
	Key    int32
	Len    int32 // length of the list read
	Own    int32 // appends of the same transaction to the key before this read
	Writes bool  // the transaction appends to the key (before or after this read)
	// Version (per-read inference only): the read misses its transaction's own earlier
	// appends (internal). It still shows a state of the key, which Elle's version order
	// takes in: its list is a prefix of the key's list and ends where a block ends or
	// inside the reader's own block; it gives no edge (it is not an external read) and
	// places no block. Own is 0 and Writes false for it.
	Version bool
}

// Writer is one transaction's appends to one key.
type Writer struct {
	Txn        int32
	Key        int32
	Status     history.Status
	Start, End int32 // the appended values are Inference.WriterVals[Start:End], in program order
}

// Key is everything known about one key.
type Key struct {
	Trace   []int32 // the longest committed read: every read of the key is a prefix of it
	TraceBy int32   // the read that shows the whole trace, -1 if the key was never read
	Reads   []int32 // reads of the key (indices into Inference.Reads)
	Writers []int32 // writers of the key (indices into Inference.Writers), fail ones included
	// Bad: the key already shows an anomaly that makes every segmentation impossible
	// (incompatible reads); its edges are not inferred.
	Bad bool
}

// Finding is an anomaly that inference found without search.
type Finding struct {
	Type string  // internal, incompatible-order, G1a, G1b, garbage-read, future-read, incomplete-append, ...
	Key  int32   // -1 if none
	Txns []int32 // the transactions involved
	Ops  []int32 // the micro-ops involved (indices into History.Ops)
	Text string  // the explanation
}

// Inference is the per-key view of a history.
type Inference struct {
	H          *history.History
	Reads      []Read
	Writers    []Writer
	WriterVals []int32
	Keys       []Key
	Findings   []Finding
	// TxnWriters lists the writer ids of each transaction (flat: TxnWriterStart[t]..[t+1]).
	TxnWriterStart []int32
	TxnWriterIDs   []int32

	valuesChecked bool // CheckValues ran

	// PerRead: each read is its own observation (read committed and the models below
	// serializable that allow a transaction to see two committed states of a key): two
	// reads of a key in one transaction need not share a base, and a read before the
	// transaction's own append does not place its block (see InferPerRead).
	PerRead bool
	// GCursorPins (with PerRead): the models that forbid G-single (consistent view and
	// up) place a block right after what its transaction read of the key before
	// appending, as the one-base models do. Otherwise the block X after that read is
	// another's, and reader →rw X →ww … →ww reader's block has one rw edge. Read
	// committed allows that cycle, so this inference is theirs alone (InferSingleStop).
	GCursorPins bool
}

// Infer groups the history's micro-ops by key and checks what needs no search: internal
// consistency of each transaction and prefix compatibility of each key's reads.
func Infer(h *history.History) *Inference {
	return infer(h, false, nil)
}

// InferStop is Infer that asks stop (when not nil) every few thousand transactions or
// reads whether to give up, and then returns nil: at a million transactions the
// inference takes seconds. A part of an inference is none (a key's trace is its longest
// read over the whole history), so nothing it found is kept.
func InferStop(h *history.History, stop func() bool) *Inference {
	return infer(h, false, stop)
}

// InferPerRead is Infer for the models whose reads are each their own observation
// (DESIGN.md, "Consistency models"): a read must still end with the transaction's own
// earlier appends to the key, but reads of one key in one transaction may see different
// committed states, and a read before the transaction's own append only keeps that
// block out of what it read.
func InferPerRead(h *history.History) *Inference {
	return infer(h, true, nil)
}

// InferPerReadStop is InferPerRead with InferStop's stop.
func InferPerReadStop(h *history.History, stop func() bool) *Inference {
	return infer(h, true, stop)
}

// InferSingleStop is InferPerReadStop for the models that forbid G-single: the reads
// before a transaction's own append pin its block (Inference.GCursorPins).
func InferSingleStop(h *history.History, stop func() bool) *Inference {
	in := infer(h, true, stop)
	if in != nil {
		in.GCursorPins = true
	}
	return in
}

// stopEvery is how many transactions, reads or keys the inference goes through
// between two questions to its stop hook: at a million transactions, a few
// milliseconds. A history smaller than that is never stopped: its inference takes
// less time than a question or two.
const stopEvery = 1 << 12

func infer(h *history.History, perRead bool, stop func() bool) *Inference {
	return inferParts(h, perRead, stop, inferParallelMin)
}

// inferParallelMin is the number of transactions from which the inference goes through
// the two halves of the history in two goroutines (below it, one is faster).
const inferParallelMin = 1 << 14

// inferParts is infer, in two parts from parallelMin transactions on.
func inferParts(h *history.History, perRead bool, stop func() bool, parallelMin int) *Inference {
	// stopped asks stop at every stopEvery-th i but the first.
	stopped := func(i int) bool {
		return stop != nil && i&(stopEvery-1) == 0 && i > 0 && stop()
	}
	in := &Inference{H: h, Keys: make([]Key, len(h.Keys)), PerRead: perRead}
	for k := range in.Keys {
		in.Keys[k].TraceBy = -1
	}
	in.TxnWriterStart = make([]int32, len(h.Txns)+1)

	// The transactions in one or two parts, split where half the micro-ops lie before.
	// Each part is counted first, so that it fills its own stretch of Writers,
	// WriterVals and TxnWriterIDs (exactly sized) and of Reads (sized for every known
	// read of an :ok transaction: a read with an internal anomaly is left out, and
	// then the second part's reads move down); then both are filled at once. The
	// result is exactly that of one pass over the transactions in order.
	parts := []inferPart{{t0: 0, t1: len(h.Txns)}}
	if len(h.Txns) >= parallelMin && parallelMin > 0 {
		mid := sort.Search(len(h.Txns), func(t int) bool { return int(h.Txns[t].OpEnd) >= len(h.Ops)/2 })
		parts = []inferPart{{t0: 0, t1: mid}, {t0: mid, t1: len(h.Txns)}}
	}
	if !inParts(len(parts), func(i int, quit func(int) bool) bool { return parts[i].count(h, quit) }, stopped, stop) {
		return nil
	}
	var writers, vals, reads int32
	for i := range parts {
		pt := &parts[i]
		pt.in = in
		pt.writer, pt.val, pt.read = writers, vals, reads
		writers += pt.writers
		vals += pt.appends
		reads += pt.reads
	}
	in.Writers = make([]Writer, writers)
	in.WriterVals = make([]int32, vals)
	in.TxnWriterIDs = make([]int32, writers)
	in.Reads = make([]Read, reads)
	if !inParts(len(parts), func(i int, quit func(int) bool) bool { return parts[i].fill(quit) }, stopped, stop) {
		return nil
	}
	n := int32(0) // reads kept so far
	for i := range parts {
		pt := &parts[i]
		if pt.read != n {
			copy(in.Reads[n:], in.Reads[pt.read:pt.read+pt.kept])
		}
		n += pt.kept
		in.Findings = append(in.Findings, pt.findings...)
	}
	in.Reads = in.Reads[:n]
	in.TxnWriterStart[len(h.Txns)] = writers

	// Group writers and reads by key in two flat arrays (counting sort).
	nw := make([]int32, len(in.Keys)+1)
	nr := make([]int32, len(in.Keys)+1)
	for i := range in.Writers {
		nw[in.Writers[i].Key+1]++
	}
	for i := range in.Reads {
		nr[in.Reads[i].Key+1]++
	}
	for k := range in.Keys {
		nw[k+1] += nw[k]
		nr[k+1] += nr[k]
	}
	ws := make([]int32, len(in.Writers))
	rs := make([]int32, len(in.Reads))
	next := make([]int32, len(in.Keys))
	copy(next, nw)
	for i := range in.Writers {
		k := in.Writers[i].Key
		ws[next[k]] = int32(i)
		next[k]++
	}
	copy(next, nr)
	for i := range in.Reads {
		k := in.Reads[i].Key
		rs[next[k]] = int32(i)
		next[k]++
	}
	for k := range in.Keys {
		in.Keys[k].Writers = ws[nw[k]:nw[k+1]:nw[k+1]]
		in.Keys[k].Reads = rs[nr[k]:nr[k+1]:nr[k+1]]
	}
	if !in.traces(stopped, stop, len(parts)) {
		return nil
	}
	return in
}

// inferPart is the inference's work on the transactions [t0, t1).
type inferPart struct {
	in     *Inference
	t0, t1 int
	// Counted: the part's writers, appends, and known reads of :ok transactions.
	writers, appends, reads int32
	// Where the part's writers (and their ids), values and reads start.
	writer, val, read int32
	kept              int32 // reads kept (those with an internal anomaly are not)
	findings          []Finding
}

// count counts the part's writers (a transaction's appends to one key), appends and
// known :ok reads; it reports false when quit says to give up.
func (pt *inferPart) count(h *history.History, quit func(int) bool) bool {
	var keys []int32
	for t := pt.t0; t < pt.t1; t++ {
		if quit(t - pt.t0) {
			return false
		}
		tx := &h.Txns[t]
		keys = keys[:0]
		for i := tx.OpStart; i < tx.OpEnd; i++ {
			op := &h.Ops[i]
			switch {
			case op.Kind == history.Append:
				pt.appends++
				if !slices.Contains(keys, op.Key) {
					keys = append(keys, op.Key)
				}
			case op.Known && tx.Status == history.OK:
				pt.reads++
			}
		}
		pt.writers += int32(len(keys))
	}
	return true
}

// fill infers the part's writers and reads into the stretches count sized; it reports
// false when quit says to give up.
func (pt *inferPart) fill(quit func(int) bool) bool {
	in := pt.in
	h := in.H
	// Per-transaction scratch: the keys touched so far and what was done to them.
	type touch struct {
		key      int32
		writer   int32 // writer id, -1 if no append yet
		baseRead int32 // first known read of the key in this txn, -1 if none
		baseOwn  int32 // own appends before baseRead
		bad      bool  // an internal anomaly was reported: one per transaction and key
	}
	var touched []touch
	var own []int32
	find := func(key int32) int {
		for i := range touched {
			if touched[i].key == key {
				return i
			}
		}
		touched = append(touched, touch{key: key, writer: -1, baseRead: -1})
		return len(touched) - 1
	}
	nw, nv, nr := pt.writer, pt.val, pt.read // the next writer, value and read
	for t := pt.t0; t < pt.t1; t++ {
		if quit(t - pt.t0) {
			return false
		}
		tx := &h.Txns[t]
		in.TxnWriterStart[t] = nw
		touched = touched[:0]
		ops := h.Ops[tx.OpStart:tx.OpEnd]
		// First pass: appends, so that reads know whether the txn writes their key. Each
		// writer's values are contiguous in WriterVals, in program order.
		for i := range ops {
			op := &ops[i]
			if op.Kind != history.Append {
				continue
			}
			j := find(op.Key)
			if touched[j].writer >= 0 {
				continue
			}
			w := nw
			touched[j].writer = w
			start := nv
			for k := i; k < len(ops); k++ {
				if ops[k].Kind == history.Append && ops[k].Key == op.Key {
					in.WriterVals[nv] = ops[k].Value
					nv++
				}
			}
			in.Writers[w] = Writer{Txn: int32(t), Key: op.Key, Status: tx.Status, Start: start, End: nv}
			in.TxnWriterIDs[w] = w
			nw++
		}
		if tx.Status != history.OK {
			continue
		}
		// Second pass: reads, with the own appends before each.
		own = own[:0] // parallel to touched: own appends so far
		for range touched {
			own = append(own, 0)
		}
		for i := range ops {
			op := &ops[i]
			opIdx := tx.OpStart + int32(i)
			j := find(op.Key)
			for len(own) < len(touched) {
				own = append(own, 0)
			}
			if op.Kind == history.Append {
				own[j]++
				continue
			}
			if !op.Known {
				continue
			}
			if touched[j].bad {
				continue
			}
			r := Read{Txn: int32(t), Op: opIdx, Key: op.Key, Len: op.End - op.Start, Own: own[j], Writes: touched[j].writer >= 0}
			if !in.internalOK(&pt.findings, &touched[j].baseRead, &touched[j].baseOwn, touched[j].writer, r) {
				// Per read, only this read is out of the transaction's view (each read is
				// its own observation), and it still shows a state of the key: a version
				// read. Otherwise the transaction's view of the key is out.
				touched[j].bad = !in.PerRead
				if in.PerRead {
					in.Reads[nr] = Read{Txn: r.Txn, Op: r.Op, Key: r.Key, Len: r.Len, Version: true}
					nr++
				}
				continue
			}
			in.Reads[nr] = r
			nr++
		}
	}
	pt.kept = nr - pt.read
	return true
}

// inParts runs part(i, quit) for i in [0, n): with one part in the calling goroutine,
// quit being stopped; with more, each in its own goroutine, while the calling goroutine
// asks stop every few milliseconds (it need not be safe for concurrent use) and, once
// it says so, makes every quit report true. It reports whether every part finished.
func inParts(n int, part func(i int, quit func(int) bool) bool, stopped func(int) bool, stop func() bool) bool {
	if n == 1 {
		return part(0, stopped)
	}
	done := make([]bool, n)
	if parallel.Run(n, func(i int, quitting *atomic.Bool) {
		done[i] = part(i, func(j int) bool { return j&(stopEvery-1) == 0 && quitting.Load() })
	}, stop) {
		return false
	}
	return !slices.Contains(done, false)
}

// CheckValues runs the checks of each key's values against its appends (valueFindings)
// once. Infer leaves them out: a verified replay proves a valid history without them (it
// compares every read value by value), and on a million keys they cost seconds; the
// encoding and narrowing call it first.
func (in *Inference) CheckValues() {
	in.CheckValuesStop(nil)
}

// CheckValuesStop is CheckValues that asks stop (when not nil) every few thousand keys
// whether to give up, and then reports false: the keys checked so far keep their
// findings (each holds on its own), the others are never checked (the caller's limits
// ran out: nothing more is decided).
func (in *Inference) CheckValuesStop(stop func() bool) bool {
	if in.valuesChecked {
		return true
	}
	in.valuesChecked = true
	return in.valueFindings(stop)
}

// internalOK checks a read against the transaction's earlier view of the key: every
// read of x in T must be base + T's own appends so far, for one base list, and the read
// must end with those appends. It records an internal anomaly and returns false if not.
func (in *Inference) internalOK(findings *[]Finding, baseRead, baseOwn *int32, writer int32, r Read) bool {
	h := in.H
	vals := h.ReadList(&h.Ops[r.Op])
	var appended []int32
	if writer >= 0 {
		w := &in.Writers[writer]
		appended = in.WriterVals[w.Start : w.Start+r.Own]
	}
	// The read must end with the transaction's own appends so far.
	if int(r.Own) > len(vals) || !equal(vals[len(vals)-int(r.Own):], appended) {
		*findings = append(*findings, Finding{Type: "internal", Key: r.Key, Txns: []int32{r.Txn}, Ops: []int32{r.Op},
			Text: in.txnName(r.Txn) + " read " + in.keyName(r.Key) + " = " + in.listString(vals) +
				" after appending " + in.listString(appended) + " to it, so the read should end with " +
				in.listString(appended)})
		return false
	}
	if *baseRead < 0 || in.PerRead {
		*baseRead, *baseOwn = r.Op, r.Own
		return true
	}
	prev := h.ReadList(&h.Ops[*baseRead])
	prevBase := prev[:len(prev)-int(*baseOwn)]
	base := vals[:len(vals)-int(r.Own)]
	if !equal(prevBase, base) {
		*findings = append(*findings, Finding{Type: "internal", Key: r.Key, Txns: []int32{r.Txn}, Ops: []int32{*baseRead, r.Op},
			Text: in.txnName(r.Txn) + " read " + in.keyName(r.Key) + " = " + in.listString(prev) + " and later " +
				in.listString(vals) + "; with only its own appends in between, the second read should be " +
				in.listString(append(append([]int32{}, prevBase...), appended...))})
		return false
	}
	return true
}

// traces finds the longest read of each key (its trace) and checks every other read
// of the key is a prefix of it. It goes through the reads in their order rather than
// key by key, since a key's reads are scattered over the history. It reports false,
// having found nothing, when stopped says to give up.
func (in *Inference) traces(stopped func(i int) bool, stop func() bool, parts int) bool {
	h := in.H
	nk := len(in.Keys)
	longest := make([]int32, nk) // the first of the longest reads of each key, -1 if none
	maxLen := make([]int32, nk)
	bad := make([]int32, nk) // the first read of each key that is not a prefix, -1 if none
	// With two parts, each goes through every read but looks only at the keys k with
	// k % 2 == part: a key's reads stay in order, and the lookups, cache misses at a
	// million keys, are shared.
	find := func(part int, quit func(int) bool) bool {
		for k := part; k < nk; k += parts {
			longest[k] = -1
		}
		for i := range in.Reads {
			if quit(i) {
				return false
			}
			r := &in.Reads[i]
			if int(r.Key)%parts != part {
				continue
			}
			if longest[r.Key] < 0 || r.Len > maxLen[r.Key] {
				longest[r.Key], maxLen[r.Key] = int32(i), r.Len
			}
		}
		start := maxLen // now where each key's longest list starts in ReadValues
		for k := part; k < nk; k += parts {
			if ri := longest[k]; ri >= 0 {
				start[k] = h.Ops[in.Reads[ri].Op].Start
			}
			bad[k] = -1
		}
		for i := range in.Reads {
			if quit(i) {
				return false
			}
			r := &in.Reads[i]
			if int(r.Key)%parts != part || bad[r.Key] >= 0 {
				continue
			}
			vals := h.ReadList(&h.Ops[r.Op])
			if s := start[r.Key]; !equal(vals, h.ReadValues[s:s+int32(len(vals))]) {
				bad[r.Key] = int32(i)
			}
		}
		return true
	}
	if !inParts(parts, find, stopped, stop) {
		return false
	}
	for k := range in.Keys {
		key := &in.Keys[k]
		lr := longest[k]
		if lr < 0 {
			continue
		}
		trace := h.ReadList(&h.Ops[in.Reads[lr].Op])
		if ri := bad[k]; ri >= 0 {
			vals := h.ReadList(&h.Ops[in.Reads[ri].Op])
			d := 0 // where the two lists diverge
			for d < len(vals) && vals[d] == trace[d] {
				d++
			}
			in.Findings = append(in.Findings, Finding{Type: "incompatible-order", Key: int32(k),
				Txns: []int32{in.Reads[ri].Txn, in.Reads[lr].Txn}, Ops: []int32{in.Reads[ri].Op, in.Reads[lr].Op},
				Text: in.txnName(in.Reads[ri].Txn) + " read " + in.keyName(int32(k)) + " = " + ListAround(h, vals, d) + " and " +
					in.txnName(in.Reads[lr].Txn) + " read " + ListAround(h, trace, d) +
					": they differ at position " + strconv.Itoa(d+1) + " (counted from 1), so no single order of appends explains both"})
			key.Bad = true
			continue
		}
		key.Trace = trace
		key.TraceBy = lr
	}
	return true
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] { // shared storage (see history.Builder.storeRead)
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// WriterVals returns the values writer w appends, in order.
func (in *Inference) Vals(w int32) []int32 {
	wr := &in.Writers[w]
	return in.WriterVals[wr.Start:wr.End]
}

// TxnWriters returns the writer ids of transaction t.
func (in *Inference) TxnWriters(t int32) []int32 {
	return in.TxnWriterIDs[in.TxnWriterStart[t]:in.TxnWriterStart[t+1]]
}

// KeyWriter returns transaction t's writer id on key k, or -1 when t does not append to k.
func (in *Inference) KeyWriter(t, k int32) int32 {
	for _, w := range in.TxnWriters(t) {
		if in.Writers[w].Key == k {
			return w
		}
	}
	return -1
}
