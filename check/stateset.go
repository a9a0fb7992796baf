package check

// stateSet is a set of 64-bit state hashes: the searches' memo of the states searched
// in full without success. The hashes are Zobrist hashes (random), so their low bits
// index a flat table directly, probed linearly and kept at most half full. On the hot
// keys with :info at 10K the strict search asks it ~1.5M times; Go's map took 13% of
// the search's time there.
type stateSet struct {
	slots []uint64 // 0: empty
	n     int      // hashes held in slots
	zero  bool     // the hash 0, which slots cannot hold
}

// has reports whether h is in the set.
func (m *stateSet) has(h uint64) bool {
	if h == 0 {
		return m.zero
	}
	if m.slots == nil {
		return false
	}
	mask := uint64(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch m.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// add puts h in the set.
func (m *stateSet) add(h uint64) {
	if h == 0 {
		m.zero = true
		return
	}
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	mask := uint64(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch m.slots[i] {
		case h:
			return
		case 0:
			m.slots[i] = h
			m.n++
			return
		}
	}
}

// grow doubles the table (the first: 1024 slots) and puts every hash back.
func (m *stateSet) grow() {
	old := m.slots
	m.slots = make([]uint64, max(1024, 2*len(old)))
	m.n = 0
	for _, h := range old {
		if h != 0 {
			m.add(h)
		}
	}
}

// clear empties the set, keeping its table.
func (m *stateSet) clear() {
	clear(m.slots)
	m.n, m.zero = 0, false
}

// len is how many hashes the set holds.
func (m *stateSet) len() int {
	if m.zero {
		return m.n + 1
	}
	return m.n
}
