package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	"doppel/check"
	"doppel/history"
)

// cycle is an anomaly's cycle as a graph to draw.
type cycle struct {
	Nodes []cnode
	Edges []cedge
}

type cnode struct {
	ID        int
	Name, Ops string
}

type cedge struct {
	From, To       int // indices into Nodes
	Kind, Key, Why string
}

func newCycle(h *history.History, a *check.Anomaly) cycle {
	var c cycle
	index := map[int]int{}
	ops := map[int]string{}
	for _, t := range a.Txns {
		ops[t.ID] = t.Ops
	}
	node := func(t int) int {
		if i, ok := index[t]; ok {
			return i
		}
		index[t] = len(c.Nodes)
		c.Nodes = append(c.Nodes, cnode{ID: t, Name: txnName(h, t), Ops: ops[t]})
		return len(c.Nodes) - 1
	}
	for _, s := range a.Steps {
		c.Edges = append(c.Edges, cedge{From: node(s.From), To: node(s.To), Kind: s.Kind, Key: s.Key, Why: s.Why})
	}
	return c
}

// svg draws the cycle: transactions on a circle, in cycle order clockwise, each edge a
// curved arrow labelled with its kind and key (curved so that the two edges of a
// two-transaction cycle do not overlap). The full reason is the edge's tooltip.
func (c cycle) svg() template.HTML {
	n := len(c.Nodes)
	const nodeR = 26.0
	R := 40.0 + 20*float64(n)
	if n == 1 {
		R = 0
	}
	pad := 70.0
	w, hgt := 2*R+2*pad+60, 2*R+2*pad
	cx, cy := w/2, hgt/2
	pos := make([][2]float64, n)
	for i := range pos {
		ang := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		pos[i] = [2]float64{cx + R*math.Cos(ang), cy + R*math.Sin(ang)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="cycle" xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="dependency cycle">`, w, hgt, w, hgt)
	b.WriteString(`<defs>`)
	for _, k := range []string{"ww", "wr", "rw", "process", "realtime"} {
		fmt.Fprintf(&b, `<marker id="arrow-%s" class="k-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>`, k, k)
	}
	b.WriteString(`</defs>`)
	for _, e := range c.Edges {
		p0, p2 := pos[e.From], pos[e.To]
		dx, dy := p2[0]-p0[0], p2[1]-p0[1]
		d := math.Hypot(dx, dy)
		if d == 0 { // a self-loop: a small circle above the node
			fmt.Fprintf(&b, `<g class="edge k-%s"><title>%s</title><path d="M%.1f,%.1f a18,18 0 1,1 20,0" fill="none" marker-end="url(#arrow-%s)"/></g>`,
				esc(e.Kind), esc(e.Why), p0[0]-10, p0[1]-nodeR, esc(e.Kind))
			continue
		}
		// Control point: off the midpoint, to the left of the direction of travel.
		bend := 0.3 * d
		ctl := [2]float64{(p0[0]+p2[0])/2 + bend*dy/d, (p0[1]+p2[1])/2 - bend*dx/d}
		s := shorten(p0, ctl, nodeR)
		t := shorten(p2, ctl, nodeR+3)
		mid := [2]float64{0.25*s[0] + 0.5*ctl[0] + 0.25*t[0], 0.25*s[1] + 0.5*ctl[1] + 0.25*t[1]}
		label := e.Kind
		if e.Key != "" {
			label += " " + e.Key
		}
		fmt.Fprintf(&b, `<g class="edge k-%s"><title>%s</title><path d="M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f" fill="none" marker-end="url(#arrow-%s)"/>`,
			esc(e.Kind), esc(e.Why), s[0], s[1], ctl[0], ctl[1], t[0], t[1], esc(e.Kind))
		fmt.Fprintf(&b, `<text class="elabel" x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="middle">%s</text></g>`, mid[0], mid[1], esc(label))
	}
	for i, nd := range c.Nodes {
		fmt.Fprintf(&b, `<g class="node txn" data-txn="%d"><title>%s: %s</title><circle cx="%.1f" cy="%.1f" r="%.0f"/><text x="%.1f" y="%.1f" text-anchor="middle" dominant-baseline="middle">%s</text></g>`,
			nd.ID, esc(nd.Name), esc(nd.Ops), pos[i][0], pos[i][1], nodeR, pos[i][0], pos[i][1], esc(nd.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// shorten moves p towards q by r (to start or end an edge at a node's border).
func shorten(p, q [2]float64, r float64) [2]float64 {
	dx, dy := q[0]-p[0], q[1]-p[1]
	d := math.Hypot(dx, dy)
	if d <= r {
		return p
	}
	return [2]float64{p[0] + dx*r/d, p[1] + dy*r/d}
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// maxTimeline bounds the transactions drawn: the timeline of a million transactions
// is no help; the ones around the anomalies are.
const maxTimeline = 300

// timeline draws transactions per process against the history's event order (invoke
// to completion), as Porcupine draws operations: one lane per process, one bar per
// transaction; hovering a bar shows its operations. With anomalies, it shows the
// stretch of the history around their transactions.
func timeline(h *history.History, res *check.Result) (template.HTML, string) {
	if len(h.Txns) == 0 {
		return "", ""
	}
	involved := map[int]bool{}
	for _, a := range res.Anomalies {
		for _, t := range a.Txns {
			involved[t.ID] = true
		}
	}
	start := func(t int) int32 { return max(h.Txns[t].Invoke, 0) }
	lastEvent := int32(0)
	for t := range h.Txns {
		lastEvent = max(lastEvent, h.Txns[t].Complete, start(t))
	}
	end := func(t int) int32 {
		if c := h.Txns[t].Complete; c >= 0 {
			return c
		}
		return lastEvent + 1 // never completed: open to the end
	}
	// The stretch of events to show.
	lo, hi := int32(0), lastEvent+1
	if len(involved) > 0 {
		lo, hi = math.MaxInt32, 0
		for t := range involved {
			lo, hi = min(lo, start(t)), max(hi, min(end(t), lastEvent+1))
		}
		const margin = 16
		lo, hi = max(lo-margin, 0), min(hi+margin, lastEvent+1)
	}
	var shown []int
	for t := range h.Txns {
		if end(t) >= lo && start(t) <= hi {
			shown = append(shown, t)
		}
	}
	total := len(shown)
	if len(shown) > maxTimeline {
		// Keep the involved transactions and those nearest them in time.
		centre := (lo + hi) / 2
		sort.SliceStable(shown, func(i, j int) bool {
			a, b := shown[i], shown[j]
			if involved[a] != involved[b] {
				return involved[a]
			}
			return abs(start(a)-centre) < abs(start(b)-centre)
		})
		shown = shown[:maxTimeline]
		lo, hi = math.MaxInt32, 0
		for _, t := range shown {
			lo, hi = min(lo, start(t)), max(hi, min(end(t), lastEvent+1))
		}
	}
	note := fmt.Sprintf("%d transactions, events %d to %d of the history", len(shown), lo, hi)
	if len(shown) < len(h.Txns) {
		note = fmt.Sprintf("%d of %d transactions (those around the anomalies), events %d to %d", len(shown), len(h.Txns), lo, hi)
		if total > len(shown) {
			note += fmt.Sprintf("; %d more ran in that stretch", total-len(shown))
		}
	}
	// Lanes: processes in order of first appearance.
	lane := map[int32]int{}
	var lanes []string
	sort.Slice(shown, func(i, j int) bool { return start(shown[i]) < start(shown[j]) })
	for _, t := range shown {
		p := h.Txns[t].Process
		if _, ok := lane[p]; !ok {
			lane[p] = len(lanes)
			name := "(none)"
			if p >= 0 {
				name = h.Processes[p]
			}
			lanes = append(lanes, name)
		}
	}
	const labelW, plotW, laneH = 90.0, 880.0, 28.0
	span := float64(max(hi-lo, 1))
	x := func(e int32) float64 { return labelW + plotW*float64(e-lo)/span }
	W, H := labelW+plotW+10, laneH*float64(len(lanes))+24
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="transactions per process">`, W, H, W, H)
	for i, name := range lanes {
		y := laneH * float64(i)
		fmt.Fprintf(&b, `<g class="lane"><rect class="lane-bg" x="0" y="%.0f" width="%.0f" height="%.0f"/><text class="lane-label" x="4" y="%.1f" dominant-baseline="middle">process %s</text></g>`,
			y, W, laneH, y+laneH/2, esc(name))
	}
	for _, t := range shown {
		tx := &h.Txns[t]
		x0, x1 := x(max(start(t), lo)), x(min(end(t), hi))
		if x1-x0 < 3 {
			x1 = x0 + 3
		}
		y := laneH*float64(lane[tx.Process]) + 4
		cls := "txn bar st-" + tx.Status.String()
		if involved[t] {
			cls += " involved"
		}
		if tx.Complete < 0 {
			cls += " open"
		}
		name := txnName(h, t)
		ops := opsText(h, t)
		fmt.Fprintf(&b, `<g class="%s" data-txn="%d" data-name="%s" data-ops="%s" data-where="line %d, %s"><title>%s (%s): %s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="3"/>`,
			cls, t, esc(name), esc(ops), tx.Line, tx.Status, esc(name), tx.Status, esc(ops), x0, y, x1-x0, laneH-8)
		if x1-x0 > 8*float64(len(name))+6 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`, x0+4, y+(laneH-8)/2, esc(name))
		}
		b.WriteString(`</g>`)
	}
	fmt.Fprintf(&b, `<text class="axis" x="%.0f" y="%.0f">event %d</text><text class="axis" x="%.0f" y="%.0f" text-anchor="end">event %d</text>`,
		labelW, H-6, lo, W-10, H-6, hi)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), note
}

func abs(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}
