package check

import (
	"fmt"

	"doppel/history"
)

// Limits applies the limits of a check (Options.Timeout from Options.Start,
// Options.MaxMemory) to work done before Check: a command line tool reads the history
// first, and a gigabyte of it takes seconds. When they run out there, Unknown is the
// result, with the same shape as any other unknown one.
type Limits struct {
	names     []string
	b         *budget
	conflicts int64 // none before the check; the budget wants a counter
	stopped   bool
}

// StartLimits starts the clock (from opts.Start) and the memory watch of opts for
// phase, a gerund naming the work ("parsing h.edn"). It fails on models Check would
// refuse. Stop must be called before Check starts (it watches the memory itself).
func StartLimits(opts Options, phase string) (*Limits, error) {
	names, err := validateModels(opts.Models)
	if err != nil {
		return nil, err
	}
	l := &Limits{names: names}
	l.b = newBudget(opts, &l.conflicts)
	l.b.mem = startMemWatch(opts.MaxMemory)
	l.b.phase = phase
	return l, nil
}

// Reached reports whether a limit was reached, the first time in the phase: a stop
// hook (history.ParseFileStop). About 20 ns with a time limit.
func (l *Limits) Reached() bool { return l.b.out() }

// Stop ends the memory watch; it may be called more than once.
func (l *Limits) Stop() {
	if !l.stopped {
		l.stopped = true
		l.b.mem.stop()
	}
}

// Unknown is the result when the limits ran out in the phase: every model unknown,
// with a message naming the limit, the phase, where in it (progress, e.g. "at line
// 204800"), and when. It counts nothing of the history (none was checked).
func (l *Limits) Unknown(progress string) Result {
	b := l.b
	b.exhaust("limit") // when Reached never said so (a caller's mistake): still unknown
	c := &checker{h: &history.History{}, budget: b, proven: map[string]bool{}}
	c.order = l.names
	for _, m := range l.names {
		msg := fmt.Sprintf("%s: the %s was reached while %s, %s, after %.2fs", m, b.spentWhy, b.spentPhase, progress, b.spentAfter.Seconds())
		c.res.Models = append(c.res.Models, ModelResult{Model: m, Valid: Unknown, AnomalyTypes: []string{}, Message: msg})
	}
	return c.finish()
}
