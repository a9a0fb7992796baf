package check

import "doppel/encode"

// graph is a compressed adjacency list over edge ids (flat arrays for the hot loops).
type graph struct {
	n     int
	start []int32 // out-edges of v are ids[start[v]:start[v+1]]
	ids   []int32
	edges []encode.Edge
}

func newGraph(n int, edges []encode.Edge, keep func(e *encode.Edge) bool) *graph {
	g := &graph{n: n, start: make([]int32, n+1), edges: edges}
	for i := range edges {
		if keep(&edges[i]) {
			g.start[edges[i].From+1]++
		}
	}
	for v := 0; v < n; v++ {
		g.start[v+1] += g.start[v]
	}
	g.ids = make([]int32, g.start[n])
	fill := append([]int32(nil), g.start[:n]...)
	for i := range edges {
		if keep(&edges[i]) {
			f := edges[i].From
			g.ids[fill[f]] = int32(i)
			fill[f]++
		}
	}
	return g
}

// sccs returns the strongly connected components with more than one node, or with a
// self-loop, restricted to nodes where in(v) holds and edges where ok(e) holds
// (iterative Tarjan).
func (g *graph) sccs(in func(v int32) bool, ok func(e *encode.Edge) bool) [][]int32 {
	const unvisited = -1
	index := make([]int32, g.n)
	low := make([]int32, g.n)
	onStack := make([]bool, g.n)
	for i := range index {
		index[i] = unvisited
	}
	var stack, out []int32
	type frame struct{ v, next int32 }
	var call []frame
	next := int32(0)
	var comps [][]int32
	for root := int32(0); root < int32(g.n); root++ {
		if index[root] != unvisited || !in(root) {
			continue
		}
		call = append(call, frame{root, g.start[root]})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.next < g.start[v+1] {
				e := &g.edges[g.ids[f.next]]
				f.next++
				w := e.To
				if !ok(e) || !in(w) {
					continue
				}
				if index[w] == unvisited {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, g.start[w]})
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				if low[v] < low[p] {
					low[p] = low[v]
				}
			}
			if low[v] == index[v] {
				out = out[:0]
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					out = append(out, w)
					if w == v {
						break
					}
				}
				if len(out) > 1 || g.selfLoop(v, ok) {
					comps = append(comps, append([]int32(nil), out...))
				}
			}
		}
	}
	return comps
}

func (g *graph) selfLoop(v int32, ok func(e *encode.Edge) bool) bool {
	for _, id := range g.ids[g.start[v]:g.start[v+1]] {
		if e := &g.edges[id]; e.To == v && ok(e) {
			return true
		}
	}
	return false
}

// path finds a shortest path of edge ids from src to dst (src == dst: a shortest cycle
// through src) using nodes with in(v) and edges with ok(e); nil if none.
func (g *graph) path(src, dst int32, in func(v int32) bool, ok func(e *encode.Edge) bool, scratch *bfsScratch) []int32 {
	scratch.reset(g.n)
	queue := scratch.queue[:0]
	queue = append(queue, src)
	scratch.mark(src, -1)
	found := int32(-1)
	for qi := 0; qi < len(queue) && found < 0; qi++ {
		v := queue[qi]
		for _, id := range g.ids[g.start[v]:g.start[v+1]] {
			e := &g.edges[id]
			if !ok(e) || !in(e.To) {
				continue
			}
			if e.To == dst {
				found = id
				break
			}
			if !scratch.seen(e.To) {
				scratch.mark(e.To, id)
				queue = append(queue, e.To)
			}
		}
	}
	scratch.queue = queue
	if found < 0 {
		return nil
	}
	var rev []int32
	for id := found; id >= 0; {
		rev = append(rev, id)
		from := g.edges[id].From
		if from == src {
			break
		}
		id = scratch.via[from]
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// bfsScratch is reusable BFS state; marks are versioned so reset is O(1).
type bfsScratch struct {
	via   []int32
	stamp []int32
	epoch int32
	queue []int32
}

func (s *bfsScratch) reset(n int) {
	if len(s.stamp) < n {
		s.stamp = make([]int32, n)
		s.via = make([]int32, n)
		s.epoch = 0
	}
	s.epoch++
}

func (s *bfsScratch) mark(v, via int32) { s.stamp[v], s.via[v] = s.epoch, via }
func (s *bfsScratch) seen(v int32) bool { return s.stamp[v] == s.epoch }

// reversePostorder returns the nodes in reverse DFS postorder over the edges where ok
// holds: a topological order when those edges are acyclic, and a good approximation
// of one otherwise.
func (g *graph) reversePostorder(ok func(e *encode.Edge) bool) []int32 {
	order := make([]int32, g.n)
	at := int32(g.n)
	visited := make([]bool, g.n)
	next := append([]int32(nil), g.start[:g.n]...)
	var stack []int32
	for root := int32(0); root < int32(g.n); root++ {
		if visited[root] {
			continue
		}
		visited[root] = true
		stack = append(stack[:0], root)
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			if next[x] < g.start[x+1] {
				e := &g.edges[g.ids[next[x]]]
				next[x]++
				if ok(e) && !visited[e.To] {
					visited[e.To] = true
					stack = append(stack, e.To)
				}
				continue
			}
			stack = stack[:len(stack)-1]
			at--
			order[at] = x
		}
	}
	return order
}
