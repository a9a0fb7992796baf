//go:build diagnose

package check

// Not a test: built only with -tags diagnose. It runs the greedy snapshot isolation
// replay (siSchedule, no guide) on a history whose store's attribution is known
// (tools/othergen/witness2attr.py's PREFIX.attr: key, position, the appending
// transaction's invoke :index) and reports where the replay's attribution first
// leaves the store's on each key, and what it is stuck on.
//
//	go test -tags diagnose ./check -run TestDiagnoseSIReplay -v -args \
//	    -diagnose-si-file h.edn -diagnose-si-attr /tmp/h.attr

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
)

var (
	diagnoseSIFile  = flag.String("diagnose-si-file", "", "the history")
	diagnoseSIAttr  = flag.String("diagnose-si-attr", "", "the store's attribution (key position invoke)")
	diagnoseSIGuide = flag.Bool("diagnose-si-guide", false, "guided by process and real-time order, as the checker's first try")
)

func TestDiagnoseSIReplay(t *testing.T) {
	h, err := history.ParseFile(*diagnoseSIFile)
	if err != nil {
		t.Fatal(err)
	}
	in := encode.Infer(h)
	byInvoke := map[int32]int32{}
	for i := range h.Txns {
		byInvoke[h.Txns[i].Invoke] = int32(i)
	}
	keyOf := map[string]int32{}
	for k, name := range h.Keys {
		keyOf[name] = int32(k)
	}
	store := map[[2]int32]int32{} // (key, position) -> transaction
	f, err := os.Open(*diagnoseSIAttr)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 {
			continue
		}
		var p, inv int32
		fmt.Sscan(fs[1], &p)
		fmt.Sscan(fs[2], &inv)
		store[[2]int32{keyOf[fs[0]], p}] = byInvoke[inv]
	}
	f.Close()
	commit := commitsOf(h)
	var guide []encode.Edge
	if *diagnoseSIGuide {
		guide = orderGuide(in, commit)
	}
	s := newSIReplay(h, in, commit, guide)
	s.filledBy = newFilledBy(len(s.traceAt))
	for t := int32(0); t < s.n; t++ {
		s.try(t)
	}
	_, ok := s.loop()
	fmt.Printf("replay ok %v, %d events\n", ok, len(s.events))
	describe := func(t int32) string {
		tx := &h.Txns[t]
		return fmt.Sprintf("T%d (invoke %d, complete %d, %v, state %d) %s", tx.Index, tx.Invoke, tx.Complete, tx.Status, s.state[t], NewTxnRef(h, t).Ops)
	}
	for k := range s.keys {
		ks := &s.keys[k]
		first := int32(-1)
		for p := int32(0); p < ks.pos && p < ks.n; p++ {
			if w := s.filledBy[ks.base+p]; w >= 0 && in.Writers[w].Txn != store[[2]int32{int32(k), p}] {
				first = p
				break
			}
		}
		fmt.Printf("key %s: at %d of %d, holder %d", h.Keys[k], ks.pos, ks.n, s.holder[k])
		if first >= 0 {
			fmt.Printf("; first differs at %d: replay %s, store %s", first, describe(in.Writers[s.filledBy[ks.base+first]].Txn), describe(store[[2]int32{int32(k), first}]))
		}
		if ks.pos < ks.n {
			fmt.Printf("; the store's next: %s", describe(store[[2]int32{int32(k), ks.pos}]))
		}
		fmt.Println()
	}
	for _, w := range s.waiting {
		fmt.Printf("waiting: %s\n", describe(w))
		// The readers its commit would strand: not started, reading an appended key
		// at its current length.
		for _, op := range h.TxnOps(int(w)) {
			if op.Kind != history.Append {
				continue
			}
			for _, ri := range in.Keys[op.Key].Reads {
				rd := &in.Reads[ri]
				if rd.Len-rd.Own == s.keys[op.Key].pos && s.state[rd.Txn] != rStarted && s.state[rd.Txn] != rDone {
					fmt.Printf("  strands on key %s at %d: %s\n", h.Keys[op.Key], s.keys[op.Key].pos, describe(rd.Txn))
				}
			}
		}
	}
	for _, w := range s.deferred {
		fmt.Printf("deferred: %s\n", describe(w))
	}
}
