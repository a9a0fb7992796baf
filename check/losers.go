package check

import (
	"slices"
	"time"

	"doppel/encode"
	"doppel/history"
	"doppel/uncommitted"
)

// losersPlaced proves the forms with process order of read uncommitted and of read
// committed where the history has lost updates (DESIGN.md, "The losers placed anew").
// The losers' appends to their key are left out (they become reads not known, as are
// the losers' reads of the key), with every other read known, or, where those reads
// then show appends no one made (a loser's, read before it was lost), with one longest
// read per key (ruRelaxedHistory); there a serial order under real-time order is mostly
// found at once: the rest ran serially. Each order the checker of its own verifies is
// a commit order of every key but the lost ones, whose positions are placed anew with
// the losers' blocks against the graph of the others: read uncommitted's by
// uncommitted.Index.ProveByOrderPlaced, read committed's by placePerRead (its reads
// constrain the placement too), each verified on the real history. Without it the
// witnesses' searches look for the one order that keeps each loser in line among
// every placement of duplicate values (2,000 transactions on hot keys of two values
// with 5% :info: strong-session read uncommitted unknown at 30 s; 1,000 of them:
// strong-session read committed unknown at 30 s). It runs once.
func (c *checker) losersPlaced(names []string) {
	var ru, rc []string
	process := false
	for _, n := range names {
		switch spec := models[n]; {
		case c.proven[n]:
		case spec.uncommitted:
			ru = append(ru, n)
			process = process || spec.process
		case spec.perRead && spec.process && c.replayable(n):
			rc = append(rc, n)
			process = true
		}
	}
	if !process || c.placedTried || c.opts.Solver.NoWitness || c.budget.out() || !c.ruFindLost() {
		return
	}
	c.placedTried = true
	var rin *encode.Inference // read committed's, values checked
	if len(rc) > 0 {
		if rin = c.perReadInference(); rin == nil || !rin.CheckValuesStop(c.budget.stop) || !perReadClean(rin) {
			rc, rin = nil, nil
		}
	}
	ob := c.ruOneBase()
	if ob == nil || c.budget.out() {
		return
	}
	relax := relaxedReads(c.h, ob, c.lostUpdatesFound())
	if len(relax) == 0 {
		return
	}
	c.progress("replaying serially with the lost appends left out (a witness for the weak models)")
	// leftOut is c.h with the losers' appends to their key (and their reads of it) not
	// known, every other read known or, with longestOnly, one longest read per key; and
	// its inference, nil where a read shows what no one appended or the limits ran out.
	leftOut := func(longestOnly bool) (*history.History, *encode.Inference) {
		var hr *history.History
		if longestOnly {
			hr, _ = ruRelaxedHistory(c.h, false)
		} else {
			hr = relaxedHistory(c.h, relax, false)
		}
		for _, r := range relax {
			k, tx := c.h.Ops[r.op].Key, &hr.Txns[r.txn]
			for i := tx.OpStart; i < tx.OpEnd; i++ {
				if op := &hr.Ops[i]; op.Key == k {
					op.Kind, op.Known = history.Read, false
				}
			}
		}
		ir := encode.InferStop(hr, c.budget.stop)
		if ir == nil || !ir.CheckValuesStop(c.budget.stop) || len(ir.Findings) > 0 {
			return nil, nil
		}
		return hr, ir
	}
	// The longest reads alone only where the other reads show a loser's append (read
	// before it was lost): where an order was found and the placement failed, theirs
	// fail too (hot keys with 5% :info at 2,000: 7 s more for no proof). Read
	// committed's reads are all kept, so the longest reads alone tell it nothing.
	hr, ir := leftOut(false)
	if ir == nil && !c.budget.out() && len(ru) > 0 {
		hr, ir = leftOut(true)
	}
	if ir == nil {
		return
	}
	sub, ready := c.witnessCheckerOn(hr)
	if !ready {
		return
	}
	if !c.budget.deadline.IsZero() {
		// A share of the time left: where the rest is not serializable at once (a lost
		// update among 100K transactions on 10K keys of two values, 2% :info), its
		// replays and narrowing took the whole 30-s limit for no order.
		sub.budget.deadline = time.Now().Add(time.Until(c.budget.deadline) / losersPlacedShare)
	}
	var x *uncommitted.Index // read uncommitted's, only where its forms are asked
	var mayLeave []bool      // the lost updates' members: a key placed anew may leave one out
	if len(ru) > 0 {
		x = c.uncommittedIndex()
		mayLeave = make([]bool, len(c.h.Txns))
		for _, a := range c.lostUpdatesFound() {
			if a.Model == "" { // as relaxedReads takes them
				for _, ref := range a.Txns {
					mayLeave[ref.ID] = true
				}
			}
		}
	}
	found := false
	sub.onSerialOrder = func(order []int32) {
		// Each form with process order whose placement is exhausted given this order's
		// other keys; when all are, the checker of its own stops: the loser reaches
		// writers it must precede on its key through the order's other keys, which
		// the other orders mostly share (a lost update among 100K transactions: its
		// strict narrowing took 13 s more for nothing).
		open, stuckAll := 0, true
		for _, n := range ru {
			spec := models[n]
			if c.proven[n] {
				continue
			}
			proved, stuck := x.ProveByOrderPlaced(order, spec.process, spec.realtime, mayLeave, placeStates, c.budget.stop)
			if proved {
				c.proven[n], found = true, true
			} else if spec.process {
				open++
				stuckAll = stuckAll && stuck
			}
		}
		if rin != nil {
			// Under real-time order first where a form has it (its order proves the
			// others too), then under process order alone; only the latter's
			// exhaustion counts.
			rcOpen, rcStuck := false, false
			for _, realtime := range []bool{true, false} {
				var want []string
				hasRealtime := false
				for _, n := range rc {
					if !c.proven[n] {
						want = append(want, n)
						hasRealtime = hasRealtime || models[n].realtime
					}
				}
				if len(want) == 0 || realtime && !hasRealtime {
					continue
				}
				commit, ok, stuck := placePerRead(c.h, rin, order, true, realtime, placeStates, c.budget.stop)
				if ok {
					if at, err := verifyPerReadLists(c.h, rin, commit); err == nil {
						c.proveOrdered(at, want)
						found = found || slices.ContainsFunc(want, func(n string) bool { return c.proven[n] })
					}
				}
				if !realtime {
					rcOpen, rcStuck = !c.allProven(want), stuck
				}
			}
			if rcOpen {
				open++
				stuckAll = stuckAll && rcStuck
			}
		}
		if open > 0 && stuckAll {
			sub.budget.deadline = time.Now()
		}
	}
	sub.proveByReplay(ir, []string{"strict-serializable"})
	if !c.allProven(append(ru, rc...)) && !c.budget.out() && !sub.budget.out() {
		lift := sub.budget.capConflicts(strictWitnessConflicts)
		sub.decideNarrowed(ir, "strict-serializable")
		lift()
	}
	c.res.Stats.PruneSeconds += sub.res.Stats.PruneSeconds
	c.addWitnessStats(sub, found)
}

// losersPlacedShare divides the time left that losersPlaced's checker of its own gets.
const losersPlacedShare = 4

// placeStates bounds the failed states of each lost key's placement
// (uncommitted.Index.ProveByOrderPlaced, placePerRead).
const placeStates = 1 << 14
