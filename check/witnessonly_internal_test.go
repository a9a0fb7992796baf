package check

import (
	"strings"
	"testing"

	"doppel/encode"
	"doppel/history"
)

// TestStrictWitnessDoesNotName: strict serializability decided only as a witness for
// weaker models (not asked) stops at the narrowing's proof of its violation: naming it
// would decide the problem again (60 CPU-s on a dense 1,500-transaction history) for an
// anomaly that is not part of the answer. On a write skew the narrowing proves strict's
// violation at once: the witness must build no problem and add no anomaly; asked, the
// violation is named.
func TestStrictWitnessDoesNotName(t *testing.T) {
	h, err := history.ParseEDN(strings.NewReader(`{:index 0 :type :invoke :process 0 :f :txn :value [[:r "x" nil] [:r "y" nil] [:append "x" 1]]}
{:index 1 :type :invoke :process 1 :f :txn :value [[:r "x" nil] [:r "y" nil] [:append "y" 1]]}
{:index 2 :type :ok :process 0 :f :txn :value [[:r "x" []] [:r "y" []] [:append "x" 1]]}
{:index 3 :type :ok :process 1 :f :txn :value [[:r "x" []] [:r "y" []] [:append "y" 1]]}
{:index 4 :type :invoke :process 2 :f :txn :value [[:r "x" nil] [:r "y" nil]]}
{:index 5 :type :ok :process 2 :f :txn :value [[:r "x" [1]] [:r "y" [1]]]}
`), "write-skew")
	if err != nil {
		t.Fatal(err)
	}
	for _, asked := range []bool{false, true} {
		c := &checker{h: h, proven: map[string]bool{}}
		c.budget = newBudget(c.opts, &c.res.Stats.Conflicts)
		in := encode.Infer(h)
		c.oneBaseIn = in
		c.witnessOnly = !asked
		v, _ := c.decideNarrowed(in, "strict-serializable")
		if v != Invalid {
			t.Fatalf("asked %v: strict serializability %v on a write skew", asked, v)
		}
		switch {
		case !asked && (c.p != nil || len(c.res.Anomalies) > 0):
			t.Errorf("the witness built a problem (%v) or named the violation (%d anomalies)", c.p != nil, len(c.res.Anomalies))
		case asked && len(c.res.Anomalies) == 0:
			t.Errorf("asked, the violation is not named")
		}
	}
}
