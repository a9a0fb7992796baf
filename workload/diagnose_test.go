//go:build diagnose

package workload

// Not a test: built only with -tags diagnose. It writes what the simulator did for
// a faulty history (doppel gen --behaviour faulty with the flags below), for the runs
// search's diagnostic (uncommitted/diagnose_test.go): PREFIX.order, the invoke
// :index of each transaction that took effect, in effect order, and PREFIX.attr, each
// append's key, position in its key's list and transaction's invoke :index. Lost
// updates truncate lists, which this does not follow: use it without that fault.
//
//	go test -tags diagnose ./workload -run TestDiagnoseSimulation -args \
//	    -diagnose-out /tmp/h -diagnose-txns 10000 -diagnose-seed 1

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var (
	diagnoseOut    = flag.String("diagnose-out", "", "prefix of the files written")
	diagnoseTxns   = flag.Int("diagnose-txns", 10000, "--txns")
	diagnoseSeed   = flag.Int64("diagnose-seed", 1, "--seed")
	diagnoseFaults = flag.String("diagnose-faults", FaultAbortedRead, "--faults")
	diagnoseRate   = flag.Float64("diagnose-rate", 0.05, "--fault-rate")
	diagnoseInfo   = flag.Float64("diagnose-info", 0, "--info")
)

func TestDiagnoseSimulation(t *testing.T) {
	if *diagnoseOut == "" {
		t.Fatal("-diagnose-out is required")
	}
	// The aborted-read family's shape: --sessions 10 --ops 4 --keys 20 --dup-keys 1
	// --val-domain 3.
	spec := DefaultSpec()
	spec.Keys, spec.ValDomain, spec.DupKeys, spec.Sessions, spec.Ops, spec.Txns, spec.Seed = 20, 3, 1, 10, 4, *diagnoseTxns, *diagnoseSeed
	_, commits, _ := simEvents(t, spec, SimOptions{Behaviour: SimFaulty, Faults: strings.Split(*diagnoseFaults, ","), FaultRate: *diagnoseRate, Info: *diagnoseInfo})
	write := func(name string, each func(w *bufio.Writer)) {
		f, err := os.Create(*diagnoseOut + name)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		each(w)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write(".order", func(w *bufio.Writer) {
		for _, c := range commits {
			fmt.Fprintln(w, c.invoke)
		}
	})
	write(".attr", func(w *bufio.Writer) {
		length := map[int64]int{}
		for _, c := range commits {
			for _, op := range c.ops {
				if op.Append {
					fmt.Fprintln(w, op.Key, length[op.Key], c.invoke)
					length[op.Key]++
				}
			}
		}
	})
}
