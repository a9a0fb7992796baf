package prune

import (
	"os"
	"testing"
	"time"

	"doppel/encode"
	"doppel/history"
)

func TestZZRounds(t *testing.T) {
	f := os.Getenv("DOPPEL_DEBUG_FILE")
	if f == "" {
		t.Skip()
	}
	h, _ := history.ParseFile(f)
	in := encode.Infer(h)
	debugRounds = true
	t0 := time.Now()
	pr := Run(in, Options{Level: Level{Process: true, Realtime: true}})
	t.Logf("%v rounds %d", time.Since(t0), pr.Rounds)
	n := 0
	for w := range in.Writers {
		if pr.Win.Allow[w] != nil {
			n += len(pr.Win.Allow[w])
		}
	}
	t.Logf("allowed positions: %d for %d writers", n, len(in.Writers))
}
