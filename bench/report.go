package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// modelAbbrev shortens model names for the table.
var modelAbbrev = map[string]string{
	"serializable":                "ser",
	"strict-serializable":         "strict",
	"strong-session-serializable": "session",
	"snapshot-isolation":          "si",
}

// verdictText is e.g. "ser:ok strict:ok si:NO(G-single)".
func verdictText(vs []Verdict) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		name := modelAbbrev[v.Model]
		if name == "" {
			name = v.Model
		}
		mark := "?"
		switch v.Valid {
		case "valid":
			mark = "ok"
		case "not valid":
			mark = "NO"
			if len(v.Anomalies) > 0 {
				mark += "(" + strings.Join(v.Anomalies, ",") + ")"
			}
		}
		if v.Mismatch() {
			mark += "!"
		}
		parts = append(parts, name+":"+mark)
	}
	return strings.Join(parts, " ")
}

// expectText compares the verdicts of a scenario's runs with its expected ones:
// "MISMATCH" if some run decided against one, else "undecided" if some run gave
// unknown for one, "as expected" if all were as expected, "-" without expectations.
func expectText(runs []Measurement) string {
	expected, undecided := false, false
	for _, r := range runs {
		for _, v := range r.Verdicts {
			switch {
			case v.Mismatch():
				return "MISMATCH"
			case v.Undecided():
				undecided = true
			}
			expected = expected || v.Expected != ""
		}
	}
	switch {
	case undecided:
		return "undecided"
	case expected:
		return "as expected"
	}
	return "-"
}

// paperText is the paper's number for a scenario, or "".
func paperText(name string) string {
	sc, ok := Find(name)
	if !ok || sc.PaperSeconds == 0 {
		return ""
	}
	return fmt.Sprintf("%s%g s", sc.PaperNote, sc.PaperSeconds)
}

// WriteTable prints one line per scenario: sizes, the phases of the fastest run, the
// minimum and median of parse+check over the runs, throughput, peak memory, verdicts.
func WriteTable(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\ttxns\tops\tEDN MB\topen keys\tparse s\tinfer s\tsolve s\texplain s\tcheck s\tmin s\tmedian s\truns\tops/s\tpeak RSS MiB\tpaper\t expected\t verdicts")
	for _, s := range sums {
		b := s.Best
		open := fmt.Sprintf("%d/%d", b.Stats.KeysOpen, b.Stats.Keys)
		switch {
		case b.Abandoned:
			open = "abandoned in " + b.StuckIn // still checking well past the timeout
		case !b.Stats.Encoded() && b.Stats.PinRefuted > 0 && b.Stats.Replayed == 0:
			open = "pins" // refuted by a cycle of placed blocks: no segmentation was built
		case !b.Stats.Encoded():
			open = "replayed" // decided by a verified replay: no segmentation was built
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%.0f\t%.0f\t%s\t %s\t %s\n",
			s.Scenario, b.Txns, b.Ops, float64(b.Bytes)/1e6, open,
			b.Stats.ParseSeconds, b.Stats.InferSeconds, b.Stats.SolveSeconds, b.Stats.ExplainSeconds, b.CheckSeconds,
			s.MinSeconds, s.MedianSeconds, len(s.Runs), b.OpsPerSecond, float64(s.MaxPeakRSSBytes)/(1<<20),
			paperText(s.Scenario), expectText(s.Runs), verdictText(b.Verdicts))
	}
	return tw.Flush()
}

// svgPoint is one x position of a panel.
type svgPoint struct {
	label string
	sum   Summary
	paper float64 // paper prototype's seconds, 0 if none
}

// WriteSVG plots the Figure 3 scenarios among sums (fig3-left-*, fig3-right-*): our
// median parse+check time with the min-max range over runs, the phases of the fastest
// run, the paper's reported points and the 1 s target, on a log time axis.
func WriteSVG(w io.Writer, sums []Summary) error {
	var left, right []svgPoint
	for _, s := range sums {
		sc, _ := Find(s.Scenario)
		switch {
		case strings.HasPrefix(s.Scenario, "fig3-left-"):
			left = append(left, svgPoint{label: fmt.Sprintf("%dK", sc.Spec.Txns/1000), sum: s, paper: sc.PaperSeconds})
		case strings.HasPrefix(s.Scenario, "fig3-right-dup"):
			pct := strings.TrimPrefix(s.Scenario, "fig3-right-dup")
			right = append(right, svgPoint{label: pct + "%", sum: s, paper: sc.PaperSeconds})
		}
	}
	if len(left) == 0 && len(right) == 0 {
		return fmt.Errorf("no fig3-left-* or fig3-right-* scenario among the results")
	}
	const width, height = 960, 420
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	svgPanel(&b, 70, 40, 380, 300, "Figure 3 (left): transactions (20 ops each)", left)
	svgPanel(&b, 550, 40, 380, 300, "Figure 3 (right): keys with duplicate values (10K txns)", right)
	// Legend.
	lx, ly := 70.0, 395.0
	items := []struct{ color, dash, text string }{
		{"#1f77b4", "", "doppel parse+check (median; bar: min-max)"},
		{"#2ca02c", "4 3", "infer"},
		{"#9467bd", "4 3", "solve"},
		{"#8c564b", "4 3", "explain"},
		{"#7f7f7f", "4 3", "parse"},
	}
	for _, it := range items {
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n", lx, ly, lx+24, ly, it.color, it.dash)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", lx+30, ly+4, it.text)
		lx += 60 + 6.5*float64(len(it.text))
	}
	fmt.Fprintf(&b, `<circle cx="%.0f" cy="%.0f" r="5" fill="#d62728"/><text x="%.0f" y="%.0f">paper (Elle+)</text>`+"\n", lx+6, ly, lx+16, ly+4)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// svgPanel draws one panel at (x0, y0) of size pw x ph.
func svgPanel(b *strings.Builder, x0, y0, pw, ph float64, title string, pts []svgPoint) {
	const loDecade, hiDecade = -3, 3 // 1 ms .. 1000 s
	y := func(sec float64) float64 {
		l := math.Log10(max(sec, math.Pow(10, loDecade)))
		return y0 + ph - (l-loDecade)/(hiDecade-loDecade)*ph
	}
	x := func(i int) float64 {
		return x0 + (float64(i)+0.5)*pw/float64(max(len(pts), 1))
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="14" text-anchor="middle">%s</text>`+"\n", x0+pw/2, y0-16, html.EscapeString(title))
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="black"/>`+"\n", x0, y0, pw, ph)
	for d := loDecade; d <= hiDecade; d++ {
		yy := y(math.Pow(10, float64(d)))
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, yy, x0+pw, yy)
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0-6, yy+4, secondsLabel(float64(d)))
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" transform="rotate(-90 %.0f %.0f)" text-anchor="middle">seconds (log)</text>`+"\n", x0-48, y0+ph/2, x0-48, y0+ph/2)
	// The target: every Figure 3 point under 1 s.
	fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ff7f0e" stroke-dasharray="6 4"/>`+"\n", x0, y(1), x0+pw, y(1))
	fmt.Fprintf(b, `<text x="%.0f" y="%.1f" fill="#ff7f0e" text-anchor="end">target 1 s</text>`+"\n", x0+pw-4, y(1)-4)
	for i, p := range pts {
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x(i), y0+ph+16, p.label)
	}
	line := func(color, dash string, val func(Summary) float64, dots bool) {
		var path []string
		for i, p := range pts {
			path = append(path, fmt.Sprintf("%.1f,%.1f", x(i), y(val(p.sum))))
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n", strings.Join(path, " "), color, dash)
		if dots {
			for i, p := range pts {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s: %.3f s</title></circle>`+"\n", x(i), y(val(p.sum)), color, html.EscapeString(p.sum.Scenario), val(p.sum))
			}
		}
	}
	line("#7f7f7f", "4 3", func(s Summary) float64 { return s.Best.Stats.ParseSeconds }, false)
	line("#2ca02c", "4 3", func(s Summary) float64 { return s.Best.Stats.InferSeconds }, false)
	line("#9467bd", "4 3", func(s Summary) float64 { return s.Best.Stats.SolveSeconds }, false)
	line("#8c564b", "4 3", func(s Summary) float64 { return s.Best.Stats.ExplainSeconds }, false)
	for i, p := range pts {
		lo, hi := p.sum.MinSeconds, p.sum.MinSeconds
		for _, r := range p.sum.Runs {
			hi = max(hi, r.TotalSeconds)
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#1f77b4" stroke-width="6" stroke-opacity="0.35"/>`+"\n", x(i), y(lo), x(i), y(hi))
	}
	line("#1f77b4", "", func(s Summary) float64 { return s.MedianSeconds }, true)
	for i, p := range pts {
		if p.sum.Best.Valid == "unknown" {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#1f77b4" text-anchor="middle">%s</text>`+"\n",
				x(i), y(p.sum.MedianSeconds)+20, html.EscapeString(unknownModels(p.sum.Best.Verdicts)))
		}
	}
	for i, p := range pts {
		if p.paper == 0 {
			continue
		}
		sc, _ := Find(p.sum.Scenario)
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="5" fill="#d62728"/>`+"\n", x(i), y(p.paper))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#d62728" text-anchor="end">%s</text>`+"\n", x(i)-8, y(p.paper)+4, html.EscapeString(fmt.Sprintf("paper %s%g s", sc.PaperNote, p.paper)))
	}
}

// secondsLabel names the decade 10^d seconds.
func secondsLabel(d float64) string {
	s := math.Pow(10, d)
	if s < 1 {
		return fmt.Sprintf("%g ms", s*1000)
	}
	return fmt.Sprintf("%g s", s)
}

// unknownModels lists the models left unknown (a limit was reached).
func unknownModels(vs []Verdict) string {
	var names []string
	for _, v := range vs {
		if v.Valid == "unknown" {
			names = append(names, v.Model)
		}
	}
	return strings.Join(names, ", ") + ": unknown (time limit)"
}
