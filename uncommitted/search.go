package uncommitted

import (
	"slices"
	"sort"

	"doppel/history"
)

// openKey is a key whose longest read has several candidates or whose positions have
// several choices. Choices that give the same edges are one class with a count: the
// appends of one value by one :ok transaction, and all uncommitted appends of a value.
type openKey struct {
	key       int32
	ls        [][]int32
	classes   [][][]int32 // per L, per position: class ids, the uncommitted class first
	classTxn  []int32     // -1: uncommitted
	classW    []int32     // the class's index in writers, -1: uncommitted
	classLeft []int32     // appends of the class not yet placed
	writers   []int32     // :ok transactions appending to the key
	left      []int32     // per writer: its appends to the key not yet placed
	reads     []readRef   // the key's reads (of :ok transactions), for the longest-reads witness
}

// newOpenKey builds key k's classes from group (a value's appends: the uncommitted
// count, the :ok transactions as oks[okStart:okEnd] with counts) and the key's :ok
// writers with their totals (widx: a writer's index in writers).
func newOpenKey(h *history.History, k int32, ls [][]int32, group func(int32) valueGroup, oks []txnCount, writers, totals []int32, widx func(int32) int32) *openKey {
	o := &openKey{key: k, ls: slices.Clone(ls), writers: slices.Clone(writers), left: slices.Clone(totals)}
	var byValue [][]int32 // classes of ls[0..]'s values, by the value's first position seen
	seenAt := map[int32]int32{}
	for _, l := range o.ls {
		pos := make([][]int32, len(l))
		for p, v := range l {
			i, ok := seenAt[v]
			if !ok {
				var cs []int32
				g := group(v)
				if g.unc > 0 {
					cs = append(cs, int32(len(o.classTxn)))
					o.classTxn, o.classW, o.classLeft = append(o.classTxn, -1), append(o.classW, -1), append(o.classLeft, g.unc)
				}
				// Writers by interval midpoint: the likeliest attribution first.
				ws := slices.Clone(oks[g.okStart:g.okEnd])
				sort.SliceStable(ws, func(i, j int) bool { return h.Midpoint(ws[i].txn) < h.Midpoint(ws[j].txn) })
				for _, w := range ws {
					cs = append(cs, int32(len(o.classTxn)))
					o.classTxn, o.classW, o.classLeft = append(o.classTxn, w.txn), append(o.classW, widx(w.txn)), append(o.classLeft, w.n)
				}
				i = int32(len(byValue))
				seenAt[v] = i
				byValue = append(byValue, cs)
			}
			pos[p] = byValue[i]
		}
		o.classes = append(o.classes, pos)
	}
	return o
}

// search reports whether open[i:] have attributions that keep the graph acyclic.
func (d *decider) search(open []*openKey, i int) bool {
	if i == len(open) {
		return true
	}
	o := open[i]
	for li := range o.ls {
		if d.place(open, i, li, 0, -1) {
			return true
		}
		if d.stopped {
			return false
		}
	}
	return false
}

// place chooses the class of position p of L number li of open[i]; prev is the
// transaction at p-1 (-1: uncommitted, or p = 0).
func (d *decider) place(open []*openKey, i, li, p int, prev int32) bool {
	// A step may search much of the graph (closes): the limits are polled often.
	if d.steps++; d.steps&63 == 0 && d.stop != nil && d.stop() {
		d.stopped = true
	}
	if d.stopped {
		return false
	}
	o := open[i]
	l := o.ls[li]
	if p == len(l) {
		return d.finishKey(open, i, li, prev)
	}
	for _, c := range o.classes[li][p] {
		if o.classLeft[c] == 0 {
			continue
		}
		cur := o.classTxn[c]
		if prev >= 0 && cur >= 0 && prev != cur {
			if !d.tryEdge(prev, edge{to: cur, kind: WW, key: o.key, prev: l[p-1], val: l[p]}) {
				continue
			}
		}
		w := o.classW[c]
		o.classLeft[c]--
		if w >= 0 {
			o.left[w]--
		}
		found := d.place(open, i, li, p+1, cur)
		o.classLeft[c]++
		if w >= 0 {
			o.left[w]++
		}
		if prev >= 0 && cur >= 0 && prev != cur {
			d.pop(prev)
		}
		if found || d.stopped {
			return found
		}
	}
	return false
}

// finishKey adds the edges from L's last writer to the :ok transactions with appends
// to the key that no position took, then goes on with the next key.
func (d *decider) finishKey(open []*openKey, i, li int, last int32) bool {
	o := open[i]
	l := o.ls[li]
	added := 0
	ok := true
	if last >= 0 {
		for wi, w := range o.writers {
			if w == last || o.left[wi] == 0 {
				continue
			}
			if !d.tryEdge(last, edge{to: w, kind: WW, key: o.key, prev: l[len(l)-1], val: -1}) {
				ok = false
				break
			}
			added++
		}
	}
	found := ok && d.search(open, i+1)
	for ; added > 0; added-- {
		d.pop(last)
	}
	return found
}
