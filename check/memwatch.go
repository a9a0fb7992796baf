package check

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// memWatch enforces Options.MaxMemory: a goroutine samples the memory the Go runtime
// holds from the system (mapped minus released) every few milliseconds and, once it
// passes the limit, raises a flag that every phase's stop check reads (budget.out,
// the narrowing's expiry) and interrupts the running solvers. A check that would
// outgrow the machine then ends with "unknown" and a message instead of being killed
// by the kernel with nothing said.
type memWatch struct {
	limit uint64
	over  atomic.Bool
	mu    sync.Mutex
	hooks map[int]func()
	next  int
	done  chan struct{}
	// oldLimit is the runtime's soft memory limit before the check, restored by stop.
	oldLimit int64
}

var memSamples = []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// startMemWatch starts watching; nil (no watching) when limit is 0. The runtime's soft
// limit is lowered to it too, so the collector works harder before the flag is raised.
func startMemWatch(limit int64) *memWatch {
	if limit <= 0 {
		return nil
	}
	w := &memWatch{limit: uint64(limit), hooks: map[int]func(){}, done: make(chan struct{})}
	w.oldLimit = debug.SetMemoryLimit(-1)
	if limit < w.oldLimit {
		debug.SetMemoryLimit(limit)
	}
	go w.loop()
	return w
}

// used is the memory the runtime holds from the system, in bytes.
func memUsed() uint64 {
	s := make([]metrics.Sample, len(memSamples))
	copy(s, memSamples)
	metrics.Read(s)
	total, released := s[0].Value.Uint64(), s[1].Value.Uint64()
	if released > total {
		return 0
	}
	return total - released
}

func (w *memWatch) loop() {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			if memUsed() <= w.limit {
				continue
			}
			w.over.Store(true)
			w.mu.Lock()
			for _, f := range w.hooks {
				f()
			}
			w.mu.Unlock()
			return
		}
	}
}

// exceeded reports whether the limit was passed (false for a nil watch).
func (w *memWatch) exceeded() bool { return w != nil && w.over.Load() }

// onExceed calls f when the limit is passed (at once if it already was) until the
// returned function is called.
func (w *memWatch) onExceed(f func()) (remove func()) {
	if w == nil {
		return func() {}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over.Load() {
		f()
		return func() {}
	}
	id := w.next
	w.next++
	w.hooks[id] = f
	return func() {
		w.mu.Lock()
		delete(w.hooks, id)
		w.mu.Unlock()
	}
}

// stop ends the watching and restores the runtime's soft limit.
func (w *memWatch) stop() {
	if w == nil {
		return
	}
	close(w.done)
	debug.SetMemoryLimit(w.oldLimit)
}
