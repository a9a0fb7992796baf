package check

import (
	"os"
	"sort"
	"strconv"
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
	if n, _ := strconv.Atoi(os.Getenv("RCCORE")); n > 0 {
		// The keys that held back most next transactions at failed states of the whole
		// search (run first, to its limit), then the relaxation to the n most.
		s.reasonKeys = make([]int32, len(in.Keys))
		v := s.run()
		t.Logf("whole: %v, %d failed states, %.2f CPU-s", v, s.states, userCPU()-u0)
		for len(s.order) > 0 {
			s.Undo()
		}
		ks := make([]int, len(in.Keys))
		for k := range ks {
			ks[k] = k
		}
		sort.Slice(ks, func(i, j int) bool { return s.reasonKeys[ks[i]] > s.reasonKeys[ks[j]] })
		for _, m := range []int{1, 2, 4, 8, 16, 32, n} {
			if m > n {
				break
			}
			keep := make([]bool, len(in.Keys))
			for _, k := range ks[:m] {
				keep[k] = true
			}
			u1 := userCPU()
			r := newRCSerialKeys(h, in, s.realtime, func() bool { return userCPU()-u1 > 30 }, keep)
			v := r.run()
			t.Logf("relaxed to %d keys %v (counts %v): %v, %d failed states, deepest %d, %.2f CPU-s", m, ks[:min(m, 8)], s.reasonKeys[ks[0]], v, r.states, r.deepest, userCPU()-u1)
		}
		return
	}
	if os.Getenv("RCRELAX") != "" {
		rcRelaxSpan, _ = strconv.Atoi(os.Getenv("RCRELAXSPAN"))
		rcRelaxDebug = func(round, at, bad, states int) {
			if round%10 == 0 || round < 10 {
				t.Logf("round %d: %.1f CPU-s, first violation at %d, %d keys, %d states", round, userCPU()-u0, at, bad, states)
			}
		}
		r := s.relaxedSearch(rcSerialMaxStates / rcRelaxShare)
		t.Logf("relaxed: %.2f CPU-s, %v after %d rounds, %d states, %d keys kept %v", userCPU()-u0, r.v, r.rounds, r.states, len(r.keys), r.keys)
		if r.s != nil {
			t.Logf("last round: %d failed states, deepest %d", r.s.states, r.s.deepest)
		}
		return
	}
	v := s.run()
	t.Logf("search: %.2f CPU-s", userCPU()-u0)
	t.Logf("%v: %d failed states, deepest %d of %d, %.2fs (search %.2fs), %d cached, %d followed", v, s.states, s.deepest, s.total, time.Since(t0).Seconds(), time.Since(t1).Seconds(), s.reachHits, s.reachCalls)
}

func userCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
}
