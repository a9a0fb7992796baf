package report

import (
	"fmt"
	"slices"
	"strings"

	"doppel/check"
	"doppel/encode"
	"doppel/history"
)

// keyView is one key's trace (its longest read) around the positions an anomaly
// refers to, with who wrote each position: known when the key has one segmentation,
// else the candidates (marked "?").
type keyView struct {
	Key   string
	Len   int
	Note  string
	Cells []cell
}

type cell struct {
	Pos      int // 1-based
	Value    string
	Writers  string // who wrote it: "T3", or candidates "T3? T5?"
	Involved bool   // written (or possibly written) by a transaction of the anomaly
	Gap      bool   // stands for positions not shown
	ReadEnd  string // transactions of the anomaly whose read ends here
}

const (
	maxKeysShown  = 4
	maxCellsShown = 64
	cellContext   = 3
)

func opsText(h *history.History, t int) string { return encode.OpsString(h, int32(t)) }

func keyViews(h *history.History, in *encode.Inference, a *check.Anomaly) []keyView {
	if in == nil {
		return nil
	}
	var names []string
	if a.Key != "" {
		names = append(names, a.Key)
	}
	for _, s := range a.Steps {
		if s.Key != "" && !slices.Contains(names, s.Key) {
			names = append(names, s.Key)
		}
	}
	involved := map[int32]bool{}
	for _, t := range a.Txns {
		involved[int32(t.ID)] = true
	}
	var views []keyView
	for _, name := range names {
		if len(views) == maxKeysShown {
			break
		}
		k := slices.Index(h.Keys, name)
		if k < 0 {
			continue
		}
		views = append(views, keyView1(h, in, int32(k), involved))
	}
	return views
}

func keyView1(h *history.History, in *encode.Inference, k int32, involved map[int32]bool) keyView {
	key := &in.Keys[k]
	v := keyView{Key: h.Keys[k], Len: len(key.Trace)}
	if key.TraceBy < 0 {
		v.Note = "no read shows one list for this key (never read, or its reads are not prefixes of one list)"
		return v
	}
	L := key.Trace
	n := len(L)
	writers := make([][]int32, n) // per position: who wrote it, or may have
	known := false
	length := func(w int32) int { return int(in.Writers[w].End - in.Writers[w].Start) }
	mark := func(c encode.Cand) {
		for p := int(c.Pos); p < min(int(c.Pos)+length(c.Writer), n); p++ {
			writers[p] = append(writers[p], in.Writers[c.Writer].Txn)
		}
	}
	pl := in.Segment(k)
	byValue := func() {
		for _, w := range key.Writers {
			t := in.Writers[w].Txn
			if !involved[t] {
				continue
			}
			vals := in.Vals(w)
			for p, x := range L {
				if slices.Contains(vals, x) {
					writers[p] = append(writers[p], t)
				}
			}
		}
	}
	switch {
	case key.Bad || pl.State == encode.KeyUnsat:
		v.Note = "no attribution of this list to appends exists; \"?\" marks the anomaly's transactions that appended each value"
		byValue()
	case pl.State == encode.KeyFixed:
		known = true
		v.Note = "one attribution: each position's writer is certain"
		for _, c := range pl.Blocks {
			mark(c)
		}
	case pl.State == encode.KeyOpen:
		v.Note = "duplicate values leave several attributions: \"?\" marks each position's possible writers"
		for _, c := range pl.Cands {
			mark(c)
		}
	}
	// Where the anomaly's transactions' reads of the key end.
	readEnd := map[int][]string{}
	for _, ri := range key.Reads {
		r := &in.Reads[ri]
		if involved[r.Txn] && r.Len > 0 {
			name := encode.TxnName(h, r.Txn)
			if !slices.Contains(readEnd[int(r.Len)-1], name) {
				readEnd[int(r.Len)-1] = append(readEnd[int(r.Len)-1], name)
			}
		}
	}
	// Positions worth showing: those the anomaly's transactions wrote or read up to.
	relevant := make([]bool, n)
	any := false
	for p := range L {
		for _, t := range writers[p] {
			if involved[t] {
				relevant[p], any = true, true
			}
		}
		if readEnd[p] != nil {
			relevant[p], any = true, true
		}
	}
	show := make([]bool, n)
	count := 0
	if n <= maxCellsShown || !any {
		for p := 0; p < n && count < maxCellsShown; p++ {
			show[p] = true
			count++
		}
	} else {
		for p := range L {
			if !relevant[p] {
				continue
			}
			for q := max(p-cellContext, 0); q <= min(p+cellContext, n-1) && count < maxCellsShown; q++ {
				if !show[q] {
					show[q] = true
					count++
				}
			}
		}
	}
	for p := 0; p < n; p++ {
		if !show[p] {
			if len(v.Cells) == 0 || !v.Cells[len(v.Cells)-1].Gap {
				v.Cells = append(v.Cells, cell{Gap: true})
			}
			continue
		}
		c := cell{Pos: p + 1, Value: h.Values[L[p]], ReadEnd: strings.Join(readEnd[p], " ")}
		var names []string
		for _, t := range writers[p] {
			name := encode.TxnName(h, t)
			if !known {
				name += "?"
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			c.Involved = c.Involved || involved[t]
		}
		if len(names) > 4 {
			names = append(names[:4], fmt.Sprintf("+%d", len(names)-4))
		}
		c.Writers = strings.Join(names, " ")
		v.Cells = append(v.Cells, c)
	}
	return v
}
