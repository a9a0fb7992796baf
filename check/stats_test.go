package check_test

import (
	"testing"

	"doppel/check"
)

// TestStatsDescribeOneBuild: when the narrowing proves a violation and the naming
// builds the problem again, the key counts describe one build, not their sum (a
// 10-key history once reported "0 fixed, 20 open", and twice its guarded edges).
func TestStatsDescribeOneBuild(t *testing.T) {
	for _, seed := range []int64{3} {
		h := genHistory(t, 8, 4, 10, 2, 1000, seed, "write-skew")
		res, err := check.Check(h, check.Options{Models: []string{"serializable"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid != check.Invalid {
			t.Fatalf("seed %d: %v, want not valid (an injected write skew)", seed, res.Valid)
		}
		st := res.Stats
		if st.KeysFixed+st.KeysOpen > st.Keys {
			t.Errorf("seed %d: %d keys, %d fixed and %d open", seed, st.Keys, st.KeysFixed, st.KeysOpen)
		}
		if st.GuardedEdges > st.Edges {
			t.Errorf("seed %d: %d guarded edges of %d", seed, st.GuardedEdges, st.Edges)
		}
	}
}
