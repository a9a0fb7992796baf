package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"doppel/check"
	"doppel/history"
	"doppel/internal/brute"
	"doppel/shrink"
)

var allModels = []string{"serializable", "strong-session-serializable", "strict-serializable", "snapshot-isolation"}

// checked parses a case of testdata/cases and checks it under every model.
func checked(t *testing.T, name string) (*history.History, check.Result) {
	t.Helper()
	h, err := history.ParseFile(filepath.Join("..", "testdata", "cases", name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(h, check.Options{Models: allModels})
	if err != nil {
		t.Fatal(err)
	}
	return h, res
}

func TestWriteFiles(t *testing.T) {
	h, res := checked(t, "writeskew.edn")
	dir := t.TempDir()
	cxs, failures := shrink.Counterexamples(h, &res, time.Time{})
	if len(cxs) != 1 || len(failures) > 0 {
		t.Fatalf("counterexamples %v, failures %v", cxs, failures)
	}
	if err := Write(dir, h, &res, cxs); err != nil {
		t.Fatal(err)
	}
	// One counterexample serves the three models: DIR/counterexample.edn, on the page.
	edn, err := os.ReadFile(filepath.Join(dir, "counterexample.edn"))
	if err != nil || cxs[0].File != filepath.Join(dir, "counterexample.edn") || !bytes.Equal(edn, []byte(cxs[0].EDNText())) {
		t.Errorf("counterexample.edn: %v, file %q", err, cxs[0].File)
	}
	if page, _ := os.ReadFile(filepath.Join(dir, "index.html")); !bytes.Contains(page, []byte(`<a href="counterexample.edn">`)) {
		t.Errorf("index.html does not link the counterexample")
	}
	// Write skew is G2-item: forbidden by the serializable family, allowed by SI.
	for _, m := range allModels[:3] {
		txt, err := os.ReadFile(filepath.Join(dir, m, "G2-item.txt"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(txt)), "\n")
		steps := 0
		for _, l := range lines {
			if regexp.MustCompile(`^T\d+ < T\d+ because `).MatchString(l) {
				steps++
			}
		}
		if steps != 2 {
			t.Errorf("%s/G2-item.txt has %d step lines, want 2 (one per edge of the cycle):\n%s", m, steps, txt)
		}
		dot, err := os.ReadFile(filepath.Join(dir, m, "G2-item-1.dot"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(dot), "digraph ") || strings.Count(string(dot), "->") != 2 || strings.Count(string(dot), `label="rw `) != 2 {
			t.Errorf("%s/G2-item-1.dot is not the two rw edges of the cycle:\n%s", m, dot)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "snapshot-isolation")); !os.IsNotExist(err) {
		t.Errorf("snapshot-isolation allows write skew, yet has anomaly files (%v)", err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<svg class="cycle"`, `<svg class="timeline"`, "G2-item", "snapshot-isolation", `<script>`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	// Self-contained: nothing fetched from anywhere.
	if m := regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).Find(page); m != nil {
		t.Errorf("index.html refers to the network: %s", m)
	}
}

// A key that no attribution explains gets a per-key view naming who appended what.
func TestKeyViewOfDuplicates(t *testing.T) {
	h, err := brute.Parse("T1 p0 ok [a x 1] [a x 2]\nT2 p1 ok [r x [1 2 1]]")
	if err != nil {
		t.Fatal(err)
	}
	res, err := check.Check(h, check.Options{Models: allModels})
	if err != nil {
		t.Fatal(err)
	}
	pg := build(h, &res)
	if len(pg.Anomalies) != 1 || pg.Anomalies[0].Type != "duplicate-elements" || len(pg.Anomalies[0].Keys) != 1 {
		t.Fatalf("anomalies: %+v", pg.Anomalies)
	}
	k := pg.Anomalies[0].Keys[0]
	var by []string
	for _, c := range k.Cells {
		by = append(by, c.Writers)
	}
	if got := strings.Join(by, "|"); got != "T0?|T0?|T0?" || k.Cells[2].ReadEnd != "T1" {
		t.Errorf("cells of x: writers %q, read end %q", got, k.Cells[2].ReadEnd)
	}
	for _, m := range pg.Models {
		if len(m.Anomalies) != 1 {
			t.Errorf("%s lists %d anomalies, want the duplicate-elements one", m.Name, len(m.Anomalies))
		}
	}
}

// TestPageInChromium loads the page from file:// in a real headless Chromium: it must
// run its script to the end without a console message, and show the cycle. The
// screenshot is kept (the path is logged). Under CI (DOPPEL_CI=1) a missing Chromium
// fails the test.
func TestPageInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("DOPPEL_CI") == "1" {
			t.Fatal("chromium is not installed (.ci/run installs it): the report page cannot be tested")
		}
		t.Skip("chromium not installed; apt-get install -y chromium")
	}
	artifacts := os.Getenv("DOPPEL_ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join(os.TempDir(), "doppel-report-artifacts")
	}
	for _, name := range []string{"writeskew.edn", "lostupdatedup.edn", "realtime.edn"} {
		h, res := checked(t, name)
		dir := filepath.Join(artifacts, strings.TrimSuffix(name, ".edn"))
		os.RemoveAll(dir)
		if err := Write(dir, h, &res, nil); err != nil {
			t.Fatal(err)
		}
		abs, err := filepath.Abs(filepath.Join(dir, "index.html"))
		if err != nil {
			t.Fatal(err)
		}
		url := "file://" + abs
		run := func(extra ...string) (stdout, stderr string) {
			args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
				"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
				"--enable-logging=stderr", "--v=0", "--window-size=1200,1600"}, extra...)
			cmd := exec.Command(chromium, append(args, url)...)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			if err := cmd.Run(); err != nil {
				t.Fatalf("chromium %v: %v\n%s", extra, err, e.String())
			}
			return o.String(), e.String()
		}
		dom, logs := run("--dump-dom")
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, ":CONSOLE") {
				t.Errorf("%s: console message: %s", name, l)
			}
		}
		if !strings.Contains(dom, `data-ready="1"`) {
			t.Errorf("%s: the page's script did not run to the end", name)
		}
		if res.Valid == check.Invalid {
			if !regexp.MustCompile(`<svg class="cycle"[^>]*>.*<path d="M[^"]+Q`).MatchString(dom) && name != "lostupdatedup.edn" {
				t.Errorf("%s: no cycle drawn in the loaded page", name)
			}
			if !strings.Contains(dom, `class="cell`) && name == "lostupdatedup.edn" {
				t.Errorf("%s: no per-key view in the loaded page", name)
			}
		}
		if !strings.Contains(dom, `class="txn bar`) {
			t.Errorf("%s: no timeline bars in the loaded page", name)
		}
		if name != "writeskew.edn" {
			continue // one screenshot is enough to look at; each costs a browser start
		}
		shot := filepath.Join(dir, "screenshot.png")
		run("--screenshot=" + shot)
		png, err := os.ReadFile(shot)
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("%s: no screenshot: %v", name, err)
		}
		t.Logf("%s: report and screenshot in %s", name, dir)
	}
}

// A run's plots in the directory are inlined into the page (self-contained); a file that
// is not one of doppel's SVGs is left out.
func TestRunPlotsInlined(t *testing.T) {
	h, res := checked(t, "writeskew.edn")
	dir := t.TempDir()
	plot := `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>latency-marker</text></svg>`
	if err := os.WriteFile(filepath.Join(dir, "latency-raw.svg"), []byte(plot), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rate.svg"), []byte(`<svg x="1"><script>alert(1)</script></svg>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, h, &res, nil); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("<text>latency-marker</text>")) || !bytes.Contains(page, []byte(`<a href="latency-raw.svg">`)) {
		t.Errorf("the latency plot is not inlined and linked")
	}
	if bytes.Contains(page, []byte("alert(1)")) {
		t.Errorf("a plot with a script was inlined")
	}
}

// TestLostUpdateFiles: a lost update is named lost-update on the page and in its own
// file, with its key and both transactions.
func TestLostUpdateFiles(t *testing.T) {
	h, res := checked(t, "lostupdate.edn")
	dir := t.TempDir()
	if err := Write(dir, h, &res, nil); err != nil {
		t.Fatal(err)
	}
	txt, err := os.ReadFile(filepath.Join(dir, "serializable", "lost-update.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(txt), "T1, T2 all read key :x = [] and then appended to it") {
		t.Errorf("lost-update.txt:\n%s", txt)
	}
	if page, _ := os.ReadFile(filepath.Join(dir, "index.html")); !bytes.Contains(page, []byte("lost-update")) {
		t.Errorf("index.html does not name the lost update")
	}
}
