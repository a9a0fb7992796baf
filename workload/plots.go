package workload

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"doppel/history"
)

// Plot files of a run's output directory, after Jepsen's latency-raw and rate graphs.
const (
	PlotLatency = "latency-raw.svg"
	PlotRate    = "rate.svg"
)

// Colours of outcomes (Jepsen's: ok blue, info orange, fail red) and of nemesis
// intervals.
var (
	outcomeColor = [...]string{history.TypeOK: "#4e79a7", history.TypeInfo: "#f28e2b", history.TypeFail: "#e15759"}
	outcomeName  = [...]string{history.TypeOK: "ok", history.TypeInfo: "info", history.TypeFail: "fail"}
	faultColor   = map[string]string{NemesisRestart: "#b07aa1", NemesisKill: "#e15759", NemesisPause: "#76b7b2"}
)

// latencyPoint is one completed transaction: invoked at t (seconds since the start),
// taking ms milliseconds.
type latencyPoint struct {
	t, ms float64
	typ   history.Type
}

// faultInterval is a time the server was disturbed: from a fault's invoke to the
// completion of its end (kill → start, pause → resume, restart → restarted).
type faultInterval struct {
	fault    string
	from, to float64 // seconds
}

// kill-conn actions are instants: drawn as ticks, not intervals.
type plotData struct {
	points    []latencyPoint
	faults    []faultInterval
	killConns []float64
	end       float64 // seconds
}

func collectPlotData(events []history.Event) plotData {
	var d plotData
	invoked := map[int64]int64{} // process -> invoke time
	open := map[string]float64{} // fault -> when it began
	ends := map[string]string{"start": NemesisKill, "resume": NemesisPause}
	invokeOfNemesis := true // nemesis events alternate invoke, completion
	for i := range events {
		e := &events[i]
		sec := float64(e.Time) / 1e9
		d.end = max(d.end, sec)
		if e.IsNemesis() {
			isInvoke := invokeOfNemesis
			invokeOfNemesis = !invokeOfNemesis
			switch {
			case e.F == NemesisKillConn:
				if isInvoke {
					d.killConns = append(d.killConns, sec)
				}
			case isInvoke && (e.F == NemesisKill || e.F == NemesisPause || e.F == NemesisRestart):
				open[e.F] = sec
			case !isInvoke && e.F == NemesisRestart:
				d.faults = append(d.faults, faultInterval{NemesisRestart, open[NemesisRestart], sec})
				delete(open, NemesisRestart)
			case !isInvoke && ends[e.F] != "":
				f := ends[e.F]
				if from, ok := open[f]; ok {
					d.faults = append(d.faults, faultInterval{f, from, sec})
					delete(open, f)
				}
			}
			continue
		}
		if e.Type == history.TypeInvoke {
			invoked[e.Process] = e.Time
			continue
		}
		if t0, ok := invoked[e.Process]; ok {
			d.points = append(d.points, latencyPoint{float64(t0) / 1e9, float64(e.Time-t0) / 1e6, e.Type})
			delete(invoked, e.Process)
		}
	}
	for _, f := range []string{NemesisRestart, NemesisKill, NemesisPause} {
		if from, ok := open[f]; ok { // still in force when the history ends
			d.faults = append(d.faults, faultInterval{f, from, d.end})
		}
	}
	return d
}

// svgPlot is a chart being written: a plot area with axes, in SVG user units.
type svgPlot struct {
	w           *bufio.Writer
	left, top   float64
	width, high float64
	xmax        float64 // seconds
}

const (
	svgWidth, svgHeight = 900.0, 420.0
	plotLeft, plotTop   = 70.0, 40.0
	plotRight, plotBot  = 140.0, 50.0 // room for the legend and the x axis
)

func newSVGPlot(w *bufio.Writer, title string, xmax float64) *svgPlot {
	p := &svgPlot{w: w, left: plotLeft, top: plotTop, width: svgWidth - plotLeft - plotRight, high: svgHeight - plotTop - plotBot, xmax: max(xmax, 1e-3)}
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/><text x="%g" y="22" font-size="15">%s</text>`+"\n", p.left, xmlEscape(title))
	return p
}

func (p *svgPlot) x(sec float64) float64 { return p.left + sec/p.xmax*p.width }

// faults shades the nemesis intervals and ticks the kill-conn instants.
func (p *svgPlot) faults(d *plotData) {
	for _, f := range d.faults {
		x0, x1 := p.x(f.from), p.x(f.to)
		fmt.Fprintf(p.w, `<rect x="%.1f" y="%g" width="%.1f" height="%g" fill="%s" fill-opacity="0.25"><title>%s %.2fs–%.2fs</title></rect>`+"\n",
			x0, p.top, max(x1-x0, 1), p.high, faultColor[f.fault], f.fault, f.from, f.to)
	}
	if len(d.killConns) > 0 {
		fmt.Fprint(p.w, `<path stroke="#555" stroke-width="1" d="`)
		for _, t := range d.killConns {
			fmt.Fprintf(p.w, "M%.1f %gv6", p.x(t), p.top)
		}
		fmt.Fprint(p.w, `"/>`+"\n")
	}
}

// axes draws the frame, the time axis and the y axis's ticks (label, fraction of the
// height from the bottom).
func (p *svgPlot) axes(yLabel string, yTicks []string, yFrac []float64) {
	fmt.Fprintf(p.w, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#333"/>`+"\n", p.left, p.top, p.width, p.high)
	step := niceStep(p.xmax / 10)
	for k := 0; float64(k)*step <= p.xmax+1e-9; k++ {
		t := float64(k) * step
		x := p.x(t)
		fmt.Fprintf(p.w, `<path stroke="#333" d="M%.1f %gv5"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n",
			x, p.top+p.high, x, p.top+p.high+18, formatTick(t, step))
	}
	fmt.Fprintf(p.w, `<text x="%g" y="%g" text-anchor="middle">time (s)</text>`+"\n", p.left+p.width/2, p.top+p.high+38)
	for i, label := range yTicks {
		y := p.top + p.high*(1-yFrac[i])
		fmt.Fprintf(p.w, `<path stroke="#ddd" d="M%g %.1fh%g"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n",
			p.left, y, p.width, p.left-6, y+4, label)
	}
	fmt.Fprintf(p.w, `<text transform="translate(16 %g) rotate(-90)" text-anchor="middle">%s</text>`+"\n", p.top+p.high/2, xmlEscape(yLabel))
}

// legend lists the outcomes drawn and the faults shaded.
func (p *svgPlot) legend(types []history.Type, d *plotData) {
	x, y := p.left+p.width+14, p.top+10
	for _, t := range types {
		fmt.Fprintf(p.w, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g">%s</text>`+"\n", x, y-9, outcomeColor[t], x+16, y, outcomeName[t])
		y += 18
	}
	seen := map[string]bool{}
	for _, f := range d.faults {
		if seen[f.fault] {
			continue
		}
		seen[f.fault] = true
		fmt.Fprintf(p.w, `<rect x="%g" y="%g" width="10" height="10" fill="%s" fill-opacity="0.4"/><text x="%g" y="%g">%s</text>`+"\n", x, y-9, faultColor[f.fault], x+16, y, f.fault)
		y += 18
	}
	if len(d.killConns) > 0 {
		fmt.Fprintf(p.w, `<path stroke="#555" d="M%g %gv10"/><text x="%g" y="%g">kill-conn</text>`+"\n", x+5, y-9, x+16, y)
	}
}

func (p *svgPlot) close() error {
	fmt.Fprint(p.w, "</svg>\n")
	return p.w.Flush()
}

// writeLatencyPlot draws every transaction's latency at its invoke time, on a log
// scale, coloured by outcome (Jepsen's latency-raw).
func writeLatencyPlot(path string, d *plotData) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	p := newSVGPlot(bufio.NewWriter(f), "Latency of each transaction (at its invoke), by outcome", d.end)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range d.points {
		ms := max(pt.ms, 1e-3)
		lo, hi = min(lo, ms), max(hi, ms)
	}
	if len(d.points) == 0 {
		lo, hi = 1, 10
	}
	dLo, dHi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dHi <= dLo {
		dHi = dLo + 1
	}
	frac := func(ms float64) float64 { return (math.Log10(max(ms, 1e-3)) - dLo) / (dHi - dLo) }
	var ticks []string
	var fracs []float64
	for e := dLo; e <= dHi; e++ {
		ticks = append(ticks, strconv.FormatFloat(math.Pow(10, e), 'g', -1, 64))
		fracs = append(fracs, (e-dLo)/(dHi-dLo))
	}
	p.faults(d)
	p.axes("latency (ms)", ticks, fracs)
	types := []history.Type{history.TypeOK, history.TypeInfo, history.TypeFail}
	var drawn []history.Type
	for _, t := range types {
		n := 0
		for _, pt := range d.points {
			if pt.typ != t {
				continue
			}
			if n == 0 {
				fmt.Fprintf(p.w, `<path fill="%s" fill-opacity="0.6" d="`, outcomeColor[t])
			}
			n++
			// A 2×2 square per transaction: one path per outcome keeps the file small.
			fmt.Fprintf(p.w, "M%.1f %.1fh2v2h-2z", p.x(pt.t)-1, p.top+p.high*(1-frac(pt.ms))-1)
		}
		if n > 0 {
			fmt.Fprint(p.w, `"/>`+"\n")
			drawn = append(drawn, t)
		}
	}
	p.legend(drawn, d)
	return p.close()
}

// writeRatePlot draws completions per second over time, one line per outcome
// (Jepsen's rate graph).
func writeRatePlot(path string, d *plotData) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	p := newSVGPlot(bufio.NewWriter(f), "Throughput: transactions completed per second, by outcome", d.end)
	// About 50 buckets, at least 10 ms each.
	bucket := max(niceStep(d.end/50), 0.01)
	n := int(d.end/bucket) + 1
	counts := map[history.Type][]float64{}
	for _, pt := range d.points {
		c := counts[pt.typ]
		if c == nil {
			c = make([]float64, n)
			counts[pt.typ] = c
		}
		done := pt.t + pt.ms/1e3
		c[min(int(done/bucket), n-1)] += 1 / bucket
	}
	peak := 1.0
	for _, c := range counts {
		for _, v := range c {
			peak = max(peak, v)
		}
	}
	step := niceStep(peak / 5)
	top := math.Ceil(peak/step) * step
	var ticks []string
	var fracs []float64
	for k := 0; float64(k)*step <= top+1e-9; k++ {
		v := float64(k) * step
		ticks = append(ticks, formatTick(v, step))
		fracs = append(fracs, v/top)
	}
	p.faults(d)
	p.axes("transactions / s", ticks, fracs)
	var drawn []history.Type
	for _, t := range []history.Type{history.TypeOK, history.TypeInfo, history.TypeFail} {
		c := counts[t]
		if c == nil {
			continue
		}
		drawn = append(drawn, t)
		fmt.Fprintf(p.w, `<path fill="none" stroke="%s" stroke-width="1.5" d="`, outcomeColor[t])
		for i, v := range c {
			cmd := 'L'
			if i == 0 {
				cmd = 'M'
			}
			fmt.Fprintf(p.w, "%c%.1f %.1f", cmd, p.x((float64(i)+0.5)*bucket), p.top+p.high*(1-v/top))
		}
		fmt.Fprint(p.w, `"/>`+"\n")
	}
	p.legend(drawn, d)
	return p.close()
}

// writePlots writes the latency and rate plots of a run into dir.
func writePlots(dir string, events []history.Event) error {
	d := collectPlotData(events)
	if err := writeLatencyPlot(filepath.Join(dir, PlotLatency), &d); err != nil {
		return err
	}
	return writeRatePlot(filepath.Join(dir, PlotRate), &d)
}

// formatTick prints a multiple of step with as many decimals as step needs.
func formatTick(v, step float64) string {
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func xmlEscape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '&':
			b = append(b, "&amp;"...)
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
