package brute

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 9))
	for _, m := range Models {
		var worst time.Duration
		var wh string
		var total time.Duration
		for i := 0; i < 20000; i++ {
			h := Random(rng, Config{})
			st := time.Now()
			Check(h, m)
			d := time.Since(st)
			total += d
			if d > worst {
				worst, wh = d, Format(h)
			}
		}
		fmt.Println(m, total/20000, worst)
		fmt.Print(wh)
	}
}
