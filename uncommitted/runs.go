package uncommitted

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"

	"doppel/history"
	"doppel/internal/ordersearch"
)

// The runs search (DESIGN.md, "Read uncommitted", "The runs search"): the serial
// search (serial.go) where uncommitted appends (of :fail and :info transactions) may
// take positions of the longest reads. Such a position breaks its key's chain (no ww
// edge into or out of it, none bridged), so a key's committed positions form runs,
// each chained, with no order between runs. In a topological order of an acyclic
// attribution's graph, a committed writer W finds, for each position p it takes, p−1
// decided (taken by a writer before it, or uncommitted: a writer taking it later
// would precede W) or its own, p+1 not taken by a writer before it (W would precede
// that writer), and, when it leaves an append out, L's last position decided or its
// own (that writer precedes W). Its positions need not be contiguous: others' between
// them give no edge back to W when an uncommitted position breaks their run.
// Conversely an order in which every writer keeps these rules, with every position
// left undecided at the end given to an uncommitted append of its value (as many as
// there are), is an attribution whose ww edges the order follows. A position is made
// uncommitted lazily, when a rule needs it or at the end; an attribution's order, run
// so, keeps the rules with its own choices, so the search over every writer's choices
// is exact. The state (how far each process got, each position's status) fixes the
// rest of the search: failed states are remembered.

// runsMaxCombos bounds the choices of one writer tried (its keys' choices
// multiplied); past it the search is no longer exhaustive and proves valid only.
const runsMaxCombos = 64

// runsMaxOptions bounds the choices of a writer on one key (likewise).
const runsMaxOptions = 256

const (
	posOpen      = 0 // undecided
	posCommitted = 1 // taken by a committed writer that ran
	posUnc       = 2 // taken by an uncommitted append
)

type runsSearch struct {
	h        *history.History
	realtime bool
	keys     []int32   // the history's keys searched
	ls       [][]int32 // per key: its longest read, as local value ids
	orig     [][]int32 // per key: its longest read, as the history's value ids
	st       [][]uint8 // per key, per position: posOpen, posCommitted, posUnc
	owner    [][]int32 // per key, per position: the transaction that took it (committed)
	undec    [][]int32 // per key, per local value: undecided positions showing it
	okLeft   [][]int32 // per key, per local value: appends of writers not yet run
	uncLeft  [][]int32 // per key, per local value: uncommitted appends not yet placed
	lo       []int32   // per key: no undecided position before it
	hi       []int32   // per key: no decided position from it on (hi ≥ lo)
	blocks   [][]serialBlock
	writers  []int32
	chains   [][]int32
	chainOf  []int32
	inv      []int32
	comp     []int32
	// uncommitted: a writer that is not :ok. It has no edges and is never required;
	// as the database likely installed its appends where its process ran it, it runs
	// in its process's chain by taking, for each of its appends, the first decided
	// run's end showing the value (as uncommitted positions), or is skipped: either
	// choice leaves every attribution within reach (positions are made uncommitted
	// lazily anyway), so the search stays exact and follows the database's order.
	uncommitted []bool
	rank        []int32 // per writer: the order moves are tried in (interval midpoint)
	noDesig     bool    // the narrow search (narrow; not exhaustive)
	frontier    bool    // the narrow search keeps to the keys' frontiers (not unchained)
	// lazy: the narrow search leaves tokens where they are (no placeTokens); a
	// committed writer may take a position past its key's frontier by making every
	// undecided one before it uncommitted with tokens (fillable). For databases whose
	// uncommitted writers' appends were mostly never installed (first-committer-wins
	// aborts), where placing them at the frontiers takes the committed writers'
	// positions.
	lazy     bool
	tokens   [][]int32
	work     int64 // choices listed, for polling the limits
	nextPoll int64
	stopped  bool
	head     []int32
	stop     func() bool
	undo     []runsUndo
	marks    []int32 // per writer run: where its undo entries start
	order    []int32 // writers run, in order
	// incomplete: some writer had more choices than were tried (runsMaxCombos), so an
	// exhausted search proves nothing.
	incomplete bool
	states     int
	// window > 0: no process order (unchained); only the first window writers not
	// yet run, by rank, are candidates.
	window int
	// Scratch for a writer's choices: per block, its options; each option's changes.
	opts   [][]runsOption
	chg    []runsChange
	cands  []int32
	chosen []int32
	combos []runsCombo
	need   []int32 // options' counts per value (fillable)
	made   []int32 // options' positions made uncommitted per value (emit)
	desig  []int32 // an option's positions made uncommitted (emit)
}

// runsUndo is one change: a position's status (kind 0; 2: it used a token), or a
// token added (kind 1, p the local value).
type runsUndo struct {
	k, p int32
	kind uint8
}

type runsChange struct {
	p  int32
	st uint8
}

type runsOption struct {
	from, to int32 // its changes in chg
	desig    int32 // positions it makes uncommitted
	start    int32 // its first position (n: none)
}

type runsCombo struct {
	c, combo int32
	desig    int32
	inv      int32
}

// newRunsSearch returns nil when the search does not apply: a key with several longest
// reads, a read that shows a value more often than all transactions appended it, or
// too many processes.
func newRunsSearch(h *history.History, realtime bool, stop func() bool) *runsSearch {
	nkeys := len(h.Keys)
	longest, several := longestReads(h)
	s := &runsSearch{h: h, realtime: realtime, stop: stop}
	keyIdx := make([]int32, nkeys)
	var local []map[int32]int32
	for k := range keyIdx {
		keyIdx[k] = -1
		if len(longest[k]) == 0 {
			continue
		}
		if several[k] {
			return nil
		}
		keyIdx[k] = int32(len(s.keys))
		l, m := localValues(longest[k])
		undec := make([]int32, len(m))
		for _, v := range l {
			undec[v]++
		}
		s.keys = append(s.keys, int32(k))
		s.ls = append(s.ls, l)
		s.orig = append(s.orig, longest[k])
		s.st = append(s.st, make([]uint8, len(l)))
		s.owner = append(s.owner, make([]int32, len(l)))
		s.undec = append(s.undec, undec)
		s.okLeft = append(s.okLeft, make([]int32, len(m)))
		s.uncLeft = append(s.uncLeft, make([]int32, len(m)))
		local = append(local, m)
	}
	s.lo = make([]int32, len(s.keys))
	s.hi = make([]int32, len(s.keys))
	writerOf := map[int32]int32{}
	for t := range h.Txns {
		tx := &h.Txns[t]
		ok := tx.Status == history.OK
		bl := txnBlocks(h, int32(t), keyIdx, local)
		if !ok {
			// An uncommitted writer's appends of values L never shows take no
			// position and matter to nothing.
			kept := bl[:0]
			for _, b := range bl {
				if b.vals = slices.DeleteFunc(b.vals, func(v int32) bool { return v < 0 }); len(b.vals) > 0 {
					kept = append(kept, b)
				}
			}
			bl = kept
		}
		for _, b := range bl {
			for _, v := range b.vals {
				switch {
				case v < 0:
				case ok:
					s.okLeft[b.key][v]++
				default:
					s.uncLeft[b.key][v]++
				}
			}
		}
		if len(bl) == 0 {
			continue
		}
		writerOf[int32(t)] = int32(len(s.writers))
		s.writers = append(s.writers, int32(t))
		s.blocks = append(s.blocks, bl)
		s.inv = append(s.inv, tx.Invoke)
		s.comp = append(s.comp, tx.Complete)
		s.uncommitted = append(s.uncommitted, tx.Status != history.OK)
		s.rank = append(s.rank, int32(h.Midpoint(int32(t))))
	}
	for k := range s.keys {
		if !s.feasible(int32(k)) {
			return nil // a read shows a value more often than it was appended: a finding
		}
	}
	s.chains, s.chainOf = processChains(h, s.writers, writerOf)
	if len(s.chains) > serialMaxChains {
		return nil
	}
	s.head = make([]int32, len(s.chains))
	return s
}

// unchain drops process order: each writer is a chain of its own, in rank order, and
// only the first runsWindow not yet run are candidates (not exhaustive). For the plain
// form where no order keeps process order.
func (s *runsSearch) unchain() {
	order := make([]int32, len(s.writers))
	for w := range order {
		order[w] = int32(w)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return int(s.rank[a] - s.rank[b]) })
	s.chains = make([][]int32, len(order))
	for c, w := range order {
		s.chains[c] = []int32{w}
		s.chainOf[w] = int32(c)
	}
	s.head = make([]int32, len(s.chains))
	s.window = runsWindow
	// Without process order the order run is far from the database's: the frontier
	// rules lost the default faulty family's 300 seed 1 (found with them off).
	s.frontier = false
}

// runsWindow is how many writers the unchained search considers at a time.
const runsWindow = 32

// narrow makes the search narrow (noDesig): positions are made uncommitted by the
// uncommitted writers as they run, or with their tokens, or where no committed writer
// is left to take them.
func (s *runsSearch) narrow() {
	s.noDesig, s.frontier = true, true
	s.tokens = make([][]int32, len(s.keys))
	for k := range s.tokens {
		s.tokens[k] = make([]int32, len(s.uncLeft[k]))
	}
}

// feasible reports whether key k's undecided positions can still be filled: per value,
// no more of them than appends of writers yet to run and uncommitted appends unplaced.
func (s *runsSearch) feasible(k int32) bool {
	for v, n := range s.undec[k] {
		if n > s.okLeft[k][v]+s.uncLeft[k][v] {
			return false
		}
	}
	return true
}

// options lists in s.opts[bi] the choices of a writer appending vals (sorted local
// ids, -1 for values L never shows) to key k, as changes in s.chg: each shown append
// takes an undecided position showing its value or is left out, such that before each
// position taken is a decided one or one of the writer's own (or one made uncommitted
// now), after it none a writer before took, and, when an append is left out, L's last
// position is decided (or made uncommitted now).
func (s *runsSearch) options(bi int, k int32, vals []int32) {
	l, st, unc := s.ls[k], s.st[k], s.uncLeft[k]
	n := int32(len(l))
	first := 0
	for first < len(vals) && vals[first] < 0 {
		first++
	}
	shown, leave := vals[first:], first > 0
	// forced reports whether a position showing v can only take an uncommitted
	// append: no other committed writer left appends v to the key.
	forced := func(v int32) bool {
		c := s.okLeft[k][v]
		for _, u := range shown {
			if u == v {
				c--
			}
		}
		return c == 0
	}
	// Candidate positions (the same for equal values): those whose predecessor is
	// decided (or may be made uncommitted), then those right after a candidate (the
	// writer's own may precede them), as many times as it has appends less one.
	ok := func(p int32) bool {
		return st[p] == posOpen && slices.Contains(shown, l[p]) && (p+1 == n || st[p+1] != posCommitted)
	}
	// fillable(p), lazily: whether the positions from the frontier to p (excluded)
	// are all undecided and can all be made uncommitted now (with tokens, or
	// forced); counted incrementally as p grows.
	need := s.need[:0]
	if s.lazy { // only the lazy restarts call fillable
		for range unc {
			need = append(need, 0)
		}
		s.need = need
	}
	fillTo, fillOK := s.lo[k], true
	fillable := func(p int32) bool {
		for ; fillOK && fillTo < p; fillTo++ {
			v := l[fillTo]
			need[v]++
			fillOK = st[fillTo] == posOpen && need[v] <= unc[v] && (need[v] <= s.tokens[k][v] || forced(v))
		}
		return fillOK
	}
	cands := s.cands[:0]
	for p := s.lo[k]; p < n; p++ {
		switch {
		case !ok(p):
		case s.frontier && p > s.lo[k]+1:
			// The narrow search takes positions at the frontier only: the first
			// undecided one, or the one after it made uncommitted (lazily, any
			// after the frontier, every one before it made uncommitted).
			if s.lazy && fillable(p) {
				cands = append(cands, p)
				continue
			}
			if p == 0 || st[p-1] != posOpen || unc[l[p-1]] > 0 {
				s.incomplete = true // a choice cut
				p = n
			}
		case p == 0 || st[p-1] != posOpen:
			cands = append(cands, p)
		case unc[l[p-1]] > 0:
			if s.noDesig && !forced(l[p-1]) && s.tokens[k][l[p-1]] == 0 {
				s.incomplete = true // a choice cut
			} else {
				cands = append(cands, p)
			}
		}
	}
	for i, from := 1, 0; i < len(shown); i++ {
		to := len(cands)
		for _, p := range cands[from:to] {
			if p+1 < n && ok(p+1) && !slices.Contains(cands, p+1) {
				cands = append(cands, p+1)
			}
		}
		from = to
	}
	s.cands = cands
	chosen := s.chosen[:0]
	desig := s.desig[:0]
	full := false // runsMaxOptions reached
	emit := func() {
		// The positions made uncommitted: before a position taken, and L's last
		// when an append is left out.
		desig = desig[:0]
		taken := func(p int32) bool { return slices.Contains(chosen, p) }
		left := leave
		for _, q := range chosen {
			if q < 0 {
				left = true
				continue
			}
			if q > 0 && st[q-1] == posOpen && !taken(q-1) && !slices.Contains(desig, q-1) {
				desig = append(desig, q-1)
			}
		}
		before := len(desig) // at most one per position taken
		if s.lazy {
			// The frontier's undecided positions before the first one taken, or,
			// when an append is left out, all but L's last (which the rules make
			// uncommitted anyway): the database left it out once L was complete.
			q := n
			for _, c := range chosen {
				if c >= 0 {
					q = min(q, c)
				}
			}
			for p := s.lo[k]; p+1 < q; p++ {
				// What this loop added lies before p, so only the positions added
				// before the loop can be p (scanning all of them was quadratic in
				// the frontier: half of a check's time on 30 processes of zipf keys
				// of six values).
				if st[p] == posOpen && !taken(p) && !slices.Contains(desig[:before], p) {
					desig = append(desig, p)
					s.incomplete = true // more made uncommitted than the rules need
				}
			}
			// Quadratic in a long frontier: counted, so that the limits are asked
			// (one listing of a writer's choices took seconds at 10K transactions,
			// past --timeout).
			s.work += int64(max(0, q-s.lo[k])) * int64(1+len(desig)/8)
		}
		if left && st[n-1] == posOpen && !taken(n-1) && !slices.Contains(desig, n-1) {
			desig = append(desig, n-1)
		}
		// Positions showing each value made uncommitted, counted once.
		counts := s.made[:0]
		for range unc {
			counts = append(counts, 0)
		}
		for _, e := range desig {
			counts[l[e]]++
		}
		s.made = counts
		made := func(v int32) int32 { return counts[v] }
		for _, d := range desig {
			if made(l[d]) > unc[l[d]] {
				return
			}
		}
		if s.noDesig {
			// Only with tokens, or positions no other committed writer can take: at
			// the history's end the longest read's tail shows appends of uncommitted
			// writers run before it was reached.
			for _, d := range desig {
				if !forced(l[d]) && made(l[d]) > s.tokens[k][l[d]] {
					s.incomplete = true // a choice cut
					return
				}
			}
		}
		if len(s.opts[bi]) >= runsMaxOptions {
			s.incomplete, full = true, true
			return
		}
		from := int32(len(s.chg))
		start := n
		for _, d := range desig {
			s.chg = append(s.chg, runsChange{d, posUnc})
		}
		for _, q := range chosen {
			if q >= 0 {
				s.chg = append(s.chg, runsChange{q, posCommitted})
				start = min(start, q)
			}
		}
		s.opts[bi] = append(s.opts[bi], runsOption{from: from, to: int32(len(s.chg)), desig: int32(len(desig)), start: start})
	}
	// Each shown append in turn: a candidate position after the one an equal value
	// before it took (so that equal appends are not permuted), or left out (and then
	// the equal ones after it too).
	var choose func(i int)
	choose = func(i int) {
		s.work++
		if full || s.poll() {
			return
		}
		if i == len(shown) {
			emit()
			return
		}
		after, outOnly := int32(-1), false
		if i > 0 && shown[i-1] == shown[i] {
			after = chosen[i-1]
			outOnly = after < 0
		}
		if !outOnly {
			for _, p := range cands {
				if p <= after || l[p] != shown[i] {
					continue
				}
				chosen = append(chosen, p)
				choose(i + 1)
				chosen = chosen[:len(chosen)-1]
			}
		}
		chosen = append(chosen, -1)
		choose(i + 1)
		chosen = chosen[:len(chosen)-1]
	}
	choose(0)
	s.chosen, s.desig = chosen, desig
}

// choices lists writer w's choices on every key it appends to (s.opts, s.chg) and
// returns how many combinations there are (capped at runsMaxCombos).
func (s *runsSearch) choices(w int32) int {
	if s.uncommitted[w] {
		return 2
	}
	bl := s.blocks[w]
	for len(s.opts) < len(bl) {
		s.opts = append(s.opts, nil)
	}
	s.chg = s.chg[:0]
	total := 1
	for bi, b := range bl {
		s.opts[bi] = s.opts[bi][:0]
		s.options(bi, b.key, b.vals)
		o := s.opts[bi]
		if len(o) == 0 {
			return 0
		}
		// Fewest uncommitted positions first, then the earliest.
		slices.SortStableFunc(o, func(a, b runsOption) int {
			if a.desig != b.desig {
				return int(a.desig - b.desig)
			}
			return int(a.start - b.start)
		})
		total *= len(o)
	}
	// Past runsMaxCombos, drop the options making the most positions uncommitted
	// from the keys with the most options: every key keeps its cheapest (with the
	// first ones kept per key, mixed-radix combinations would reach only the first
	// key's options).
	for total > runsMaxCombos {
		s.incomplete = true
		long := 0
		for bi := range bl {
			if len(s.opts[bi]) > len(s.opts[long]) {
				long = bi
			}
		}
		total = total / len(s.opts[long]) * (len(s.opts[long]) - 1)
		s.opts[long] = s.opts[long][:len(s.opts[long])-1]
	}
	return total
}

// pick returns the option index per block of combination combo (mixed radix, the
// first block fastest).
func (s *runsSearch) pick(bi int, combo int) int {
	for j := 0; j < bi; j++ {
		combo /= len(s.opts[j])
	}
	return combo % len(s.opts[bi])
}

// poll asks the limits every 2^18 units of work (choices listed, positions visited)
// and reports whether they stopped the search.
func (s *runsSearch) poll() bool {
	if s.work >= s.nextPoll {
		s.nextPoll = s.work + 1<<18
		s.stopped = s.stopped || s.stop != nil && s.stop()
	}
	return s.stopped
}

// Candidates appends the moves (process and choice) of the processes whose next
// writer may run (real time allowing): fewest positions made uncommitted first, then
// earliest invocation.
func (s *runsSearch) Candidates(buf []int32) []int32 {
	seen := 0
	// The choices of a writer with several appends to a key may take long to list:
	// the limits are polled by work too, not only every 1024 steps of the search.
	if s.poll() {
		return buf // the search ends as stopped (run), whatever it records
	}
	minComp := int32(-1)
	if s.realtime {
		for c, ch := range s.chains {
			if int(s.head[c]) < len(ch) {
				if w := ch[s.head[c]]; !s.uncommitted[w] && s.comp[w] >= 0 && (minComp < 0 || s.comp[w] < minComp) {
					minComp = s.comp[w]
				}
			}
		}
	}
	s.combos = s.combos[:0]
	for c, ch := range s.chains {
		if int(s.head[c]) >= len(ch) {
			continue
		}
		if seen++; s.window > 0 && seen > s.window {
			s.incomplete = true // writers past the window not tried
			break
		}
		w := ch[s.head[c]]
		if s.uncommitted[w] {
			s.combos = append(s.combos, runsCombo{c: int32(c), combo: 0, inv: s.rank[w]})
			if !s.frontier { // skipping would leave tokens that placeTokens places alike
				s.combos = append(s.combos, runsCombo{c: int32(c), combo: 1, inv: s.rank[w]})
			}
			continue
		}
		if minComp >= 0 && s.inv[w] >= 0 && minComp < s.inv[w] {
			continue
		}
		nc := s.choices(w)
		for combo := 0; combo < nc; combo++ {
			desig := int32(0)
			for bi := range s.blocks[w] {
				desig += s.opts[bi][s.pick(bi, combo)].desig
			}
			s.combos = append(s.combos, runsCombo{c: int32(c), combo: int32(combo), desig: desig, inv: s.rank[w]})
		}
	}
	slices.SortStableFunc(s.combos, func(a, b runsCombo) int {
		if a.desig != b.desig {
			return int(a.desig - b.desig)
		}
		return int(a.inv - b.inv)
	})
	for _, m := range s.combos {
		buf = append(buf, m.c<<6|m.combo)
	}
	return buf
}

// Run makes move m: its process's next writer with the choice it names.
func (s *runsSearch) Run(m int32) bool {
	c, combo := m>>6, int(m&63) // combo < runsMaxCombos
	w := s.chains[c][s.head[c]]
	if combo >= s.choices(w) {
		return false
	}
	mark := int32(len(s.undo))
	if s.uncommitted[w] {
		s.place(w, combo == 0)
	} else {
		for bi, b := range s.blocks[w] {
			o := s.opts[bi][s.pick(bi, combo)]
			for _, ch := range s.chg[o.from:o.to] {
				s.set(b.key, ch.p, ch.st, s.writers[w])
			}
			for _, v := range b.vals {
				if v >= 0 {
					s.okLeft[b.key][v]--
				}
			}
		}
	}
	if s.frontier && !s.lazy {
		s.placeTokens(w)
	}
	for _, b := range s.blocks[w] {
		if !s.feasible(b.key) {
			s.revert(w, mark)
			return false
		}
	}
	s.ran(c, w, mark)
	return true
}

// place runs uncommitted writer w (or skips it, !run): each of its appends takes the
// first undecided position after a decided one (or the first) that shows its value,
// if any. In the narrow search (noDesig) an append not placed becomes a token, which
// a committed writer may later use to make a position showing its value uncommitted;
// keeping to the frontiers, every append becomes one (placeTokens places them).
func (s *runsSearch) place(w int32, run bool) {
	if s.frontier {
		// Its appends become tokens, which take its keys' frontiers where they show
		// their values (placeTokens, after the run), in any order of its appends.
		for _, b := range s.blocks[w] {
			for _, v := range b.vals {
				s.tokens[b.key][v]++
				s.undo = append(s.undo, runsUndo{b.key, v, 1})
			}
		}
		return
	}
	for _, b := range s.blocks[w] {
		k := b.key
		l, st := s.ls[k], s.st[k]
		for _, v := range b.vals {
			placed := false
			for p := s.lo[k]; run && !placed && p < int32(len(l)) && s.uncLeft[k][v] > 0; p++ {
				if st[p] == posOpen && l[p] == v && (p == 0 || st[p-1] != posOpen) {
					s.set(k, p, posUnc, -1)
					placed = true
				}
			}
			if !placed && s.noDesig {
				s.tokens[k][v]++
				s.undo = append(s.undo, runsUndo{k, v, 1})
			}
		}
	}
}

// placeTokens, in the narrow search after writer w ran: where a key of w's frontier
// shows a value an uncommitted writer run so far did not place (a token), that
// append takes it. The database put it at the list's end when it ran it, and the
// order run here is near the database's, not equal to it: an uncommitted writer run a
// little early finds its position not yet reached.
func (s *runsSearch) placeTokens(w int32) {
	for _, b := range s.blocks[w] {
		k := b.key
		l := s.ls[k]
		for lo := s.lo[k]; lo < int32(len(l)) && s.tokens[k][l[lo]] > 0 && s.uncLeft[k][l[lo]] > 0; lo = s.lo[k] {
			s.set(k, lo, posUnc, s.writers[w]) // uses the token
			s.incomplete = true                // a committed writer taking it is not tried
		}
	}
}

// ran records writer w, of chain c, as run (its changes from undo[mark:]).
func (s *runsSearch) ran(c, w, mark int32) {
	s.marks = append(s.marks, mark)
	s.head[c]++
	s.order = append(s.order, w)
}

func (s *runsSearch) set(k, p int32, to uint8, t int32) {
	v := s.ls[k][p]
	kind := uint8(0)
	if to == posUnc && t >= 0 && s.noDesig && s.tokens[k][v] > 0 {
		s.tokens[k][v]-- // a committed writer's designation uses a token first
		kind = 2
	}
	s.undo = append(s.undo, runsUndo{k, p, kind})
	s.st[k][p] = to
	s.undec[k][v]--
	if to == posUnc {
		s.uncLeft[k][v]--
	} else {
		s.owner[k][p] = t
	}
	for s.lo[k] < int32(len(s.st[k])) && s.st[k][s.lo[k]] != posOpen {
		s.lo[k]++
	}
	s.hi[k] = max(s.hi[k], p+1, s.lo[k])
}

// revert undoes writer w's changes from undo[mark:].
func (s *runsSearch) revert(w int32, mark int32) {
	for i := len(s.undo) - 1; i >= int(mark); i-- {
		u := s.undo[i]
		if u.kind == 1 {
			s.tokens[u.k][u.p]--
			continue
		}
		if u.kind == 2 {
			s.tokens[u.k][s.ls[u.k][u.p]]++
		}
		v := s.ls[u.k][u.p]
		if s.st[u.k][u.p] == posUnc {
			s.uncLeft[u.k][v]++
		}
		s.st[u.k][u.p] = posOpen
		s.undec[u.k][v]++
		s.lo[u.k] = min(s.lo[u.k], u.p)
		for st := s.st[u.k]; s.hi[u.k] > s.lo[u.k] && st[s.hi[u.k]-1] == posOpen; {
			s.hi[u.k]--
		}
	}
	s.undo = s.undo[:mark]
	if s.uncommitted[w] {
		return
	}
	for _, b := range s.blocks[w] {
		for _, v := range b.vals {
			if v >= 0 {
				s.okLeft[b.key][v]++
			}
		}
	}
}

// Undo reverts the last writer run.
func (s *runsSearch) Undo() {
	w := s.order[len(s.order)-1]
	s.order = s.order[:len(s.order)-1]
	mark := s.marks[len(s.marks)-1]
	s.marks = s.marks[:len(s.marks)-1]
	s.revert(w, mark)
	s.head[s.chainOf[w]]--
}

// Done reports whether every writer has run and every undecided position can take an
// uncommitted append.
func (s *runsSearch) Done() bool {
	for c, ch := range s.chains {
		if int(s.head[c]) < len(ch) {
			return false
		}
	}
	for k := range s.keys {
		for v, n := range s.undec[k] {
			if n > s.uncLeft[k][v] {
				return false
			}
		}
	}
	return true
}

// State encodes how far each process got and every key's positions' statuses (run
// lengths).
func (s *runsSearch) State(buf []byte) []byte {
	if s.window > 0 {
		var b byte
		for c, hd := range s.head {
			b |= byte(hd) << (c & 7)
			if c&7 == 7 || c == len(s.head)-1 {
				buf, b = append(buf, b), 0
			}
		}
	}
	for _, hd := range s.head {
		if s.window > 0 {
			break
		}
		buf = binary.AppendUvarint(buf, uint64(hd))
	}
	for k, st := range s.st {
		// From hi on every position is undecided: the runs end there.
		buf = binary.AppendUvarint(buf, uint64(s.lo[k]))
		for i, hi := int(s.lo[k]), int(s.hi[k]); i < hi; {
			j := i + 1
			for j < hi && st[j] == st[i] {
				j++
			}
			buf = binary.AppendUvarint(buf, uint64(j-i)<<2|uint64(st[i]))
			i = j
		}
		buf = append(buf, 0)
	}
	for _, tk := range s.tokens {
		for _, c := range tk {
			buf = binary.AppendUvarint(buf, uint64(c))
		}
	}
	return buf
}

// run reports Valid (the order run is complete), Invalid (no order is, and every
// choice was tried) or Unknown (past maxStates failed states, or stopped).
func (s *runsSearch) run(maxStates int) Verdict {
	r := ordersearch.Search(s, ordersearch.Limits{MaxStates: maxStates, MaxBytes: serialMemoBytes, Stop: s.stop})
	s.states = r.States
	switch {
	case s.stopped && r.Outcome != ordersearch.Found:
		return Unknown
	case r.Outcome == ordersearch.Found:
		return Valid
	case r.Outcome == ordersearch.Exhausted && !s.incomplete:
		return Invalid
	}
	return Unknown
}

// attribution turns the complete order into an attribution of x's open keys (nil
// when a key's longest read is not the search's).
func (s *runsSearch) attribution(x *Index) []keyAttribution {
	at := map[int32]int{}
	for i, k := range s.keys {
		at[k] = i
	}
	attr := make([]keyAttribution, len(x.open))
	for i, o := range x.open {
		ki, ok := at[o.key]
		if !ok {
			return nil
		}
		li := slices.IndexFunc(o.ls, func(l []int32) bool { return slices.Equal(l, s.orig[ki]) })
		if li < 0 {
			return nil
		}
		a := keyAttribution{li: li, at: make([]int32, len(s.orig[ki]))}
		for p, st := range s.st[ki] {
			a.at[p] = -1
			if st == posCommitted {
				a.at[p] = s.owner[ki][p]
			}
		}
		attr[i] = a
	}
	return attr
}

// Runs decides the strong forms of read uncommitted (process order, and real time with
// realtime) by the runs search where uncommitted appends may take positions: Valid when
// the order it finds passes verifyAttribution under the model, Invalid when no order
// exists and every choice was tried (a proof with process order only), else Unknown.
// Without process order asked the search still keeps it: an order found is a witness.
func (x *Index) Runs(process, realtime bool, stop func() bool) Verdict {
	return x.runs(process && realtime, true, process, realtime, serialMaxStates, stop)
}

// runs runs the search under real-time order when searchRealtime (a witness for the
// weaker forms too), within maxStates failed states, and checks what it finds under
// the model (process, realtime).
func (x *Index) runs(searchRealtime, chained, process, realtime bool, maxStates int, stop func() bool) Verdict {
	// First narrow (narrow: positions made uncommitted where the database put the
	// uncommitted writers' appends), which finds the orders of faulty databases'
	// histories the whole search gets lost in (the aborted-read family at 1,000
	// transactions: valid after a few failed states, against unknown after 1M). Its
	// dead ends are heavy-tailed: a wrong turn far back is found late, and another
	// order of ties avoids it, so it restarts with the writers' ranks jittered
	// (deterministically) and growing budgets. Every other restart is lazy (s.lazy):
	// greedy token placement follows databases that installed their uncommitted
	// writers' appends (aborted reads), lazy designation those that mostly did not
	// (first-committer-wins aborts). Then the whole search.
	spent := 0
	for r, budget := 0, runsRestartStates; spent < maxStates; r, budget = r+1, budget*3/2 {
		if !chained {
			budget = maxStates // no restarts: measured, they only cut its runs short
		}
		budget = min(budget, maxStates-spent)
		s := newRunsSearch(x.h, searchRealtime, stop)
		if s == nil {
			return Unknown
		}
		s.narrow()
		s.lazy = r%2 == 1 && chained // every other restart
		if r > 0 {
			s.jitter(uint64(r))
		}
		if !chained {
			s.unchain()
		}
		v := x.runsVerdict(s, process, realtime, budget)
		spent += budget
		if v != Unknown || stop != nil && stop() {
			return v
		}
	}
	s := newRunsSearch(x.h, searchRealtime, stop)
	if s == nil || !chained {
		return Unknown
	}
	// The whole search gets lost sooner where the narrow one fails.
	return x.runsVerdict(s, process, realtime, maxStates/4)
}

// runsRestartStates is the narrow runs search's first budget of failed states.
const runsRestartStates = 8192

// jitter moves each writer's midpoint by up to a quarter of its interval,
// pseudo-randomly by seed.
func (s *runsSearch) jitter(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x72756e73))
	for w := range s.rank {
		tx := &s.h.Txns[s.writers[w]]
		d := int64(1)
		if tx.Complete >= 0 && tx.Invoke >= 0 {
			d = int64(tx.Complete-tx.Invoke) + 1
		}
		s.rank[w] += int32(rng.Int64N(d+1) - d/2) // the rank is twice the midpoint
	}
}

// runsVerdict runs s and checks what it finds under the model (process, realtime).
func (x *Index) runsVerdict(s *runsSearch, process, realtime bool, maxStates int) Verdict {
	v := s.run(maxStates)
	x.addStates(s.states)
	switch v {
	case Valid:
		if attr := s.attribution(x); attr != nil && x.verifyAttribution(process, realtime, attr) {
			return Valid
		}
	case Invalid:
		if process && s.realtime == realtime {
			return Invalid
		}
	}
	return Unknown
}
