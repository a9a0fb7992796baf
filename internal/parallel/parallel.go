// Package parallel runs the parts of one job in goroutines of their own, stoppable by
// a checker's limits (the inference's halves, a replay's reads by key parity, the
// verification of a replay by key parity).
package parallel

import (
	"sync"
	"sync/atomic"
	"time"
)

// Run runs part(i, quit) for i in [0, n), each in its own goroutine, and waits for
// them. With stop, the calling goroutine asks it every 5 ms (it need not be safe for
// concurrent use) and, once it says so, raises quit, which the parts poll, waits for
// them to return and reports true: stopped.
func Run(n int, part func(i int, quit *atomic.Bool), stop func() bool) (stopped bool) {
	var quit atomic.Bool
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part(i, &quit)
		}()
	}
	if stop != nil {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return false
			case <-tick.C:
				if stop() {
					quit.Store(true)
					<-done
					return true
				}
			}
		}
	}
	wg.Wait()
	return false
}
