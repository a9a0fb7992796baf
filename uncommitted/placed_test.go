package uncommitted

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"doppel/history"
	"doppel/internal/brute"
)

var placedSeeds = flag.Int("placed-seeds", 30000, "random tiny histories in TestProveByOrderPlacedIsSound")

// TestProveByOrderPlacedIsSound shows ProveByOrderPlaced random orders of random tiny
// histories with heavy duplication, each with one :ok writer moved to a random place
// (as a lost update's loser is): whenever it proves a form valid, the brute-force
// oracle agrees; and it proves forms where some key's positions had to be placed anew.
func TestProveByOrderPlacedIsSound(t *testing.T) {
	seeds := *placedSeeds
	if testing.Short() {
		seeds = min(seeds, 3000)
	}
	configs := []brute.Config{{}, {MaxTxns: 7, Values: 2}, {Strategy: brute.FailInfo}, {Strategy: brute.Realtime},
		{Values: 3, MaxTxns: 9, MaxKeys: 2}, {Strategy: brute.SnapshotLike}}
	proved, placed := 0, 0
	for seed := 0; seed < seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 31))
		h := brute.Random(rng, configs[seed%len(configs)])
		x := NewIndex(h)
		if len(x.Findings) > 0 || x.Open() == 0 {
			continue
		}
		// The order: the transactions by invoke, one of them moved.
		var order []int32
		for t := range h.Txns {
			if h.Txns[t].Status != history.Fail {
				order = append(order, int32(t))
			}
		}
		if len(order) < 2 {
			continue
		}
		i, j := rng.IntN(len(order)), rng.IntN(len(order))
		moved := order[i]
		order = append(order[:i], order[i+1:]...)
		order = append(order[:j], append([]int32{moved}, order[j:]...)...)
		mayLeave := make([]bool, len(h.Txns)) // the moved one, as a lost update's member
		mayLeave[moved] = true
		attr, _, _ := x.orderAttribution(order)
		anew := false
		for _, a := range attr {
			anew = anew || a.li < 0
		}
		for _, m := range modelsUnderTest {
			if ok, _ := x.ProveByOrderPlaced(order, m.process, m.realtime, mayLeave, 1<<12, nil); !ok {
				continue
			}
			proved++
			if anew {
				placed++
			}
			if !brute.Check(h, m.name) {
				t.Fatalf("seed %d, %s: the order placed says valid, the oracle not\norder %v\n%s", seed, m.name, order, brute.Format(h))
			}
		}
	}
	t.Logf("%d forms proved, %d with a key placed anew", proved, placed)
	if placed == 0 {
		t.Errorf("no form proved with a key placed anew (%d proved): nothing tested", proved)
	}
}

// TestPlaceKeyShiftsTheWritersPastTheLoser: key x's longest read [1 2 1] by T3; T0
// and T1 append 1 and T2 appends 2; the order runs T1 first although its process runs
// T0 before it, and T0's append was lost: the order's list of x is [1 1 2], which
// shows no longest read. Placed anew, T0's 1 comes first, T2's 2, then T1's 1 (T0
// before T1 in process order, T2 unordered with both), which strong-session read
// uncommitted accepts.
func TestPlaceKeyShiftsTheWritersPastTheLoser(t *testing.T) {
	h, x := oneOpenKey(t, "shift", `
{:index 0 :type :invoke :process 0 :f :txn :value [[:append "x" 1]]}
{:index 1 :type :ok :process 0 :f :txn :value [[:append "x" 1]]}
{:index 2 :type :invoke :process 0 :f :txn :value [[:append "x" 1]]}
{:index 3 :type :ok :process 0 :f :txn :value [[:append "x" 1]]}
{:index 4 :type :invoke :process 1 :f :txn :value [[:append "x" 2]]}
{:index 5 :type :ok :process 1 :f :txn :value [[:append "x" 2]]}
{:index 6 :type :invoke :process 2 :f :txn :value [[:r "x" nil]]}
{:index 7 :type :ok :process 2 :f :txn :value [[:r "x" [1 2 1]]]}
`)
	order := []int32{1, 0, 2, 3} // T1's 1 and T0's 1 before T2's 2: [1 1 2]
	if x.ProveByOrder(order, true, false) {
		t.Fatalf("ProveByOrder accepted an order whose list [1 1 2] shows no longest read")
	}
	if ok, stuck := x.ProveByOrderPlaced(order, true, false, nil, 1<<10, nil); !ok || stuck {
		t.Fatalf("ProveByOrderPlaced found no placement of [1 2 1]")
	}
	if !brute.Check(h, "strong-session-read-uncommitted") {
		t.Fatalf("the oracle disagrees with the test's premise")
	}
}

// TestPlaceKeyLeavesTheLoserOut: key x's longest read [1 2 3 1]; in real time T0
// appends 1, T1 2 (its append was lost), T2 2, T3 3, T4 1, and T5 (:info, never
// completed) appends 1. In the order's sequence T1's 2 comes before T2's, and T3 may
// come only after T2 (real time): placed in line, T1 takes the 2 and nothing can take
// the 3. Only with T1 left out (T2's 2 in its place) and T5's 1 at the last position
// (so that no edge leads to the writers left out) is there an attribution, which
// strong read uncommitted accepts: the search must leave the loser out.
func TestPlaceKeyLeavesTheLoserOut(t *testing.T) {
	h, x := oneOpenKey(t, "loser", `
{:index 0 :type :invoke :process 0 :f :txn :value [[:append "x" 1]]}
{:index 1 :type :ok :process 0 :f :txn :value [[:append "x" 1]]}
{:index 2 :type :invoke :process 1 :f :txn :value [[:append "x" 2]]}
{:index 3 :type :ok :process 1 :f :txn :value [[:append "x" 2]]}
{:index 4 :type :invoke :process 5 :f :txn :value [[:append "x" 1]]}
{:index 5 :type :invoke :process 2 :f :txn :value [[:append "x" 2]]}
{:index 6 :type :ok :process 2 :f :txn :value [[:append "x" 2]]}
{:index 7 :type :invoke :process 0 :f :txn :value [[:append "x" 3]]}
{:index 8 :type :ok :process 0 :f :txn :value [[:append "x" 3]]}
{:index 9 :type :invoke :process 1 :f :txn :value [[:append "x" 1]]}
{:index 10 :type :ok :process 1 :f :txn :value [[:append "x" 1]]}
{:index 11 :type :info :process 5 :f :txn :value [[:append "x" 1]]}
{:index 12 :type :invoke :process 4 :f :txn :value [[:r "x" nil]]}
{:index 13 :type :ok :process 4 :f :txn :value [[:r "x" [1 2 3 1]]]}
`)
	var order []int32 // by invoke: T1's 2 before T2's
	for t := range h.Txns {
		order = append(order, int32(t))
	}
	if !brute.Check(h, "strong-read-uncommitted") {
		t.Fatalf("the oracle disagrees with the test's premise")
	}
	tries := leaveOutTries
	defer func() { leaveOutTries = tries }()
	leaveOutTries = 0
	mayLeave := make([]bool, len(h.Txns))
	mayLeave[1] = true // T1, the lost update's loser
	if ok, _ := x.ProveByOrderPlaced(order, true, true, mayLeave, 1<<10, nil); ok {
		t.Fatalf("without leaving writers out the placement was found: the test shows nothing")
	}
	leaveOutTries = tries
	if ok, stuck := x.ProveByOrderPlaced(order, true, true, mayLeave, 1<<10, nil); !ok || stuck {
		t.Fatalf("ProveByOrderPlaced found no placement of [1 2 3 1] (stuck %v)", stuck)
	}
}

// oneOpenKey parses the EDN history edn and returns it with its index, which must have
// one open key and no finding.
func oneOpenKey(t *testing.T, name, edn string) (*history.History, *Index) {
	t.Helper()
	h, err := history.ParseEDN(strings.NewReader(edn), name)
	if err != nil {
		t.Fatal(err)
	}
	x := NewIndex(h)
	if len(x.Findings) > 0 || x.Open() != 1 {
		t.Fatalf("want one open key and no finding, got %d open, findings %v", x.Open(), x.Findings)
	}
	return h, x
}
