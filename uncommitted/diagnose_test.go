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
	"strings"
	"testing"

	"doppel/history"
	"doppel/internal/ordersearch"
)

var (
	diagnoseFile   = flag.String("diagnose-file", "", "the history to diagnose")
	diagnoseOrder  = flag.String("diagnose-order", "", "invoke indexes in commit order: the ranks instead of midpoints")
	diagnoseAttr   = flag.String("diagnose-attr", "", "the database's attribution: key position invoke, per line")
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
		keyOf := map[string]int32{}
		for i, k := range s.keys {
			keyOf[h.Keys[k]] = int32(i)
		}
		d.attr = map[[2]int32]int32{}
		lines(t, *diagnoseAttr, func(f []string) {
			var p, inv int32
			fmt.Sscan(f[1], &p)
			fmt.Sscan(f[2], &inv)
			k, ok := keyOf[f[0]]
			tx, known := byInvoke[inv]
			if !ok || !known || int(p) >= len(s.ls[k]) {
				return
			}
			if h.Txns[tx].Status != history.OK {
				tx = -1
			}
			d.attr[[2]int32{k, p}] = tx
		})
	}
	r := ordersearch.Search(d, ordersearch.Limits{MaxStates: *diagnoseStates, MaxBytes: serialMemoBytes})
	fmt.Printf("outcome %v after %d failed states; %d writers, deepest %d\n%s", r.Outcome, r.States, len(s.writers), d.depth, d.text)
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
