package sat

// varHeap is a binary max-heap of variables ordered by activity, with an index per variable
// so that a bumped variable can be moved up in O(log n) (MiniSat's Heap).
type varHeap struct {
	act   *[]float64 // the solver's activities
	heap  []Var
	index []int32 // position of each variable in heap, -1 if absent
}

func (h *varHeap) less(a, b Var) bool { return (*h.act)[a] > (*h.act)[b] }

func (h *varHeap) grow(n int) {
	for len(h.index) < n {
		h.index = append(h.index, -1)
	}
}

func (h *varHeap) contains(v Var) bool { return h.index[v] >= 0 }

func (h *varHeap) empty() bool { return len(h.heap) == 0 }

func (h *varHeap) insert(v Var) {
	if h.index[v] >= 0 {
		return
	}
	h.index[v] = int32(len(h.heap))
	h.heap = append(h.heap, v)
	h.up(int(h.index[v]))
}

// increased restores the heap after v's activity grew.
func (h *varHeap) increased(v Var) {
	if i := h.index[v]; i >= 0 {
		h.up(int(i))
	}
}

func (h *varHeap) removeMax() Var {
	top := h.heap[0]
	last := h.heap[len(h.heap)-1]
	h.heap = h.heap[:len(h.heap)-1]
	h.index[top] = -1
	if len(h.heap) > 0 {
		h.heap[0] = last
		h.index[last] = 0
		h.down(0)
	}
	return top
}

func (h *varHeap) up(i int) {
	v := h.heap[i]
	for i > 0 {
		parent := (i - 1) >> 1
		if !h.less(v, h.heap[parent]) {
			break
		}
		h.heap[i] = h.heap[parent]
		h.index[h.heap[i]] = int32(i)
		i = parent
	}
	h.heap[i] = v
	h.index[v] = int32(i)
}

func (h *varHeap) down(i int) {
	v := h.heap[i]
	n := len(h.heap)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if child+1 < n && h.less(h.heap[child+1], h.heap[child]) {
			child++
		}
		if !h.less(h.heap[child], v) {
			break
		}
		h.heap[i] = h.heap[child]
		h.index[h.heap[i]] = int32(i)
		i = child
	}
	h.heap[i] = v
	h.index[v] = int32(i)
}
