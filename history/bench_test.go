package history

import (
	"bytes"
	"math/rand"
	"os"
	"syscall"
	"testing"
)

// syntheticHistory writes a history of n transactions by 32 processes, 4 micro-ops
// each over 1000 keys, reads returning lists of up to 20 values (about 200 bytes a line),
// in EDN or JSON.
func syntheticHistory(n int, json bool) []byte {
	rng := rand.New(rand.NewSource(1))
	lists := make([][]int64, 1000)
	var buf bytes.Buffer
	var idx int64
	write := func(e *Event) {
		e.Index, e.Time = idx, idx*1000
		idx++
		if json {
			_ = WriteJSON(&buf, e)
		} else {
			_ = WriteEDN(&buf, e)
		}
	}
	for t := 0; t < n; t++ {
		p := int64(t % 32)
		ops := make([]Op, 4)
		done := make([]Op, 4)
		for i := range ops {
			k := int64(rng.Intn(len(lists)))
			if rng.Intn(2) == 0 {
				v := int64(rng.Intn(100))
				ops[i] = Op{Append: true, Key: k, Value: v}
				done[i] = ops[i]
				if len(lists[k]) >= 20 {
					lists[k] = lists[k][:0]
				}
				lists[k] = append(lists[k], v)
			} else {
				ops[i] = Op{Key: k}
				done[i] = Op{Key: k, Read: append([]int64{}, lists[k]...)}
			}
		}
		write(&Event{Type: TypeInvoke, Process: p, Value: ops})
		write(&Event{Type: TypeOK, Process: p, Value: done})
	}
	return buf.Bytes()
}

func benchParse(b *testing.B, json bool) {
	const txns = 100_000
	data := syntheticHistory(txns, json)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuSeconds()
	for i := 0; i < b.N; i++ {
		var h *History
		var err error
		if json {
			h, err = ParseJSON(bytes.NewReader(data), "bench")
		} else {
			h, err = ParseEDN(bytes.NewReader(data), "bench")
		}
		if err != nil || len(h.Txns) != txns {
			b.Fatal(err)
		}
	}
	cpu := cpuSeconds() - cpu0
	b.ReportMetric(float64(2*txns)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	// The machine is shared: CPU time (all threads, GC included) says more than wall time.
	b.ReportMetric(float64(len(data))*float64(b.N)/cpu/1e6, "MB/cpu-s")
	b.ReportMetric(float64(2*txns)*float64(b.N)/cpu, "events/cpu-s")
}

// cpuSeconds is the user and system CPU time of the process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func BenchmarkParseEDN(b *testing.B)  { benchParse(b, false) }
func BenchmarkParseJSON(b *testing.B) { benchParse(b, true) }

func BenchmarkParseRealEDN(b *testing.B) {
	data, err := os.ReadFile(hugeSCC)
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := ParseEDN(bytes.NewReader(data), "huge"); err != nil {
			b.Fatal(err)
		}
	}
}
