package shrink

import (
	"fmt"
	"os"
	"testing"

	"doppel/history"
)

func TestTmpSeg(t *testing.T) {
	h, err := history.ParseFile(os.Getenv("HFILE"))
	if err != nil {
		t.Fatal(err)
	}
	s := newShrinker(h, "strong-session-read-committed")
	segs := s.windowSegments()
	for k, ks := range segs {
		over := 0
		tot := 0
		for _, sg := range ks.segs {
			tot += len(sg.writers)
			if sg.overfull {
				over++
				fmt.Printf("key %s overfull (%d,%d] writers %v appends %d\n", h.Keys[k], sg.a, sg.b, sg.writers, sg.appends)
			}
		}
		fmt.Printf("key %s segs %d writers in segs %d overfull %d\n", h.Keys[k], len(ks.segs), tot, over)
	}
}
