//go:build diagnose

package uncommitted

// A diagnostic for the narrow runs search, not a test: built only with -tags diagnose.
// It runs the narrow search (strong read uncommitted) on a history, reports the
// deepest state it reached and, given the attribution the database made (from the
// simulator: workload/diagnose_test.go; from othergen: its --witness schedule), where
// the search's positions first differ from it. With the database's commit order as
// the ranks, it shows whether the search's rules or its order lose the way.
//
//	go test -tags diagnose ./uncommitted -run TestDiagnoseRuns -args \
//	    -diagnose-file H.edn [-diagnose-order H.order] [-diagnose-attr H.attr]
//
// H.order: one invoke :index per line, in commit order. H.attr: "key position invoke"
// per line, each append's position in its key's list (the key as the history spells it).

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"doppel/history"
	"doppel/internal/ordersearch"
)

var (
	diagnoseFile   = flag.String("diagnose-file", "", "the history to diagnose")
	diagnoseOrder  = flag.String("diagnose-order", "", "invoke indexes in commit order: the ranks instead of midpoints")
	diagnoseAttr   = flag.String("diagnose-attr", "", "the database's attribution: key position invoke, per line")
	diagnoseLazy   = flag.Bool("diagnose-lazy", false, "the lazy narrow search (designations past the frontier) instead of the greedy one")
	diagnoseStates = flag.Int("diagnose-states", runsRestartStates, "failed states before giving up")
)

// deepest wraps the search and keeps a description of the deepest state reached.
type deepest struct {
	*runsSearch
	depth int
	text  string
	attr  map[[2]int32]int32 // (search key, position) -> transaction; -1: not :ok
}

func (d *deepest) Candidates(buf []int32) []int32 {
	n := len(buf)
	buf = d.runsSearch.Candidates(buf)
	if len(d.order) > d.depth {
		d.depth = len(d.order)
		d.text = fmt.Sprintf("%d moves there\n", len(buf)-n) + d.describe()
	}
	return buf
}

// describe names the writer with the earliest completion not run (real time holds
// every writer invoked after it back) and its keys' frontiers, then where the
// positions before them differ from the attribution.
func (d *deepest) describe() string {
	s := d.runsSearch
	var b strings.Builder
	first := int32(-1)
	for c, ch := range s.chains {
		if int(s.head[c]) < len(ch) {
			if w := ch[s.head[c]]; !s.uncommitted[w] && s.comp[w] >= 0 && (first < 0 || s.comp[w] < s.comp[first]) {
				first = w
			}
		}
	}
	if first < 0 {
		return "no committed writer waits\n"
	}
	fmt.Fprintf(&b, "first by completion: T%d (invoke %d, complete %d)\n", s.writers[first], s.inv[first], s.comp[first])
	for _, bl := range s.blocks[first] {
		k := bl.key
		fmt.Fprintf(&b, "  key %s appends %v; frontier %d of %d:", s.h.Keys[s.keys[k]], bl.vals, s.lo[k], len(s.ls[k]))
		for p := s.lo[k]; p < int32(len(s.ls[k])) && p < s.lo[k]+12; p++ {
			fmt.Fprintf(&b, " %d%c", s.ls[k][p], ".CU"[s.st[k][p]])
		}
		fmt.Fprintf(&b, "; committed left %v, uncommitted left %v, tokens %v\n", s.okLeft[k], s.uncLeft[k], s.tokens[k])
		if d.attr == nil {
			continue
		}
		for p := max(0, s.lo[k]-6); p < int32(len(s.ls[k])) && p < s.lo[k]+12; p++ {
			want, ok := d.attr[[2]int32{k, p}]
			got := int32(-1)
			if s.st[k][p] == posCommitted {
				got = s.owner[k][p]
			}
			extra := ""
			if ok && want >= 0 {
				tx := &s.h.Txns[want]
				w := int32(-1)
				for i, x := range s.writers {
					if x == want {
						w = int32(i)
					}
				}
				c := s.chainOf[w]
				extra = fmt.Sprintf(" inv %d comp %d chain %d head %d at %d; blocks %v", tx.Invoke, tx.Complete, c, s.head[c], slices.Index(s.chains[c], w), s.blocks[w])
			}
			fmt.Fprintf(&b, "    p%d v%d st %c search %s db %s%s\n", p, s.ls[k][p], ".CU"[s.st[k][p]], txnOrNone(got), txnOrNone(want), extra)
		}
		su, du := 0, 0
		for p := int32(0); p < s.lo[k]; p++ {
			if s.st[k][p] == posUnc {
				su++
			}
			if want, ok := d.attr[[2]int32{k, p}]; ok && want < 0 {
				du++
			}
			if su-du >= 3 || p+1 == s.lo[k] {
				fmt.Fprintf(&b, "    the search has %d uncommitted positions before %d, the database %d\n", su, p+1, du)
				break
			}
		}
		shown := 0
		for p := int32(0); p < s.lo[k] && shown < 12; p++ {
			want, ok := d.attr[[2]int32{k, p}]
			if !ok {
				continue
			}
			got := int32(-1)
			if s.st[k][p] == posCommitted {
				got = s.owner[k][p]
			}
			if got != want {
				shown++
				fmt.Fprintf(&b, "    position %d: the search has %s, the database %s\n", p, txnOrNone(got), txnOrNone(want))
			}
		}
	}
	return b.String()
}

func txnOrNone(t int32) string {
	if t < 0 {
		return "an uncommitted append"
	}
	return fmt.Sprintf("T%d", t)
}

func TestDiagnoseRuns(t *testing.T) {
	if *diagnoseFile == "" {
		t.Fatal("-diagnose-file is required")
	}
	h, err := history.ParseFile(*diagnoseFile)
	if err != nil {
		t.Fatal(err)
	}
	s := newRunsSearch(h, true, nil)
	if s == nil {
		t.Fatal("the runs search does not apply")
	}
	s.narrow()
	s.lazy = *diagnoseLazy
	byInvoke := map[int32]int32{}
	for i := range h.Txns {
		byInvoke[h.Txns[i].Invoke] = int32(i)
	}
	if *diagnoseOrder != "" {
		rank := map[int32]int32{}
		lines(t, *diagnoseOrder, func(f []string) {
			var inv int32
			fmt.Sscan(f[0], &inv)
			rank[inv] = int32(len(rank))
		})
		for w := range s.rank {
			s.rank[w] = rank[s.inv[w]] // never committed: 0, first
		}
	}
	d := &deepest{runsSearch: s}
	if *diagnoseAttr != "" {
		d.attr = map[[2]int32]int32{}
		readAttr(t, s, byInvoke, func(k, p, tx int32) {
			if h.Txns[tx].Status != history.OK {
				tx = -1
			}
			d.attr[[2]int32{k, p}] = tx
		})
	}
	r := ordersearch.Search(d, ordersearch.Limits{MaxStates: *diagnoseStates, MaxBytes: serialMemoBytes})
	fmt.Printf("outcome %v after %d failed states; %d writers, deepest %d\n%s", r.Outcome, r.States, len(s.writers), d.depth, d.text)
}

// readAttr calls each with every append of the database's attribution
// (-diagnose-attr) at a position of the search's longest reads: the search's key, the
// position and the transaction (byInvoke maps invoke :index to transaction).
func readAttr(t *testing.T, s *runsSearch, byInvoke map[int32]int32, each func(k, p, tx int32)) {
	keyOf := map[string]int32{}
	for i, k := range s.keys {
		keyOf[s.h.Keys[k]] = int32(i)
	}
	lines(t, *diagnoseAttr, func(f []string) {
		var p, inv int32
		fmt.Sscan(f[1], &p)
		fmt.Sscan(f[2], &inv)
		k, ok := keyOf[f[0]]
		tx, known := byInvoke[inv]
		if ok && known && int(p) < len(s.ls[k]) {
			each(k, p, tx)
		}
	})
}

func lines(t *testing.T, path string, each func([]string)) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			each(fs)
		}
	}
}

// TestDiagnoseReplay runs the database's own order (-diagnose-order) through the
// search's moves and reports the first writer whose attribution (-diagnose-attr) the
// search does not offer.
func TestDiagnoseReplay(t *testing.T) {
	h, err := history.ParseFile(*diagnoseFile)
	if err != nil {
		t.Fatal(err)
	}
	s := newRunsSearch(h, true, nil)
	s.narrow()
	s.lazy = *diagnoseLazy
	byInvoke := map[int32]int32{}
	for i := range h.Txns {
		byInvoke[h.Txns[i].Invoke] = int32(i)
	}
	wOf := map[int32]int32{}
	for w, x := range s.writers {
		wOf[x] = int32(w)
	}
	dbPos := map[int32][][2]int32{} // writer -> (key, position)
	readAttr(t, s, byInvoke, func(k, p, tx int32) {
		if w, ok := wOf[tx]; ok {
			dbPos[w] = append(dbPos[w], [2]int32{k, p})
		}
	})
	var order []int32
	lines(t, *diagnoseOrder, func(f []string) {
		var inv int32
		fmt.Sscan(f[0], &inv)
		if tx, ok := byInvoke[inv]; ok {
			if w, ok := wOf[tx]; ok {
				order = append(order, w)
			}
		}
	})
	// :fail writers (never in the order) run first: their appends are tokens.
	inOrder := map[int32]bool{}
	for _, w := range order {
		inOrder[w] = true
	}
	var all []int32
	for _, w := range order {
		c := s.chainOf[w]
		for _, u := range s.chains[c] {
			if u == w {
				break
			}
			if !inOrder[u] && !slices.Contains(all, u) {
				all = append(all, u)
			}
		}
		all = append(all, w)
	}
	var cands []int32
	for i, w := range all {
		c := s.chainOf[w]
		if s.chains[c][s.head[c]] != w {
			fmt.Printf("step %d: T%d is not its process's next (T%d is)\n", i, s.writers[w], s.writers[s.chains[c][s.head[c]]])
			return
		}
		cands = s.Candidates(cands[:0])
		nc := s.choices(w)
		found := -1
		if s.uncommitted[w] {
			found, nc = 0, 0
		}
		for combo := 0; combo < nc && found < 0; combo++ {
			var got [][2]int32
			for bi, b := range s.blocks[w] {
				o := s.opts[bi][s.pick(bi, combo)]
				for _, ch := range s.chg[o.from:o.to] {
					if ch.st == posCommitted {
						got = append(got, [2]int32{b.key, ch.p})
					}
				}
			}
			if s.uncommitted[w] || sameSet(got, dbPos[w]) {
				found = combo
			}
		}
		// Else an equivalent choice: the same positions decided, as many taken.
		for combo := 0; combo < nc && found < 0; combo++ {
			var changed [][2]int32
			taken := 0
			for bi, b := range s.blocks[w] {
				o := s.opts[bi][s.pick(bi, combo)]
				for _, ch := range s.chg[o.from:o.to] {
					changed = append(changed, [2]int32{b.key, ch.p})
					if ch.st == posCommitted {
						taken++
					}
				}
			}
			if taken == len(dbPos[w]) && !slices.ContainsFunc(dbPos[w], func(x [2]int32) bool { return !slices.Contains(changed, x) }) {
				found = combo
			}
		}
		if found < 0 {
			fmt.Printf("step %d of %d: T%d (invoke %d, complete %d): the database's positions %v are not offered; options:\n", i, len(all), s.writers[w], s.inv[w], s.comp[w], dbPos[w])
			for bi, b := range s.blocks[w] {
				k := b.key
				fmt.Printf("  key %s appends %v, frontier %d:", h.Keys[s.keys[k]], b.vals, s.lo[k])
				for p := max(0, s.lo[k]-4); p < int32(len(s.ls[k])) && p < s.lo[k]+10; p++ {
					fmt.Printf(" %d:%d%c", p, s.ls[k][p], ".CU"[s.st[k][p]])
				}
				fmt.Printf("; tokens %v, uncommitted left %v\n", s.tokens[k], s.uncLeft[k])
				s.chg = s.chg[:0]
				s.opts[bi] = s.opts[bi][:0]
				s.options(bi, k, b.vals)
				fmt.Printf("    cands %v\n", s.cands)
				for _, o := range s.opts[bi] {
					fmt.Printf("    %v\n", s.chg[o.from:o.to])
				}
			}
			return
		}
		offered := slices.Contains(cands, c<<6|int32(found))
		if !s.Run(c<<6 | int32(found)) {
			fmt.Printf("step %d: T%d's move failed (offered %v)\n", i, s.writers[w], offered)
			return
		}
		if !offered {
			fmt.Printf("step %d: T%d's move ran but was not offered\n", i, s.writers[w])
		}
	}
	fmt.Printf("the database's order ran to the end; done %v\n", s.Done())
}

func sameSet(a, b [][2]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
