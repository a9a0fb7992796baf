package check

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"doppel/encode"
)

// keptStrictSearch holds the strict searches within strict serializability's windows
// that proveByReplay ran out of work on (searchStrictWithin), each kept with its memo
// to be continued, and the inference they search.
type keptStrictSearch struct {
	searches []*serialSearch // within the :info horizon first, where there is one
	turn     int             // turns taken so far (resumeStrict: two of three go to the first)
	in       *encode.Inference
	// next is the length of the next turn (turnKept), doubling with each (the first
	// alternateFirstSlice).
	next time.Duration
}

// searchStrictFirst runs the strict search without windows for a third of
// strictSearchWork: within the :info horizon first, where there is one (limitInfo),
// and without it only where that search ended without running out of work (the
// horizon cut every order it reached; where it ran out, the search within windows
// follows). It returns the order found, unverified. The horizon took the k10v2 family
// with 2% :info at 10K from 1.8-1.9 CPU-s to 0.5 (found here, before any narrowing),
// and the independent generator's strict-serializable store with :info from 1.0 to 0.25.
func (c *checker) searchStrictFirst(in *encode.Inference, commit []encode.Commit) ([]int32, bool) {
	s := newStrictSearch(c.h, in, commit, nil, c.budget.stop)
	if s == nil {
		return nil, false
	}
	work := max(1, strictSearchWork()/3)
	if !noInfoHorizon && s.limitInfo() {
		if s.resume(work) {
			return slices.Clone(s.order), true
		}
		if s.outOfWork() || c.budget.out() {
			return nil, false
		}
		if s = newStrictSearch(c.h, in, commit, nil, c.budget.stop); s == nil {
			return nil, false
		}
	}
	if s.resume(work) {
		return slices.Clone(s.order), true
	}
	return nil, false
}

// searchStrictWithin runs the strict search within win (strict serializability's
// windows) for strictSearchWork: with the :info transactions confined to their horizon
// (limitInfo) where there are any, the search without it then kept for the turns only.
// A search that runs out of work is kept too (c.keptStrict) for the later stages'
// turns. It returns the order found, unverified.
func (c *checker) searchStrictWithin(in *encode.Inference, commit []encode.Commit, win *encode.Windows) ([]int32, bool) {
	h := c.h
	first := newStrictSearch(h, in, commit, win, c.budget.stop)
	if first == nil {
		return nil, false
	}
	searches := []*serialSearch{first}
	if !noInfoHorizon && first.limitInfo() {
		if plain := newStrictSearch(h, in, commit, win, c.budget.stop); plain != nil {
			searches = append(searches, plain)
		}
	}
	if !noInfoByInvoke {
		for _, s := range searches {
			s.chooseInfoByInvoke()
		}
	}
	// The first runs now; the other (without the horizon) only in the turns, where it
	// alternates with the first: where the horizon holds, the first finds the order
	// sooner alone (hot keys with 2% :info at 10K: 3.3-11.8 CPU-s when both ran their
	// first budgets here).
	s := searches[0]
	if s.infoHorizon > 0 {
		c.progress("searching a strict-serializable order within its windows, :info transactions near their invokes")
	} else {
		c.progress("searching a strict-serializable order within its windows")
	}
	if order, found := c.raceStrict(s, strictSearchWork()); found {
		return order, true
	}
	kept := searches[1:]
	if s.outOfWork() {
		kept = searches
	}
	if len(kept) > 0 {
		c.keptStrict = &keptStrictSearch{searches: kept, in: in, next: alternateFirstSlice}
	}
	return nil, false
}

// raceStrict runs s (a strict search within windows) for work units and, where the
// history has :info transactions, beside it on another goroutine the same search with
// the other choice order (chooseInfoByInvoke or not), for as much: each stops when the
// other finds an order. It returns the order found first, unverified; s is left as
// its run ended (kept for the turns where it ran out of work), the other dropped.
//
// Why: the node count of either order is heavy-tailed and depends on the seed (hot
// keys with 2% :info at 10K, 40 seeds: 53K-831K+ nodes one way, 42K-816K the other;
// the worse of the two over 300K on 14 seeds, the better on 4), and the other core
// is idle here (the narrowing ahead has ended). The verdict is the same whichever
// finds first: every order is verified before it counts.
func (c *checker) raceStrict(s *serialSearch, work int64) ([]int32, bool) {
	var alt *serialSearch
	// Only with a second core to run on: on one, the search beside halves this one's
	// share.
	if !noStrictRace && runtime.GOMAXPROCS(0) > 1 && s.optionalCandidates() {
		alt = newStrictSearch(c.h, s.in, s.commit, s.win, nil)
	}
	if alt == nil {
		if s.resume(work) {
			return slices.Clone(s.order), true
		}
		return nil, false
	}
	if s.infoHorizon > 0 {
		alt.limitInfo()
	}
	if s.choiceKey == nil {
		alt.chooseInfoByInvoke()
	}
	c.res.Stats.StrictRaces++
	var found atomic.Bool
	alt.stop = c.budget.sideStop(&found)
	altFound := make(chan bool, 1)
	go func() {
		ok := alt.resume(work)
		if ok {
			found.Store(true)
		}
		altFound <- ok
	}()
	stop := s.stop
	s.stop = func() bool { return found.Load() || stop() }
	ok := s.resume(work)
	if ok {
		found.Store(true)
	}
	altOK := <-altFound
	s.stop = stop
	switch {
	case ok:
		return slices.Clone(s.order), true
	case altOK:
		c.res.Stats.RaceWonBeside++
		return slices.Clone(alt.order), true
	}
	return nil, false
}

// noInfoByInvoke (tests) keeps the choices of the strict search within windows in
// prio's order (chooseInfoByInvoke not called; the race's other search then takes it).
var noInfoByInvoke bool

// noStrictRace (tests) runs the strict search within windows alone, without the
// other choice order beside it (raceStrict).
var noStrictRace bool

// noInfoHorizon (tests) leaves out the search within the :info transactions' horizon.
var noInfoHorizon bool

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
	// The first kept search (within the :info horizon, where there is one) takes two
	// turns of every three, the other the third.
	i := 0
	if len(k.searches) > 1 && k.turn%3 == 2 {
		i = 1
	}
	k.turn++
	s := k.searches[i]
	// At least one unit: 0 would mean no bound (tests' rounds start at a nanosecond).
	found := s.resume(max(1, int64(d.Seconds()*strictResumeWorkPerSecond)))
	if !found {
		if !s.outOfWork() {
			k.searches = slices.Delete(k.searches, i, i+1)
			if len(k.searches) == 0 {
				c.keptStrict = nil
			}
		}
		return false
	}
	c.keptStrict = nil
	c.progress("verifying a searched strict-serializable order")
	if err := c.verifyOrder(k.in, s.order, true, true); err != nil {
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
