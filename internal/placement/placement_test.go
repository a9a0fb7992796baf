package placement

import (
	"slices"
	"testing"

	"doppel/history"
)

// TestReachAndPreds: on 0 → 1 → 2 and 3 → 2, with nodes 1, 2 and 3 items 0, 1 and 2,
// node 0 reaches items 0 and 1, item 1's predecessors are items 0 and 2, and a graph
// whose item reaches itself (a cycle through its node) has no predecessor sets.
func TestReachAndPreds(t *testing.T) {
	adj := [][]int32{{1}, {2}, {}, {2}}
	topo := []int32{0, 3, 1, 2}
	succ := func(v int32, visit func(int32)) {
		for _, u := range adj[v] {
			visit(u)
		}
	}
	item := func(u int32) int { return int(u) - 1 } // node 0 is no item
	if got, ok := TopoOrder(len(adj), succ); !ok || !slices.Equal(got, topo) {
		t.Errorf("TopoOrder: %v (acyclic %v), want %v", got, ok, topo)
	}
	reach := Reach(len(adj), topo, 1, succ, item)
	if !Has(reach[0:1], 0) || !Has(reach[0:1], 1) || Has(reach[0:1], 2) {
		t.Errorf("node 0 reaches %b, want items 0 and 1", reach[0])
	}
	preds, ok := Preds(reach, 1, 3, func(i int) int32 { return int32(i + 1) })
	if !ok || preds[1] != 0b101 || preds[0] != 0 || preds[2] != 0 {
		t.Errorf("preds %b (ok %v), want item 1's to be items 0 and 2, the others none", preds, ok)
	}
	if !Ready(preds[1:2], []uint64{0b101}) || Ready(preds[1:2], []uint64{0b001}) {
		t.Error("Ready: item 1 is ready with items 0 and 2 placed, not with item 0 alone")
	}
	// A self-reach: item 0's node reaches itself only through a cycle; Reach is given a
	// topological order that is not one, as a caller with a cyclic graph would.
	cyc := [][]int32{{1}, {0}}
	cycSucc := func(v int32, visit func(int32)) {
		for _, u := range cyc[v] {
			visit(u)
		}
	}
	if _, ok := TopoOrder(2, cycSucc); ok {
		t.Error("TopoOrder found an order of a cycle")
	}
	r := Reach(2, []int32{0, 1}, 1, cycSucc, func(u int32) int { return int(u) })
	if _, ok := Preds(r, 1, 2, func(i int) int32 { return int32(i) }); ok {
		t.Error("Preds accepted an item that reaches itself")
	}
}

// TestFailed: a state is failed once added, and only that state (placed set and
// position both count).
func TestFailed(t *testing.T) {
	var f Failed
	a := f.Key([]uint64{0b11}, 2)
	if f.Has(a) {
		t.Fatal("a state failed before it was added")
	}
	f.Add(a)
	if !f.Has(f.Key([]uint64{0b11}, 2)) {
		t.Error("the added state is not failed")
	}
	if f.Has(f.Key([]uint64{0b11}, 3)) || f.Has(f.Key([]uint64{0b01}, 2)) {
		t.Error("another state is failed")
	}
}

// TestOrderEdges: T0 and T2 of process 0, T1 of process 1; T0 completes (at 1) before
// T2 is invoked (at 4), T1 completes at 3. Process order gives T0 → T2; real time
// chains the completions 1 → 3 and enters T2 from the node of completion 3 (the last
// one before its invoke).
func TestOrderEdges(t *testing.T) {
	h := &history.History{Txns: []history.Txn{
		{Process: 0, Invoke: 0, Complete: 1},
		{Process: 1, Invoke: 2, Complete: 3},
		{Process: 0, Invoke: 4, Complete: 5},
	}}
	txns := []int32{0, 1, 2}
	comps := Completions(h, txns)
	if !slices.Equal(comps, []int32{1, 3, 5}) {
		t.Fatalf("completions %v, want [1 3 5]", comps)
	}
	type e struct {
		from, to int32
		rt       bool
	}
	var got []e
	OrderEdges(h, txns, []int32{0, 2, 1}, comps, 3, func(from, to int32, rt bool) { got = append(got, e{from, to, rt}) })
	want := []e{{0, 2, false}, {3, 4, true}, {4, 5, true}, {0, 3, true}, {1, 4, true}, {3, 1, true}, {2, 5, true}, {4, 2, true}}
	if !slices.Equal(got, want) {
		t.Errorf("edges %v, want %v", got, want)
	}
}
