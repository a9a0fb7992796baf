package encode

import (
	"fmt"
	"strings"

	"doppel/history"
)

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
	L := key.Trace
	n := int32(len(L))
	before := len(in.Findings)

	// Who can have appended each value at all.
	type occ struct{ writer, offset int32 }
	byVal := map[int32][]occ{}
	for _, w := range key.Writers {
		for o, v := range in.Vals(w) {
			byVal[v] = append(byVal[v], occ{w, int32(o)})
		}
	}
	reported := map[int32]bool{}
	for _, v := range L {
		if reported[v] {
			continue
		}
		var failed []int32
		ok := false
		for _, o := range byVal[v] {
			if in.Writers[o.writer].Status == history.Fail {
				failed = append(failed, in.Writers[o.writer].Txn)
			} else {
				ok = true
			}
		}
		if ok {
			continue
		}
		reported[v] = true
		r := &in.Reads[key.TraceBy]
		if len(failed) > 0 {
			in.Findings = append(in.Findings, Finding{Type: "G1a", Key: k, Txns: append([]int32{r.Txn}, failed...), Ops: []int32{r.Op},
				Text: fmt.Sprintf("%s read %s = %s, whose %s was appended only by %s, which failed (aborted)",
					in.txnName(r.Txn), in.keyName(k), in.listString(L), in.valName(v), in.txnNames(failed))})
		} else {
			in.Findings = append(in.Findings, Finding{Type: "garbage-read", Key: k, Txns: []int32{r.Txn}, Ops: []int32{r.Op},
				Text: fmt.Sprintf("%s read %s = %s, but no transaction appended %s to %s",
					in.txnName(r.Txn), in.keyName(k), in.listString(L), in.valName(v), in.keyName(k))})
		}
	}
	if len(in.Findings) > before {
		return
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
	// Name what cannot be satisfied.
	var typ, why string
	switch {
	case p.sc.segment(k, false, true).State != KeyUnsat:
		typ, why = "G1b", "every way to attribute its values to appends makes some read end in the middle of one transaction's appends (an intermediate read)"
	case p.sc.segment(k, true, false).State != KeyUnsat:
		typ, why = "G-single", "some transaction read it and then appended to it, and no way to attribute its values puts that append right after what the transaction read (a lost update)"
	default:
		typ, why = "incomplete-append", "its values cannot be split into whole appends of distinct transactions, each transaction's appends together"
	}
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
	in.Findings = append(in.Findings, Finding{Type: typ, Key: k, Txns: dedup(txns),
		Text: fmt.Sprintf("%s: %s. %s.", in.keyName(k), why, strings.Join(lines, "; "))})
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
					in.txnName(t), in.listString(in.Vals(w)), in.keyName(k), in.txnName(in.Reads[key.TraceBy].Txn), in.listString(L), in.valName(L[i]), what)})
		}
		if i > 0 && W[i-1] != w {
			p.edge(in.Writers[W[i-1]].Txn, in.Writers[w].Txn, WW, k, key.TraceBy, i)
		}
	}
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if r.Own != 0 || r.Len == 0 {
			if r.Own == 0 && r.Len < n && in.Writers[W[0]].Txn != r.Txn {
				p.edge(r.Txn, in.Writers[W[0]].Txn, RW, k, ri, 0)
			}
			continue
		}
		for i := int32(0); i < r.Len; i++ {
			if in.Writers[W[i]].Txn == r.Txn {
				in.Findings = append(in.Findings, Finding{Type: "future-read", Key: k, Txns: []int32{r.Txn}, Ops: []int32{r.Op},
					Text: fmt.Sprintf("%s read %s = %s, which contains its own append of %s, made only after the read",
						in.txnName(r.Txn), in.keyName(k), in.listString(L[:r.Len]), in.valName(L[i]))})
				break
			}
		}
		last := W[r.Len-1]
		lt := in.Writers[last].Txn
		if off[r.Len-1] < seqLen(last)-1 && lt != r.Txn {
			in.Findings = append(in.Findings, Finding{Type: "G1b", Key: k, Txns: []int32{r.Txn, lt}, Ops: []int32{r.Op},
				Text: fmt.Sprintf("%s read %s = %s, which ends with %s's append of %s, but %s appended %s to it: the read saw an intermediate state of %s",
					in.txnName(r.Txn), in.keyName(k), in.listString(L[:r.Len]), in.txnName(lt), in.valName(L[r.Len-1]),
					in.txnName(lt), in.listString(in.Vals(last)), in.txnName(lt))})
		}
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
