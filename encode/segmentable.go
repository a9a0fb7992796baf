package encode

import (
	"cmp"
	"slices"

	"doppel/history"
)

// segmentableGrouped is Problem.segmentable (segment, then distinctSegmentation on the
// plan's candidates with budget steps) without listing the candidate blocks of the
// writers that share their values with others (segment's groups): on a long list of
// few values those are millions (every writer of [1] at every 1 of the trace), while
// the explanation needs only the answer. Each group counts once per position it fits
// at, times its number of writers, in the forward and backward counting; the
// depth-first search meets the candidates at a position by merging the groups'
// writers, in the order the plan has them. answered is false where that order or the
// candidates are not the same for every writer of a group: within windows, per read
// (a writer's reads bound its start; version reads cut per transaction), or few
// candidates (which the plan sorts by position only); segmentable then asks segment.
func (sc *scratch) segmentableGrouped(k int32, useCuts, usePins bool, budget int) (ok, decided, answered bool) {
	in := sc.in
	if sc.win != nil || in.PerRead {
		return false, false, false
	}
	ks, done := sc.prepareSegment(k, useCuts, usePins)
	if done {
		return ks.p.State != KeyUnsat, true, true
	}
	if len(ks.versionCuts) > 0 || ks.minStart != nil {
		return false, false, false // not without per-read inference; never guess
	}
	key := &in.Keys[k]
	n, pin, group, pinnedAt := ks.n, ks.p.Pin, ks.group, ks.pinnedAt
	// The candidates of the writers outside groups, as segment lists them (by writer,
	// then position), and each group's positions.
	extra := sc.cs[:0]
	for wi, w := range key.Writers {
		wr := &in.Writers[w]
		if wr.Status == history.Fail || pin[wi] == pinNone {
			continue
		}
		seq := in.WriterVals[wr.Start:wr.End]
		l := int32(len(seq))
		if q := pin[wi]; q >= 0 {
			if !sc.expired() && ks.fits(q, seq) && ks.mayStart(wi, w, wr.Txn, q, l) {
				extra = append(extra, Cand{Pos: q, Writer: w})
			}
			continue
		}
		if g := group[wi]; g >= 0 {
			sc.groupPositions(&ks, g, seq)
			continue
		}
		v := valKey(seq[0])
		j0, j1 := ks.valueRange(seq[0])
		for _, x := range ks.byVal[j0:j1] {
			if x&^0xffffffff != v {
				break
			}
			if i := int32(uint32(x)); !sc.expired() && ks.fits(i, seq) && ks.mayStart(wi, w, wr.Txn, i, l) {
				extra = append(extra, Cand{Pos: i, Writer: w})
			}
		}
	}
	sc.cs = extra
	if sc.stopped {
		return true, true, true // as segmentable on the abandoned plan (never read)
	}
	// Where each group starts a block: at its positions where no writer is pinned (a
	// group's writers are free). Per position, the groups there (posGroups[posOff[i]:
	// posOff[i+1]]), and the number of candidates segment would list.
	ng := len(sc.groupRep)
	total := len(extra)
	posOff := grow(&sc.posCount, int(n)+1)
	clear(posOff)
	for g := range ng {
		if sc.groupSize[g] < 2 {
			continue
		}
		for _, i := range sc.groupPos[sc.groupAt[g] : sc.groupAt[g]+sc.groupLen[g]] {
			if pinnedAt[i] < 0 {
				posOff[i+1]++
				total += int(sc.groupSize[g])
			}
		}
	}
	if !countedSort(total, n) {
		return false, false, false // sorted by position only: the search's order is the sort's
	}
	for i := int32(1); i <= n; i++ {
		posOff[i] += posOff[i-1]
	}
	posGroups := grow(&sc.posGroups, int(posOff[n]))
	fill := grow(&sc.posFill, int(n))
	copy(fill, posOff[:n])
	groupEnd := grow(&sc.groupEnd, ng) // a group's block length
	members := grow(&sc.members, len(key.Writers))
	memberOff := grow(&sc.memberOff, ng+1)
	clear(memberOff)
	for g := range ng {
		r := &in.Writers[sc.groupRep[g]]
		groupEnd[g] = r.End - r.Start
		if sc.groupSize[g] < 2 {
			continue
		}
		memberOff[g+1] = sc.groupSize[g]
		for _, i := range sc.groupPos[sc.groupAt[g] : sc.groupAt[g]+sc.groupLen[g]] {
			if pinnedAt[i] < 0 {
				posGroups[fill[i]] = int32(g)
				fill[i]++
			}
		}
	}
	for g := range ng {
		memberOff[g+1] += memberOff[g]
	}
	memberFill := grow(&sc.memberFill, ng)
	copy(memberFill, memberOff[:ng])
	for wi, w := range key.Writers {
		if g := group[wi]; g >= 0 {
			members[memberFill[g]] = w // writers are in increasing order
			memberFill[g]++
		}
	}
	// The plan's order: by position, then writer.
	slices.SortFunc(extra, func(a, b Cand) int {
		if c := cmp.Compare(a.Pos, b.Pos); c != 0 {
			return c
		}
		return cmp.Compare(a.Writer, b.Writer)
	})
	extraOff := grow(&sc.extraOff, int(n)+1)
	clear(extraOff)
	for _, c := range extra {
		extraOff[c.Pos+1]++
	}
	for i := int32(1); i <= n; i++ {
		extraOff[i] += extraOff[i-1]
	}
	length := func(w int32) int32 { return in.Writers[w].End - in.Writers[w].Start }

	// segment's counting, capped at 2: a group of m >= 2 writers adds m times.
	f := grow(&sc.f, int(n)+1)
	g := grow(&sc.g, int(n)+1)
	clear(f)
	clear(g)
	f[0] = 1
	addTimes := func(a, b int8, m int32) int8 {
		if int32(a)+int32(b)*m > 2 {
			return 2
		}
		return a + b*int8(m)
	}
	for i := int32(0); i < n; i++ {
		if f[i] == 0 {
			continue
		}
		for _, c := range extra[extraOff[i]:extraOff[i+1]] {
			e := min(i+length(c.Writer), n)
			f[e] = addTimes(f[e], f[i], 1)
		}
		for _, gr := range posGroups[posOff[i]:posOff[i+1]] {
			e := min(i+groupEnd[gr], n)
			f[e] = addTimes(f[e], f[i], sc.groupSize[gr])
		}
	}
	g[n] = 1
	for i := n - 1; i >= 0; i-- {
		for _, c := range extra[extraOff[i]:extraOff[i+1]] {
			g[i] = addTimes(g[i], g[min(i+length(c.Writer), n)], 1)
		}
		for _, gr := range posGroups[posOff[i]:posOff[i+1]] {
			g[i] = addTimes(g[i], g[min(i+groupEnd[gr], n)], sc.groupSize[gr])
		}
	}
	switch f[n] {
	case 0:
		return false, true, true
	case 1:
		// One segmentation, counting writers twice: its blocks are the only viable
		// candidates, each alone at its position (a group there would count twice).
		used := map[int32]bool{}
		repeated := false
		for pos := int32(0); pos < n; {
			var c Cand
			for _, x := range extra[extraOff[pos]:extraOff[pos+1]] {
				if g[min(pos+length(x.Writer), n)] > 0 {
					c = x
					break
				}
			}
			repeated = repeated || used[c.Writer]
			used[c.Writer] = true
			pos += length(c.Writer)
		}
		if !repeated {
			return true, true, true // fixed
		}
	}

	// distinctSegmentation on the viable candidates (at a reached position every
	// candidate whose end can complete), merging the extra candidates and the groups'
	// writers there by writer.
	used := map[int32]bool{}
	steps := 0
	var from func(pos int32) bool
	from = func(pos int32) bool {
		if pos >= n {
			return true
		}
		xs := extra[extraOff[pos]:extraOff[pos+1]]
		// next[j]: the next member of the j-th viable group at pos.
		var gs, next []int32
		for _, gr := range posGroups[posOff[pos]:posOff[pos+1]] {
			if g[min(pos+groupEnd[gr], n)] > 0 {
				gs, next = append(gs, gr), append(next, memberOff[gr])
			}
		}
		for {
			for len(xs) > 0 && g[min(pos+length(xs[0].Writer), n)] == 0 {
				xs = xs[1:]
			}
			// The smallest writer among the extra candidates and the groups' next.
			w, src := int32(-1), -1
			if len(xs) > 0 {
				w = xs[0].Writer
			}
			for j, gr := range gs {
				if next[j] < memberOff[gr+1] && (w < 0 || members[next[j]] < w) {
					w, src = members[next[j]], j
				}
			}
			if w < 0 {
				return false
			}
			if src < 0 {
				xs = xs[1:]
			} else {
				next[src]++
			}
			if steps++; steps > budget {
				return false
			}
			if used[w] {
				continue
			}
			used[w] = true
			if from(pos + length(w)) {
				return true
			}
			used[w] = false
		}
	}
	ok = from(0)
	return ok, ok || steps <= budget, true
}
