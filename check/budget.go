package check

import (
	"fmt"
	"sync/atomic"
	"time"
)

// budget holds the limits of one Check (Options.Timeout, Options.MaxConflicts), shared
// by every phase and every model. Each phase asks it whether to go on; the first phase
// that finds it spent is remembered, with the counters at that moment, for the message
// of every model left undecided.
type budget struct {
	start        time.Time
	deadline     time.Time // zero: no time limit
	timeout      time.Duration
	reserve      time.Duration // Options.Reserve, at most timeout
	maxConflicts int64         // 0: no limit
	conflicts    *int64        // the checker's running total over all solver stages and models
	phase        string        // the phase running now, as a gerund ("building the encoding")

	// capEnd, when positive, is the conflict count at which the current bounded attempt
	// (not the user's limits) stops: see capConflicts.
	capEnd int64
	// capUntil, when set, is the time at which the current bounded attempt's solver
	// runs stop (a cap by the clock: see capTime).
	capUntil time.Time

	mem *memWatch // Options.MaxMemory; nil: none

	spent      bool // a limit was reached; nothing more is searched
	spentPhase string
	spentWhy   string // which limit
	spentAfter time.Duration
	spentConfl int64
	// states counts the failed states of the searches over orders (the checker's
	// Stats.SearchStates); spentStates is its value when a limit was reached.
	states      *int64
	spentStates int64
}

func newBudget(o Options, conflicts *int64) *budget {
	b := &budget{start: o.Start, timeout: o.Timeout, maxConflicts: o.MaxConflicts, conflicts: conflicts, states: new(int64)}
	if b.start.IsZero() {
		b.start = time.Now()
	}
	if o.Timeout > 0 {
		b.reserve = min(max(o.Reserve, 0), o.Timeout)
		b.deadline = b.start.Add(o.Timeout - b.reserve)
	}
	return b
}

// out reports whether a limit has been reached, and records the phase the first time.
// It reads the clock only when there is a time limit (about 20 ns then).
func (b *budget) out() bool {
	if b.spent {
		return true
	}
	switch {
	case b.maxConflicts > 0 && *b.conflicts >= b.maxConflicts:
		b.exhaust(fmt.Sprintf("conflict limit (%d)", b.maxConflicts))
	case !b.deadline.IsZero() && !time.Now().Before(b.deadline):
		if b.reserve > 0 {
			b.exhaust(fmt.Sprintf("time limit (%s, of which %s is kept for counterexamples)", b.timeout, b.reserve))
		} else {
			b.exhaust(fmt.Sprintf("time limit (%s)", b.timeout))
		}
	case b.mem.exceeded():
		if b.mem.limit >= 1<<30 {
			b.exhaust(fmt.Sprintf("memory limit (%.1f GiB)", float64(b.mem.limit)/(1<<30)))
		} else {
			b.exhaust(fmt.Sprintf("memory limit (%d MiB)", b.mem.limit>>20))
		}
	}
	return b.spent
}

// exhaust records that the limit why was reached in the current phase.
func (b *budget) exhaust(why string) {
	if b.spent {
		return
	}
	b.spent, b.spentPhase, b.spentWhy = true, b.phase, why
	b.spentAfter, b.spentConfl = time.Since(b.start), *b.conflicts
	b.spentStates = *b.states
}

// stop is out as a function value, for the hooks of long loops (replays, encoding).
func (b *budget) stop() bool { return b.out() }

// sideStop is the stop hook of work on another goroutine beside the checker's: the
// time limit and the memory limit, read without recording which was reached (out
// does that, on the checker's goroutine alone), or cancel.
func (b *budget) sideStop(cancel *atomic.Bool) func() bool {
	return func() bool {
		return cancel.Load() || !b.deadline.IsZero() && !time.Now().Before(b.deadline) || b.mem.exceeded()
	}
}

// conflictsLeft is how many more conflicts the solver stages may spend: -1 without a
// conflict limit.
func (b *budget) conflictsLeft() int64 {
	if b.maxConflicts <= 0 {
		return -1
	}
	return max(0, b.maxConflicts-*b.conflicts)
}

// limit bounds one solver run that has a bound of its own (0: none) by what is left;
// ok is false when the limits are spent (the run must not start: a zero conflict
// limit would mean none).
func (b *budget) limit(own int64) (n int64, ok bool) {
	if b.out() {
		return 0, false
	}
	if !b.capUntil.IsZero() && !time.Now().Before(b.capUntil) {
		return 0, false // a time cap of the checker's own: reaching it spends nothing
	}
	if b.capEnd > 0 {
		// A cap of the checker's own (a bounded attempt): reaching it spends nothing.
		capLeft := b.capEnd - *b.conflicts
		if capLeft <= 0 {
			return 0, false
		}
		if own == 0 || own > capLeft {
			own = capLeft
		}
	}
	left := b.conflictsLeft()
	switch {
	case left < 0:
		return own, true
	case left == 0:
		b.exhaust(fmt.Sprintf("conflict limit (%d)", b.maxConflicts))
		return 0, false
	case own == 0 || own > left:
		return left, true
	}
	return own, true
}

// message says why model m is unknown: which limit, in which phase, after how many
// conflicts (all solver stages and models together) and how long.
func (b *budget) message(m string) string {
	// A solver stopped by its own clock hook (bound) returns unknown without asking
	// out, so the limit it reached is recorded here; the message was "the  was
	// reached while ," before.
	if !b.out() {
		return fmt.Sprintf("%s: undecided while %s, after %s and %.2fs, with no limit reached",
			m, b.phase, b.work(*b.conflicts, *b.states), time.Since(b.start).Seconds())
	}
	return fmt.Sprintf("%s: the %s was reached while %s, after %s and %.2fs",
		m, b.spentWhy, b.spentPhase, b.work(b.spentConfl, b.spentStates), b.spentAfter.Seconds())
}

// work says what the searches did: the solver's conflicts, and the failed states of
// the searches over orders when there were any (read uncommitted's runs search may
// spend the whole time without a conflict: "after 0 conflicts" alone said nothing).
func (b *budget) work(conflicts, states int64) string {
	if states == 0 {
		return fmt.Sprintf("%d conflicts (all solver stages)", conflicts)
	}
	return fmt.Sprintf("%d conflicts (all solver stages), %d failed states of the searches over orders", conflicts, states)
}

// capPassed reports whether a time cap of the checker's own (capTime) has passed.
func (b *budget) capPassed() bool {
	return !b.capUntil.IsZero() && !time.Now().Before(b.capUntil)
}

// capTime bounds the solver runs that follow to end within d, as capConflicts does by
// conflicts; the returned function lifts the cap.
func (b *budget) capTime(d time.Duration) (lift func()) {
	prev := b.capUntil
	b.capUntil = time.Now().Add(d)
	if !prev.IsZero() && prev.Before(b.capUntil) {
		b.capUntil = prev
	}
	return func() { b.capUntil = prev }
}

// solverDeadline is when a solver run must stop: the time limit or the time cap,
// whichever comes first (zero: neither).
func (b *budget) solverDeadline() time.Time {
	switch {
	case b.capUntil.IsZero():
		return b.deadline
	case b.deadline.IsZero() || b.capUntil.Before(b.deadline):
		return b.capUntil
	}
	return b.deadline
}

// capConflicts bounds the solver runs that follow to n more conflicts in all, without
// spending the limits (a bounded attempt: a witness, naming a proven anomaly); the
// returned function lifts the cap.
func (b *budget) capConflicts(n int64) (lift func()) {
	prev := b.capEnd
	b.capEnd = *b.conflicts + n
	if prev > 0 && prev < b.capEnd {
		b.capEnd = prev
	}
	return func() { b.capEnd = prev }
}
