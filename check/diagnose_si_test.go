//go:build diagnose

package check

// Not a test: built only with -tags diagnose. It runs the greedy snapshot isolation
// replay (siSchedule, no guide) on a history whose store's attribution is known
// (tools/othergen/witness2attr.py's PREFIX.attr: key, position, the appending
// transaction's invoke :index) and reports where the replay's attribution first
// leaves the store's on each key, and what it is stuck on. With -diagnose-si-repair it
// repairs the replay as the checker does (siScheduleRepaired) and reports on the
// furthest stuck run: also its last 40 events, the :info transactions it committed
// that the store did not install, the first :ok transactions by completion not run
// (with check's answer), the spares, the keys' holders and what blame would undo.
//
//	go test -tags diagnose ./check -run TestDiagnoseSIReplay -v -args \
//	    -diagnose-si-file h.edn -diagnose-si-attr /tmp/h.attr [-diagnose-si-guide] [-diagnose-si-repair]

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
)

var (
	diagnoseSIFile   = flag.String("diagnose-si-file", "", "the history")
	diagnoseSIAttr   = flag.String("diagnose-si-attr", "", "the store's attribution (key position invoke)")
	diagnoseSIGuide  = flag.Bool("diagnose-si-guide", false, "guided by process and real-time order, as the checker's first try")
	diagnoseSIStopAt = flag.Int("diagnose-si-stop-at", 0, "with -diagnose-si-repair: replay the furthest run's avoided choices again, stopping after this many events")
	diagnoseSIOlder  = flag.Bool("diagnose-si-older", false, "let a reader the guide alone holds back start where a commit would strand it (siReplay.older)")
	diagnoseSIRepair = flag.Bool("diagnose-si-repair", false, "repair the replay as the checker does; report on the furthest stuck run")
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
	s.older = *diagnoseSIOlder
	var ok bool
	if *diagnoseSIRepair {
		var furthest *siRun
		var avoided map[uint64]bool
		onRepairStep = func(r repairRun) {
			if sr := r.(*siRun); furthest == nil || sr.steps() > furthest.steps() {
				furthest = sr.copyRun().(*siRun)
				avoided = maps.Clone(sr.base().avoid)
			}
		}
		_, ok, _ = siScheduleRepaired(h, in, commit, guide, false, *diagnoseSIOlder, nil, nil)
		onRepairStep = nil
		if !ok && furthest != nil {
			s = furthest.s
			if *diagnoseSIStopAt > 0 {
				s = newSIReplay(h, in, commit, guide)
				s.older = *diagnoseSIOlder
				s.filledBy = newFilledBy(len(s.traceAt))
				s.avoid = avoided
				for t := int32(0); t < s.n; t++ {
					s.try(t)
				}
				s.checkpoint = func() bool { return len(s.events) >= *diagnoseSIStopAt }
				s.loop()
				fmt.Printf("%d choices avoided\n", len(avoided))
			}
		}
	} else {
		s.filledBy = newFilledBy(len(s.traceAt))
		for t := int32(0); t < s.n; t++ {
			s.try(t)
		}
		_, ok = s.loop()
	}
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
	for i := max(0, len(s.events)-40); i < len(s.events); i++ {
		e := s.events[i]
		fmt.Printf("event %d: commit %v %s\n", i, e.Commit, describe(e.Txn))
	}
	if s.avoid != nil {
		for _, c := range s.blame() {
			w := in.Writers[int32(c>>32)]
			fmt.Printf("blame: %s at %s %d (store: T%d)\n", describe(w.Txn), h.Keys[w.Key], int32(c), h.Txns[store[[2]int32{w.Key, int32(c)}]].Index)
		}
	}
	inStore := map[int32]bool{}
	for _, t := range store {
		inStore[t] = true
	}
	for i, e := range s.events {
		if e.Commit && h.Txns[e.Txn].Status == history.Info && !inStore[e.Txn] {
			fmt.Printf("event %d: committed %s, which the store did not install\n", i, describe(e.Txn))
		}
	}
	var notRun []int32
	for t := int32(0); t < s.n; t++ {
		if h.Txns[t].Status == history.OK && s.state[t] != rDone {
			notRun = append(notRun, t)
		}
	}
	slices.SortFunc(notRun, func(a, b int32) int { return cmp.Compare(h.Txns[a].Complete, h.Txns[b].Complete) })
	for _, t := range notRun[:min(5, len(notRun))] {
		st := s.state[t]
		s.state[t] = rPending
		ok, why := s.check(t)
		s.state[t] = st
		fmt.Printf("not run, by completion: %s; check %v %d preds %d\n", describe(t), ok, why, s.preds[t])
		for _, w := range in.TxnWriters(t) {
			k := in.Writers[w].Key
			if s.avoid[uint64(w)<<32|uint64(s.keys[k].pos)] {
				fmt.Printf("    avoided at %s %d\n", h.Keys[k], s.keys[k].pos)
			}
		}
		for _, op := range h.TxnOps(int(t)) {
			ks := &s.keys[op.Key]
			fmt.Printf("    %v on %s: key at %d, holder %d\n", op.Kind, h.Keys[op.Key], ks.pos, s.holder[op.Key])
		}
	}
	for _, t := range s.spares {
		s.state[t] = rPending
		ok, why := s.check(t)
		s.state[t] = rSpare
		fmt.Printf("spare: %s strands %v check %v %d prio %v\n", describe(t), s.spareStrands(t), ok, why, s.prio(t))
		for _, op := range h.TxnOps(int(t)) {
			if op.Kind != history.Append {
				continue
			}
			at := s.keys[op.Key].pos
			fmt.Printf("    append %d to %s at %d (trace %d): pendingRW %d", op.Value, h.Keys[op.Key], at, s.traceAt[s.slot(op.Key, at)], s.pendingRW[s.slot(op.Key, at)])
			if sl := s.slot(op.Key, at+1); sl >= 0 {
				for w := s.waitHead[sl]; w >= 0; w = s.waitNext[w] {
					fmt.Printf("; waits at %d: T%d (%v)", at+1, h.Txns[w].Index, h.Txns[w].Status)
				}
			}
			fmt.Println()
		}
	}
	for k, w := range s.holder {
		if w >= 0 {
			fmt.Printf("holder of %s: %s, started at event %d\n", h.Keys[k], describe(w), slices.Index(s.events, siEvent{Txn: w}))
		}
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
