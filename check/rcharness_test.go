package check

import (
	"os"
	"syscall"
	"testing"
	"time"

	"doppel/encode"
	"doppel/history"
)

// BenchmarkRCSearchFile runs the serial search alone on the history in $RCFILE, once
// (a harness for measurements: `go test ./check -run '^$' -bench RCSearchFile
// -benchtime 1x`, with RCFILE=F [RCLIMIT=300s] [RCREALTIME=1]).
func BenchmarkRCSearchFile(b *testing.B) {
	path := os.Getenv("RCFILE")
	if path == "" {
		b.Skip("no RCFILE")
	}
	t := b
	h, err := history.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	in := encode.InferPerRead(h)
	in.CheckValues()
	lim, _ := time.ParseDuration(os.Getenv("RCLIMIT"))
	if lim == 0 {
		lim = 60 * time.Second
	}
	t0 := time.Now()
	var s *rcSerial
	calls, last := 0, time.Now()
	stop := func() bool {
		calls++
		if time.Since(last) > 20*time.Second {
			last = time.Now()
			t.Logf("%.0fs: %d steps, depth %d, deepest %d", time.Since(t0).Seconds(), calls<<10, len(s.order), s.deepest)
		}
		return time.Since(t0) > lim
	}
	s = newRCSerial(h, in, os.Getenv("RCREALTIME") != "", stop)
	if s == nil {
		t.Fatal("no search")
	}
	t1 := time.Now()
	u0 := userCPU()
	v := s.run()
	t.Logf("search: %.2f CPU-s", userCPU()-u0)
	t.Logf("%v: %d failed states, deepest %d of %d, %.2fs (search %.2fs), %d cached, %d followed", v, s.states, s.deepest, s.total, time.Since(t0).Seconds(), time.Since(t1).Seconds(), s.reachHits, s.reachCalls)
}

func userCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
}
