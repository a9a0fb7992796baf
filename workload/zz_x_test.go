package workload

import (
	"testing"

	"doppel/check"
)

func TestZZLost(t *testing.T) {
	spec := Spec{Sessions: 10, Txns: 3000, Ops: 6, Keys: 100, Reads: 0.5, KeyDist: "uniform", KeyZipf: 1,
		DupKeys: 1, ValZipf: 1, ValDomain: 3, Seed: 2}
	r := simulateInjected(t, spec, "lost-update")
	res, _ := check.Check(r.h, check.Options{Models: []string{"serializable"}})
	t.Log(r.completion(t, r.injected[0].Invokes[0]), r.completion(t, r.injected[0].Invokes[1]))
	for _, a := range res.Anomalies {
		t.Log(a.Type, a.Key, len(a.Txns), a.Explanation[:min(400, len(a.Explanation))])
	}
}
