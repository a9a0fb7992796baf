// Package report writes the evidence of a check for people: one self-contained HTML
// page (verdict per model, each anomaly's cycle drawn, the per-key traces it refers
// to, a timeline of transactions per process), each model's anomalies as text, one
// step per line, and each cycle as Graphviz DOT. The layout follows Elle's
// --directory output: DIR/index.html, DIR/<model>/<anomaly-type>.txt,
// DIR/<model>/<anomaly-type>-N.dot.
package report

import (
	"bufio"
	"embed"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"doppel/check"
	"doppel/encode"
	"doppel/history"
	"doppel/shrink"
)

//go:embed assets/index.html.tmpl assets/report.css assets/report.js
var assets embed.FS

// Write writes the report of res, the result of checking h, into dir (created if
// missing), with the counterexamples cxs (each report's File is set to where it went:
// DIR/counterexample.edn when there is one, else DIR/<model>/counterexample.edn).
func Write(dir string, h *history.History, res *check.Result, cxs []*shrink.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, cx := range cxs {
		paths := []string{filepath.Join(dir, "counterexample.edn")}
		if len(cxs) > 1 {
			paths = paths[:0]
			for _, m := range cx.Models {
				paths = append(paths, filepath.Join(dir, m, "counterexample.edn"))
			}
		}
		for _, p := range paths {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(cx.EDNText()), 0o644); err != nil {
				return err
			}
		}
		cx.File = paths[0]
	}
	pg := build(h, res)
	for _, cx := range cxs {
		rel, err := filepath.Rel(dir, cx.File)
		if err != nil {
			rel = cx.File
		}
		v := cxView{Models: strings.Join(cx.Models, ", "), File: filepath.ToSlash(rel), Anomalies: cx.Anomalies,
			Size: fmt.Sprintf("%d of the %d transactions", cx.Transactions, cx.Original)}
		if cx.WholeHistory {
			v.Size = fmt.Sprintf("the whole history (%d transactions; no smaller cut was verified)", cx.Original)
		} else {
			v.Notes = append(shrink.SyntheticText(cx.History(), cx.Orig(), cx.Prefixes), shrink.ConfinedText(cx.Prefixes)...)
			if cx.WhyLarge != "" {
				v.Notes = append(v.Notes, "Why so large: "+cx.WhyLarge+".")
			}
		}
		for _, t := range cx.Txns {
			name := fmt.Sprintf("T%d", t.Index)
			where := fmt.Sprintf("line %d, %s", t.Line, t.Status)
			if t.Line == 0 {
				where = "synthetic, " + t.Status // read uncommitted's first one is :fail
			}
			v.Txns = append(v.Txns, txnView{ID: t.ID, Name: name, Where: where, Ops: t.Ops})
		}
		pg.Counterexamples = append(pg.Counterexamples, v)
	}
	for _, m := range pg.Models {
		if len(m.Anomalies) == 0 {
			continue
		}
		if err := writeModelFiles(filepath.Join(dir, m.Name), pg, m); err != nil {
			return err
		}
	}
	pg.Plots = runPlots(dir)
	return writePage(filepath.Join(dir, "index.html"), pg)
}

// runPlotFiles are the plots doppel run writes into its directory before the report
// (workload's latency-raw and rate graphs).
var runPlotFiles = []string{"latency-raw.svg", "rate.svg"}

// runPlots inlines the run plots present in dir, so the page stays self-contained. Only
// files that start as an SVG element doppel wrote are taken (no script, no foreign
// content is expected in them).
func runPlots(dir string) []plotView {
	var out []plotView
	for _, name := range runPlotFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.HasPrefix(string(b), "<svg ") || strings.Contains(string(b), "<script") {
			continue
		}
		out = append(out, plotView{File: name, SVG: template.HTML(b)})
	}
	return out
}

func writePage(path string, pg *page) error {
	tmpl, err := template.New("index.html.tmpl").Funcs(template.FuncMap{
		"css": func(s string) template.CSS { return template.CSS(s) },
		"js":  func(s string) template.JS { return template.JS(s) },
		"inc": func(i int) int { return i + 1 },
	}).ParseFS(assets, "assets/index.html.tmpl")
	if err != nil {
		return err
	}
	css, err := assets.ReadFile("assets/report.css")
	if err != nil {
		return err
	}
	js, err := assets.ReadFile("assets/report.js")
	if err != nil {
		return err
	}
	pg.CSS, pg.JS = string(css), string(js)
	return writeFile(path, func(w *bufio.Writer) error { return tmpl.Execute(w, pg) })
}

// writeModelFiles writes <model>/<type>.txt (every anomaly of that type counted for
// the model, one step per line) and <model>/<type>-N.dot (each one's cycle).
func writeModelFiles(dir string, pg *page, m modelView) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	byType := map[string][]*anomalyView{}
	var types []string
	for _, i := range m.Anomalies {
		a := &pg.Anomalies[i]
		if byType[a.Type] == nil {
			types = append(types, a.Type)
		}
		byType[a.Type] = append(byType[a.Type], a)
	}
	for _, typ := range types {
		as := byType[typ]
		name := fileName(typ)
		err := writeFile(filepath.Join(dir, name+".txt"), func(w *bufio.Writer) error {
			for i, a := range as {
				if i > 0 {
					w.WriteString("\n")
				}
				writeText(w, a)
			}
			return nil
		})
		if err != nil {
			return err
		}
		n := 0
		for _, a := range as {
			if len(a.Steps) == 0 {
				continue
			}
			n++
			err := writeFile(filepath.Join(dir, fmt.Sprintf("%s-%d.dot", name, n)), func(w *bufio.Writer) error {
				writeDOT(w, fmt.Sprintf("%s-%d", typ, n), a)
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// writeText prints one anomaly: a heading, each step of its cycle on its own line (or
// the explanation when it has no cycle), then its transactions, one per line.
func writeText(w *bufio.Writer, a *anomalyView) {
	fmt.Fprintf(w, "# %s\n", a.Title)
	if len(a.Steps) > 0 {
		for _, s := range a.Steps {
			fmt.Fprintln(w, s.Why)
		}
		if a.Cases {
			fmt.Fprintln(w, "# this cycle is the first case of a proof by cases (the attributions it holds in); all the cases:")
			fmt.Fprintln(w, a.Explanation)
		}
	} else {
		fmt.Fprintln(w, a.Explanation)
	}
	fmt.Fprintln(w, "# transactions")
	for _, t := range a.Txns {
		fmt.Fprintf(w, "%s (%s): %s\n", t.Name, t.Where, t.Ops)
	}
}

// writeDOT prints a's cycle as a Graphviz digraph: nodes are transactions (labelled
// with their operations), edges are labelled with their kind and key.
func writeDOT(w *bufio.Writer, name string, a *anomalyView) {
	fmt.Fprintf(w, "digraph %s {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n", dotQuote(name))
	seen := map[string]bool{}
	for _, n := range a.Cycle.Nodes {
		if seen[n.Name] {
			continue
		}
		seen[n.Name] = true
		fmt.Fprintf(w, "  %s [label=%s];\n", dotQuote(n.Name), dotQuote(n.Name+"\n"+n.Ops))
	}
	for _, s := range a.Steps {
		label := s.Kind
		if s.Key != "" {
			label += " " + s.Key
		}
		fmt.Fprintf(w, "  %s -> %s [label=%s, tooltip=%s];\n", dotQuote(s.From), dotQuote(s.To), dotQuote(label), dotQuote(s.Why))
	}
	fmt.Fprintln(w, "}")
}

func dotQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return `"` + s + `"`
}

// fileName makes an anomaly type safe as a file name (types are already, but never
// trust a name to be a path).
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, s)
}

func writeFile(path string, fill func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := fill(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// txnName is how the report names transaction t, as the explanations do.
func txnName(h *history.History, t int) string { return encode.TxnName(h, int32(t)) }
