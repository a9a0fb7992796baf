package check

import (
	"math/rand/v2"
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
	"doppel/internal/brute"
)

// TestPinnedCycles: pins alone close a G-single (no serial order, no snapshot-isolated
// execution) or a write skew (no serial order; snapshot isolation allows it); a
// serializable history has no pinned cycle.
func TestPinnedCycles(t *testing.T) {
	const base = `{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append 0 1] [:append 1 1]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append 0 1] [:append 1 1]]}
`
	cases := []struct {
		name             string
		edn              string
		serial, snapshot bool
	}{
		{"g-single", base + `{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:r 1 nil] [:append 0 1] [:append 1 2]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:r 0 [1]] [:r 1 [1]] [:append 0 1] [:append 1 2]]}
{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:r 1 nil]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 0 [1 1]] [:r 1 [1]]]}
`, true, true},
		{"write-skew", base + `{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:r 1 nil] [:append 1 1]]}
{:index 3, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:r 1 nil] [:append 0 1]]}
{:index 4, :type :ok, :process 1, :f :txn, :value [[:r 0 [1]] [:r 1 [1]] [:append 1 1]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 0 [1]] [:r 1 [1]] [:append 0 1]]}
{:index 6, :type :invoke, :process 0, :f :txn, :value [[:r 0 nil] [:r 1 nil]]}
{:index 7, :type :ok, :process 0, :f :txn, :value [[:r 0 [1 1]] [:r 1 [1 1]]]}
`, true, false},
		{"serial", base + `{:index 2, :type :invoke, :process 1, :f :txn, :value [[:r 0 nil] [:r 1 nil] [:append 1 1]]}
{:index 3, :type :ok, :process 1, :f :txn, :value [[:r 0 [1]] [:r 1 [1]] [:append 1 1]]}
{:index 4, :type :invoke, :process 2, :f :txn, :value [[:r 0 nil] [:r 1 nil] [:append 0 1]]}
{:index 5, :type :ok, :process 2, :f :txn, :value [[:r 0 [1]] [:r 1 [1 1]] [:append 0 1]]}
{:index 6, :type :invoke, :process 0, :f :txn, :value [[:r 0 nil] [:r 1 nil]]}
{:index 7, :type :ok, :process 0, :f :txn, :value [[:r 0 [1 1]] [:r 1 [1 1]]]}
`, false, false},
	}
	for _, tc := range cases {
		h, err := history.ParseEDN(strings.NewReader(tc.edn), tc.name)
		if err != nil {
			t.Fatal(err)
		}
		in := encode.Infer(h)
		if len(in.Findings) > 0 {
			t.Fatalf("%s: findings %+v", tc.name, in.Findings)
		}
		serial, snapshot := pinnedCycles(h, in, nil, true)
		if serial != tc.serial || snapshot != tc.snapshot {
			t.Errorf("%s: pinned cycles serial %v snapshot %v, want %v %v", tc.name, serial, snapshot, tc.serial, tc.snapshot)
		}
		for m, want := range map[string]bool{"serializable": !tc.serial, "snapshot-isolation": !tc.snapshot} {
			if got := brute.Check(h, m); got != want {
				t.Errorf("%s: the brute force says %s valid %v, want %v", tc.name, m, got, want)
			}
		}
	}
}

// TestPinnedCyclesAreSound: a pinned cycle means not serializable (and with no two
// adjacent anti-dependencies, not snapshot isolated), by the brute force, on random
// tiny histories with heavy duplication.
func TestPinnedCyclesAreSound(t *testing.T) {
	cfgs := []brute.Config{
		{Strategy: brute.SnapshotLike},
		{Strategy: brute.Realtime},
		{Strategy: brute.FailInfo},
		{Strategy: brute.Corrupted},
		{Values: 3, MaxOps: 6, MaxKeys: 2, Strategy: brute.Corrupted},
		{Values: 2, MaxTxns: 7, Strategy: brute.SnapshotLike},
		{Values: 3, MaxTxns: 8, MaxKeys: 2, Strategy: brute.SnapshotLike},
		{Values: 8, MaxTxns: 8, MaxKeys: 2, Strategy: brute.SnapshotLike},
		{Values: 8, MaxOps: 6, MaxKeys: 3, Strategy: brute.Corrupted},
	}
	serials, snapshots, byValue := 0, 0, 0
	for ci, cfg := range cfgs {
		for seed := 0; seed < *seeds/2; seed++ {
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(31+ci)))
			h := brute.Random(rng, cfg)
			in := encode.Infer(h)
			in.CheckValues()
			if len(in.Findings) > 0 {
				continue
			}
			serial, snapshot := pinnedCycles(h, in, nil, true)
			if readsOnly, readsOnlySnapshot := pinnedCycles(h, in, nil, false); readsOnly && !serial || readsOnlySnapshot && !snapshot {
				t.Fatalf("config %d seed %d: the read pins close a cycle the value pins do not\n%s", ci, seed, brute.Format(h))
			} else if serial && !readsOnly {
				byValue++
			}
			if snapshot && !serial {
				t.Fatalf("config %d seed %d: a snapshot cycle without a serial one\n%s", ci, seed, brute.Format(h))
			}
			if serial {
				serials++
				if brute.Check(h, "serializable") {
					t.Fatalf("config %d seed %d: a pinned cycle, but serializable by the brute force\n%s", ci, seed, brute.Format(h))
				}
			}
			if snapshot {
				snapshots++
				if brute.Check(h, "snapshot-isolation") {
					t.Fatalf("config %d seed %d: a pinned snapshot cycle, but snapshot isolated by the brute force\n%s", ci, seed, brute.Format(h))
				}
			}
		}
	}
	t.Logf("%d serial and %d snapshot pinned cycles, %d serial ones only with value pins", serials, snapshots, byValue)
	if serials == 0 || snapshots == 0 || byValue == 0 {
		t.Errorf("no pinned cycle found (%d serial, %d snapshot, %d needing value pins): the test checks nothing", serials, snapshots, byValue)
	}
}
