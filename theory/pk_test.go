package theory

import (
	"math/rand/v2"
	"slices"
	"testing"

	"doppel/sat"
)

// naiveDist returns the length of a shortest path from -> to over the given
// edges (BFS), or -1.
func naiveDist(n int, from, to []int32, edges []int32, src, dst int32) int {
	dist := make([]int, n)
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	q := []int32{src}
	for len(q) > 0 {
		x := q[0]
		q = q[1:]
		for _, e := range edges {
			if from[e] == x && dist[to[e]] < 0 {
				dist[to[e]] = dist[x] + 1
				q = append(q, to[e])
			}
		}
	}
	return dist[dst]
}

func checkOrder(t *testing.T, g *Graph, inserted []int32) {
	t.Helper()
	for p, x := range g.nodeAt {
		if g.ord[x] != int32(p) {
			t.Fatalf("ord/nodeAt not inverse at position %d", p)
		}
	}
	for _, e := range inserted {
		if g.ord[g.from[e]] >= g.ord[g.to[e]] {
			t.Fatalf("edge %d: %d->%d violates order (%d >= %d)", e, g.from[e], g.to[e], g.ord[g.from[e]], g.ord[g.to[e]])
		}
	}
}

// TestPearceKellyRandom inserts random edges one at a time and checks that
// insert rejects exactly the edges a naive search finds cyclic, that the
// reported cycle is a real shortest cycle, and that the order stays valid.
func TestPearceKellyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		n := 2 + rng.IntN(12)
		m := rng.IntN(3 * n)
		g := NewGraph(n)
		for range m {
			g.AddEdge(rng.IntN(n), rng.IntN(n), nil)
		}
		var inserted []int32
		for e := range int32(m) {
			u, v := g.from[e], g.to[e]
			d := -1
			if u == v {
				d = 0
			} else {
				d = naiveDist(n, g.from, g.to, inserted, v, u)
			}
			ok := g.insert(e)
			if ok != (d < 0) {
				t.Fatalf("iter %d edge %d (%d->%d): insert=%v, naive distance back %d", iter, e, u, v, ok, d)
			}
			if !ok {
				c := g.cycle
				if len(c) != d+1 || c[len(c)-1] != e {
					t.Fatalf("iter %d: cycle %v, want length %d ending with %d", iter, c, d+1, e)
				}
				for i := range c {
					next := c[(i+1)%len(c)]
					if g.to[c[i]] != g.from[next] {
						t.Fatalf("iter %d: cycle %v not connected", iter, c)
					}
				}
				continue
			}
			inserted = append(inserted, e)
			checkOrder(t, g, inserted)
		}
	}
}

// TestInitKnownCycle checks that Init reports a cycle of known edges and
// ignores guarded edges.
func TestInitKnownCycle(t *testing.T) {
	g := NewGraph(3)
	g.AddEdge(0, 1, nil)
	g.AddEdge(2, 0, []sat.Lit{3})
	g.AddEdge(1, 2, nil)
	if c := g.Init(); c != nil {
		t.Fatalf("guarded edge counted as known: cycle %v", c)
	}
	g = NewGraph(3)
	g.AddEdge(0, 1, nil)
	g.AddEdge(1, 2, nil)
	g.AddEdge(2, 0, nil)
	c := g.Init()
	if len(c) != 3 {
		t.Fatalf("known cycle: got %v, want 3 edges", c)
	}
	g = NewGraph(2)
	g.AddEdge(1, 1, nil)
	if c := g.Init(); len(c) != 1 || c[0] != 0 {
		t.Fatalf("known self-loop: got %v", c)
	}
	if g.AddEdge(0, 1, nil) != -1 {
		t.Fatal("AddEdge after Init accepted")
	}
	if NewGraph(2).AddEdge(0, 2, nil) != -1 {
		t.Fatal("AddEdge out of range accepted")
	}
}

// TestReorderScanMatchesSort inserts the same random edges into larger
// graphs with reorder forced to sort and forced to scan: both must leave the
// same order (the scan is only a faster way to list the affected positions).
func TestReorderScanMatchesSort(t *testing.T) {
	defer func(f, s int) { reorderScanFactor, reorderShiftFactor = f, s }(reorderScanFactor, reorderShiftFactor)
	reorderShiftFactor = 0 // Pearce–Kelly's moves of both sides only
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 300 {
		n := 20 + rng.IntN(300)
		m := rng.IntN(2 * n)
		from, to := make([]int, m), make([]int, m)
		for i := range m {
			from[i], to[i] = rng.IntN(n), rng.IntN(n)
		}
		run := func(factor int) *Graph {
			reorderScanFactor = factor
			g := NewGraph(n)
			for i := range m {
				g.AddEdge(from[i], to[i], nil)
			}
			var inserted []int32
			for e := range int32(m) {
				if g.insert(e) {
					inserted = append(inserted, e)
				}
			}
			checkOrder(t, g, inserted)
			return g
		}
		sorted, scanned := run(-1), run(1<<30)
		if !slices.Equal(sorted.ord, scanned.ord) {
			t.Fatalf("iter %d (n=%d, m=%d): the scan left another order than the sort", iter, n, m)
		}
	}
}

// TestReorderShiftRandom inserts random edges into larger graphs (some with long
// paths, where one side of a reorder is much larger than the other) with reorder
// forced to move one side alone (shiftAfter, shiftBefore) and forced to move both
// (Pearce–Kelly): each run must accept exactly the edges that close no cycle, report
// a shortest cycle for the others (the same length both ways), and keep a valid order.
func TestReorderShiftRandom(t *testing.T) {
	defer func(s int) { reorderShiftFactor = s }(reorderShiftFactor)
	rng := rand.New(rand.NewPCG(5, 6))
	var shifted int
	for iter := range 400 {
		n := 10 + rng.IntN(200)
		m := rng.IntN(3 * n)
		from, to := make([]int, m), make([]int, m)
		for i := range m {
			from[i] = rng.IntN(n)
			if iter%2 == 0 {
				// Mostly forward edges between nearby nodes: long chains, lopsided sides.
				to[i] = min(n-1, from[i]+1+rng.IntN(4))
				if rng.IntN(8) == 0 {
					from[i], to[i] = to[i], rng.IntN(n)
				}
			} else {
				to[i] = rng.IntN(n)
			}
		}
		run := func(factor int) (*Graph, []bool, []int) {
			reorderShiftFactor = factor
			g := NewGraph(n)
			for i := range m {
				g.AddEdge(from[i], to[i], nil)
			}
			// Start from a shuffled order so that many insertions reorder.
			perm := rng.Perm(n)
			for p, x := range perm {
				g.ord[x], g.nodeAt[p] = int32(p), int32(x)
			}
			ok := make([]bool, m)
			cyc := make([]int, m)
			var inserted []int32
			for e := range int32(m) {
				if ok[e] = g.insert(e); ok[e] {
					inserted = append(inserted, e)
				} else {
					cyc[e] = len(g.cycle)
					for i, f := range g.cycle {
						if next := g.cycle[(i+1)%len(g.cycle)]; g.to[f] != g.from[next] {
							t.Fatalf("iter %d: cycle %v not connected", iter, g.cycle)
						}
					}
				}
				checkOrder(t, g, inserted)
			}
			return g, ok, cyc
		}
		g1, ok1, cyc1 := run(1 << 30)
		_, ok2, cyc2 := run(0)
		if !slices.Equal(ok1, ok2) || !slices.Equal(cyc1, cyc2) {
			t.Fatalf("iter %d (n=%d, m=%d): shifting accepted %v (cycles %v), Pearce–Kelly %v (cycles %v)", iter, n, m, ok1, cyc1, ok2, cyc2)
		}
		shifted += int(g1.Stats.Reorders)
	}
	if shifted < 10000 {
		t.Fatalf("weak test: %d positions shifted", shifted)
	}
}
