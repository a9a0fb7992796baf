package check

import (
	"time"

	"doppel/encode"
)

// keptStrictSearch is the strict search within strict serializability's windows that
// proveByReplay ran out of work on, kept with its memo to be continued, and the
// inference it searches.
type keptStrictSearch struct {
	s  *serialSearch
	in *encode.Inference
	// next is the length of the next turn (turnKept), doubling with each (the first
	// alternateFirstSlice).
	next time.Duration
}

// turnKept gives the kept strict search, if any, its next turn (resumeStrict) on the
// inference it searches. The turns double wherever they come (the first
// alternateFirstSlice): in the solver's rounds and between the stages of the models a
// strict-serializable order proves, so that the search's share keeps up with the time
// spent around it (snapshot isolation alone on hot keys with :info at 5K: three turns
// of one round's length reached 130M of the 137M units it needs within 30 s).
func (c *checker) turnKept() bool {
	k := c.keptStrict
	if k == nil {
		return false
	}
	d := k.next
	k.next *= 2
	return c.resumeStrict(d)
}

// resumeStrict continues the kept strict search (keptStrict) for about d of time (strictResumeWorkPerSecond) and reports whether it found an order
// that verifySerial accepts with process and real-time order: a strict-serializable
// order, which proves every model (c.proven). The search is dropped when it ends
// without running out of work (it searched every state, or the limits stopped it).
//
// Why turns: on write-heavy hot keys with :info transactions the search finds the
// order after a few times its first budget (5,000 transactions, two seeds: 137M and
// 157M units against strictSearchWork's 30M; 10,000: 54M), where the solver's
// problem, though narrowed, is unknown at 30 s. Where the solver is what decides (an
// anomaly the narrowing does not prove; a valid history the search does not fit),
// the turns cost it at most half of the time.
func (c *checker) resumeStrict(d time.Duration) bool {
	k := c.keptStrict
	if k == nil || noStrictTurns || c.budget.out() {
		return false
	}
	c.progress("searching a strict-serializable order within its windows (continued)")
	c.res.Stats.SearchTurns++
	// At least one unit: 0 would mean no bound (tests' rounds start at a nanosecond).
	found := k.s.resume(max(1, int64(d.Seconds()*strictResumeWorkPerSecond)))
	if !found {
		if !k.s.outOfWork() {
			c.keptStrict = nil
		}
		return false
	}
	c.keptStrict = nil
	c.progress("verifying a searched strict-serializable order")
	if err := verifySerialStop(c.h, k.in, k.s.order, true, true, c.budget.stop); err != nil {
		if err != errStopped {
			c.res.Stats.ReplayRejected++
		}
		return false
	}
	c.res.Stats.Searched++
	for name := range models {
		c.proven[name] = true
	}
	return true
}

// strictResumeWorkPerSecond converts a turn's time into the search's work units (~40
// ns each on the hot-key family at 5K: 157M units took 6.5 CPU-s). A variable: tests
// give the search's turns more than the solver's.
var strictResumeWorkPerSecond = 25e6
