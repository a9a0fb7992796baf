package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// captureStdout runs a command (runCheck, runRun, runBench) with args and returns its
// exit code and what it wrote on standard output.
func captureStdout(t *testing.T, run func([]string) int, args ...string) (int, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = f
	code := run(args)
	os.Stdout = old
	f.Close()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

// captureCheck runs doppel check with args and returns its exit code and stdout.
func captureCheck(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return captureStdout(t, runCheck, args...)
}

func TestCheckExitCodes(t *testing.T) {
	cases := filepath.Join("..", "..", "testdata", "cases")
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{filepath.Join(cases, "fig1b.edn")}, exitValid, "valid"},
		{[]string{filepath.Join(cases, "fig1d.edn")}, exitInvalid, "G1b"},
		{[]string{"--model", "serializable,strict-serializable", filepath.Join(cases, "realtime.edn")}, exitInvalid, "G-single-realtime"},
		{[]string{"--model", "serializable", filepath.Join(cases, "realtime.edn")}, exitValid, "valid"},
		// Flags after the file count (the default model, strict serializability, finds realtime.edn not valid).
		{[]string{filepath.Join(cases, "realtime.edn"), "--model", "serializable"}, exitValid, "valid"},
		{[]string{"--model", "serializable", "--", filepath.Join(cases, "realtime.edn")}, exitValid, "valid"},
		{[]string{"--model", "snapshot-isolation", filepath.Join(cases, "writeskew.edn")}, exitValid, "valid"},
		{[]string{"--model", "linearizable", filepath.Join(cases, "fig1b.edn")}, exitUsage, ""},
		{[]string{filepath.Join(cases, "no-such-file.edn")}, exitUsage, ""},
		{[]string{}, exitUsage, ""},
		{[]string{"--heuristic", "coin", filepath.Join(cases, "fig1b.edn")}, exitUsage, ""},
	} {
		code, out := captureCheck(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("check %v: exit %d, want %d; output:\n%s", tc.args, code, tc.code, out)
		}
	}
}

func TestCheckBadInputNamesFileAndLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.edn")
	if err := os.WriteFile(path, []byte("{:type :ok, :process 0, :value [[:append 1 2]]}\n{:type :ok, :process 0, :value [[:append 1]]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, _ := os.Pipe()
	old := os.Stderr
	os.Stderr = w
	code := runCheck([]string{path})
	os.Stderr = old
	w.Close()
	msg := make([]byte, 4096)
	n, _ := r.Read(msg)
	if code != exitUsage || !strings.Contains(string(msg[:n]), "bad.edn:2:") {
		t.Fatalf("exit %d, message %q; want exit 3 naming bad.edn line 2", code, msg[:n])
	}
}

func TestCheckJSON(t *testing.T) {
	code, out := captureCheck(t, "--json", "--model", "serializable,snapshot-isolation", filepath.Join("..", "..", "testdata", "cases", "writeskew.edn"))
	if code != exitInvalid {
		t.Fatalf("exit %d", code)
	}
	var res struct {
		Valid        any      `json:"valid"`
		AnomalyTypes []string `json:"anomaly_types"`
		Models       []struct {
			Model     string `json:"model"`
			Valid     any    `json:"valid"`
			Anomalies []int  `json:"anomalies"`
		} `json:"models"`
		Anomalies []struct {
			Type        string           `json:"type"`
			Txns        []map[string]any `json:"txns"`
			Steps       []map[string]any `json:"steps"`
			Explanation string           `json:"explanation"`
		} `json:"anomalies"`
		Stats map[string]any `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if res.Valid != false || len(res.Models) != 2 || res.Models[1].Valid != true {
		t.Fatalf("verdicts: %+v", res)
	}
	if len(res.Anomalies) == 0 || res.Anomalies[0].Type != "G2-item" || len(res.Anomalies[0].Steps) != 2 || res.Anomalies[0].Explanation == "" {
		t.Fatalf("anomalies: %+v", res.Anomalies)
	}
	if res.Stats["transactions"] != float64(3) {
		t.Fatalf("stats: %v", res.Stats)
	}
	// Elle's shapes: numeric process, structured micro-ops, steps by :index with the
	// micro-ops they relate; each model lists the anomalies that count against it.
	tx := res.Anomalies[0].Txns[0]
	if _, ok := tx["process"].(float64); !ok || tx["f"] != "txn" || tx["type"] != "ok" {
		t.Errorf("transaction: %v", tx)
	}
	if v, ok := tx["value"].([]any); !ok || len(v) != 3 || v[2].([]any)[0] != "append" {
		t.Errorf("transaction value: %v", tx["value"])
	}
	st := res.Anomalies[0].Steps[0]
	if st["kind"] != "rw" || st["from_index"] == nil || st["a_mop_index"] == float64(-1) || st["b_mop_index"] != float64(2) {
		t.Errorf("step: %v", st)
	}
	if len(res.Models[0].Anomalies) != 1 || len(res.Models[1].Anomalies) != 0 {
		t.Errorf("per-model anomalies: %+v", res.Models)
	}
}

// captureBoth runs doppel check with args and returns its exit code, stdout and stderr.
func captureBoth(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = out, errf
	code := runCheck(args)
	os.Stdout, os.Stderr = oldOut, oldErr
	out.Close()
	errf.Close()
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	return code, string(o), string(e)
}

// TestCheckLimitsExitUnknown: a limit reached gives exit 2 and a message naming the
// limit, the phase and the conflicts of all solver stages.
func TestCheckLimitsExitUnknown(t *testing.T) {
	hard := filepath.Join("..", "..", "testdata", "limits", "hard-350.edn")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// Narrowing, the replay's repair and the serial-order search each decide hard-350
		// without a conflict: the solver's limits are tested on the whole problem.
		{[]string{"--no-prune", "--no-repair", "--no-serial-search", "--max-conflicts", "1", hard}, []string{"conflict limit (1) was reached while deciding strict-serializable", "after 1 conflicts"}},
		{[]string{"--no-prune", "--no-repair", "--no-serial-search", "--timeout", "200ms", "--model", "serializable,snapshot-isolation", hard}, []string{"time limit (200ms, of which 10ms is kept for counterexamples) was reached while"}},
		{[]string{"--timeout", "1ns", filepath.Join("..", "..", "testdata", "cases", "fig1b.edn")}, []string{"time limit (1ns) was reached while inferring dependencies", "after 0 conflicts"}},
	} {
		code, out, _ := captureBoth(t, tc.args...)
		if code != exitUnknown || !strings.Contains(out, ": unknown\n") {
			t.Errorf("check %v: exit %d, want %d; output:\n%s", tc.args, code, exitUnknown, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("check %v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
	if code, _, _ := captureBoth(t, "--timeout", "-1s", hard); code != exitUsage {
		t.Errorf("negative --timeout: exit %d, want %d", code, exitUsage)
	}
}

// TestCheckExportAlways: --export writes every model's instance even when a replay
// decided the history without the encoding, and says on stderr why when it cannot.
func TestCheckExportAlways(t *testing.T) {
	fig1b := filepath.Join("..", "..", "testdata", "cases", "fig1b.edn")
	prefix := filepath.Join(t.TempDir(), "inst")
	code, _, stderr := captureBoth(t, "--model", "serializable,snapshot-isolation", "--export", prefix, fig1b)
	if code != exitValid {
		t.Fatalf("exit %d", code)
	}
	for _, m := range []string{"serializable", "snapshot-isolation"} {
		for _, ext := range []string{".cnf", ".graph"} {
			b, err := os.ReadFile(prefix + "-" + m + ext)
			if err != nil {
				t.Fatalf("%s%s not written: %v (stderr %q)", m, ext, err, stderr)
			}
			if ext == ".cnf" && !strings.Contains(string(b), "p cnf") {
				t.Errorf("%s.cnf is not DIMACS: %q", m, b)
			}
		}
	}
	if !strings.Contains(stderr, "no open choice") {
		t.Errorf("stderr %q does not say the instance has no open choice", stderr)
	}

	// Decided within strong snapshot isolation's narrowing (the replays get stuck on
	// this snapshot store): the unnarrowed instance is built for the export all the
	// same (nothing was written, nothing said).
	store := filepath.Join("..", "..", "testdata", "search", "si-engine-2000-s1.edn.gz")
	prefix = filepath.Join(t.TempDir(), "narrowed")
	code, _, stderr = captureBoth(t, "--model", "strong-snapshot-isolation", "--shrink", "0s", "--export", prefix, store)
	if code != exitValid {
		t.Fatalf("%s: exit %d (stderr %q)", store, code, stderr)
	}
	for _, ext := range []string{".cnf", ".graph"} {
		if b, err := os.ReadFile(prefix + "-strong-snapshot-isolation" + ext); err != nil || ext == ".cnf" && !strings.Contains(string(b), "p cnf") {
			t.Errorf("%s: strong-snapshot-isolation%s not written: %v (stderr %q)", store, ext, err, stderr)
		}
	}

	prefix = filepath.Join(t.TempDir(), "late")
	code, _, stderr = captureBoth(t, "--timeout", "1ns", "--export", prefix, fig1b)
	if code != exitUnknown || !strings.Contains(stderr, "export: nothing written: the time limit (1ns) was reached") {
		t.Errorf("export past the time limit: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(prefix + "-serializable.cnf"); err == nil {
		t.Errorf("an export past the time limit wrote a file")
	}
}

// checkStderr runs doppel check with args, stdout going to stdout (a file), and returns
// its exit code and what it wrote on standard error.
func checkStderr(t *testing.T, stdout *os.File, args ...string) (int, string) {
	t.Helper()
	errFile, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = stdout, errFile
	code := runCheck(args)
	os.Stdout, os.Stderr = oldOut, oldErr
	errFile.Close()
	b, err := os.ReadFile(errFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

// A history without transactions has no verdict: it is bad input, named by file.
func TestCheckNoTransactionsIsBadInput(t *testing.T) {
	dir := t.TempDir()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	for name, text := range map[string]string{
		"empty.edn":      "",
		"blank.edn":      "  \n\n\t\n",
		"vector.edn":     "[]\n",
		"nemesis.edn":    "{:type :info, :process :nemesis, :f :kill, :value nil}\n{:type :info, :process :nemesis, :f :kill, :value :done}\n",
		"empty.jsonl":    "\n",
		"reads-only.edn": "{:type :invoke, :process 0, :f :read, :value nil}\n{:type :ok, :process 0, :f :read, :value 3}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, msg := checkStderr(t, devNull, path)
		if code != exitUsage || !strings.Contains(msg, name) || !strings.Contains(msg, "no transactions") {
			t.Errorf("%s: exit %d, stderr %q; want exit 3 and a message naming the file", name, code, msg)
		}
	}
}

// A report nobody received is not a verdict: a failed write on stdout exits 3 and says why.
func TestCheckWriteErrorIsReported(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full on this system:", err)
	}
	defer full.Close()
	g1a := filepath.Join("..", "..", "testdata", "cases", "fig1d.edn")
	for _, args := range [][]string{{g1a}, {"--json", g1a}} {
		code, msg := checkStderr(t, full, args...)
		if code != exitUsage || !strings.Contains(msg, "writing the report") || !strings.Contains(msg, "no space left") {
			t.Errorf("check %v > /dev/full: exit %d, stderr %q; want exit 3 with the write error", args, code, msg)
		}
	}
}

// --directory writes the report beside the verdict, which stays the same.
func TestCheckDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	code, out := captureCheck(t, "--directory", dir, "--model", "serializable,snapshot-isolation", filepath.Join("..", "..", "testdata", "cases", "writeskew.edn"))
	if code != exitInvalid || !strings.Contains(out, "G2-item") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	for _, f := range []string{"index.html", "serializable/G2-item.txt", "serializable/G2-item-1.dot"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "snapshot-isolation")); !os.IsNotExist(err) {
		t.Errorf("snapshot-isolation is valid, yet has a directory of anomalies")
	}
}

// The default model is strict-serializable, as Elle's: a real-time violation is found
// without --model; elle-cli's spellings select models, the directory and JSON output.
func TestCheckDefaultModelAndElleCLISpellings(t *testing.T) {
	cases := filepath.Join("..", "..", "testdata", "cases")
	realtime := filepath.Join(cases, "realtime.edn")
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{realtime}, exitInvalid, fmt.Sprintf("  %-34s %s", "strict-serializable", "not valid (G-single-realtime)")},
		{[]string{"-c", "serializable", realtime}, exitValid, fmt.Sprintf("  %-34s %s", "serializable", "valid")},
		{[]string{"--consistency-models", "serializable", realtime}, exitValid, fmt.Sprintf("  %-34s %s", "serializable", "valid")},
		{[]string{"--model", "list-append", "-c", "strict-serializable", realtime}, exitInvalid, "G-single-realtime"},
		{[]string{"-m", "list-append", realtime}, exitInvalid, "G-single-realtime"},
		{[]string{"-c", "serializable", "--model", "list-append", realtime}, exitValid, fmt.Sprintf("  %-34s %s", "serializable", "valid")},
		{[]string{"--model", "rw-register", realtime}, exitUsage, ""},
		{[]string{"--output", "json", "-c", "serializable", realtime}, exitValid, `"valid": true`},
		// Several files: each is reported, the exit code is the worst.
		{[]string{"-c", "serializable", filepath.Join(cases, "fig1b.edn"), filepath.Join(cases, "g1a.edn")}, exitInvalid, "fig1b.edn: valid"},
		{[]string{"-c", "serializable", filepath.Join(cases, "fig1b.edn"), filepath.Join(cases, "no-such-file.edn")}, exitUsage, "fig1b.edn: valid"},
	} {
		code, out := captureCheck(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("check %v: exit %d, want %d; output lacks %q:\n%s", tc.args, code, tc.code, tc.out, out)
		}
	}
}

// A history found not valid gets a counterexample: printed, in the JSON, written as
// counterexample.edn into --directory, and that file is itself not valid.
func TestCheckCounterexample(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	code, out := captureCheck(t, "-d", dir, "-c", "serializable", filepath.Join("..", "..", "testdata", "cases", "writeskew.edn"))
	if code != exitInvalid || !strings.Contains(out, "Counterexample for serializable") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	cx := filepath.Join(dir, "counterexample.edn")
	if code, out := captureCheck(t, "-c", "serializable", "--shrink", "0", cx); code != exitInvalid || !strings.Contains(out, "G2-item") {
		t.Errorf("%s: exit %d, want 1 (not valid, G2-item):\n%s", cx, code, out)
	}
	code, out = captureCheck(t, "--json", "-c", "serializable", filepath.Join("..", "..", "testdata", "cases", "writeskew.edn"))
	var res struct {
		Counterexamples []struct {
			Models       []string `json:"models"`
			Transactions int      `json:"transactions"`
			EDN          string   `json:"edn"`
		} `json:"counterexamples"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitInvalid {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if len(res.Counterexamples) != 1 || res.Counterexamples[0].Models[0] != "serializable" || res.Counterexamples[0].Transactions == 0 ||
		!strings.Contains(res.Counterexamples[0].EDN, ":type :ok") {
		t.Errorf("JSON counterexamples: %+v", res.Counterexamples)
	}
}

// TestCheckWholeHistoryCounterexample: with no time to shrink, each model found not
// valid gets the history itself as its counterexample (written, not valid again), said
// in one line rather than listing every transaction a second time (in the JSON:
// whole_history, without the EDN and the transactions).
func TestCheckWholeHistoryCounterexample(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	file := filepath.Join("..", "..", "testdata", "cases", "writeskew.edn")
	code, out := captureCheck(t, "-d", dir, "-c", "serializable", "--shrink", "1ns", file)
	_, cxText, _ := strings.Cut(out, "Counterexample for serializable: 3 of the 3 transactions")
	if code != exitInvalid || !strings.Contains(cxText, "it is the whole history") || !strings.Contains(cxText, "(the whole history: its transactions and anomalies are the ones above)") ||
		strings.Contains(cxText, "   - T") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	cx := filepath.Join(dir, "counterexample.edn")
	if code, out := captureCheck(t, "-c", "serializable", "--shrink", "0", cx); code != exitInvalid {
		t.Errorf("%s: exit %d, want 1:\n%s", cx, code, out)
	}
	// In the JSON, the input is not repeated either: no EDN, no transactions.
	code, out = captureCheck(t, "--json", "-c", "serializable", "--shrink", "1ns", file)
	// Nor its anomalies: they are the result's, given by their indexes there.
	var res struct {
		Anomalies       []json.RawMessage `json:"anomalies"`
		Counterexamples []struct {
			Transactions   int               `json:"transactions"`
			WholeHistory   bool              `json:"whole_history"`
			EDN            string            `json:"edn"`
			Txns           []json.RawMessage `json:"txns"`
			Anomalies      []json.RawMessage `json:"anomalies"`
			AnomalyIndexes []int             `json:"anomaly_indexes"`
		} `json:"counterexamples"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitInvalid {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	if len(res.Counterexamples) != 1 || !res.Counterexamples[0].WholeHistory || res.Counterexamples[0].Transactions != 3 ||
		res.Counterexamples[0].EDN != "" || len(res.Counterexamples[0].Txns) != 0 || len(res.Counterexamples[0].Anomalies) != 0 {
		t.Errorf("JSON counterexamples: %+v", res.Counterexamples)
	}
	if ix := res.Counterexamples[0].AnomalyIndexes; len(ix) == 0 || len(res.Anomalies) == 0 || slices.ContainsFunc(ix, func(i int) bool { return i < 0 || i >= len(res.Anomalies) }) {
		t.Errorf("anomaly_indexes %v into %d anomalies", ix, len(res.Anomalies))
	}
}

// bigHistory writes a valid history of n transactions, one a process, each appending to
// and reading its own key: more operations than a parse takes between two looks at
// the limits.
func bigHistory(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "{:type :invoke, :f :txn, :value [[:append %d 1] [:r %d nil]], :process %d, :index %d}\n", i, i, i, 2*i)
		fmt.Fprintf(&b, "{:type :ok, :f :txn, :value [[:append %d 1] [:r %d [1]]], :process %d, :index %d}\n", i, i, i, 2*i+1)
	}
	path := filepath.Join(t.TempDir(), "big.edn")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckTimeoutWhileParsing: a limit reached while parsing gives unknown (exit 2)
// naming the parse, the file and the line, in text, in JSON (one object per file, of
// the shape of any unknown result) and in --directory (a page, no anomaly files); the
// other files are checked as usual.
func TestCheckTimeoutWhileParsing(t *testing.T) {
	big := bigHistory(t, 600)
	if code, out, _ := captureBoth(t, "--model", "serializable", big); code != exitValid {
		t.Fatalf("without a limit: exit %d, output:\n%s", code, out)
	}
	code, out, _ := captureBoth(t, "--timeout", "1ns", "--model", "serializable", big)
	for _, want := range []string{big + ": unknown\n", "the time limit (1ns) was reached while parsing " + big + ", at line ", "no transactions checked"} {
		if code != exitUnknown || !strings.Contains(out, want) {
			t.Errorf("exit %d (want %d), output lacks %q:\n%s", code, exitUnknown, want, out)
		}
	}

	writeskew := filepath.Join("..", "..", "testdata", "cases", "writeskew.edn")
	dir := filepath.Join(t.TempDir(), "report")
	code, out, _ = captureBoth(t, "--json", "--directory", dir, "--timeout", "1ns", "--model", "serializable,snapshot-isolation", big, writeskew)
	if code != exitUnknown {
		t.Fatalf("two files: exit %d, want %d", code, exitUnknown)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	type result struct {
		File    string `json:"file"`
		Valid   any    `json:"valid"`
		Message string `json:"message"`
		Models  []struct {
			Valid   any    `json:"valid"`
			Message string `json:"message"`
		} `json:"models"`
		Anomalies []any          `json:"anomalies"`
		Stats     map[string]any `json:"stats"`
	}
	var first, second result
	if err := dec.Decode(&first); err != nil {
		t.Fatalf("not a JSON object per file: %v\n%s", err, out)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatalf("not a JSON object per file: %v\n%s", err, out)
	}
	if first.File != big || first.Valid != "unknown" || len(first.Models) != 2 || first.Anomalies == nil || len(first.Anomalies) != 0 ||
		first.Stats["transactions"] != float64(0) || !strings.Contains(first.Message, "while parsing "+big) {
		t.Errorf("the file stopped while parsing: %+v", first)
	}
	for _, m := range first.Models {
		if m.Valid != "unknown" || !strings.Contains(m.Message, "while parsing "+big+", at line ") {
			t.Errorf("a model of the file stopped while parsing: %+v", m)
		}
	}
	if second.File != writeskew || second.Valid != "unknown" || !strings.Contains(second.Message, "while inferring dependencies") {
		t.Errorf("the small file (parsed before the first look at the limits): %+v", second)
	}
	page, err := os.ReadFile(filepath.Join(dir, "big", "index.html"))
	if err != nil || !strings.Contains(string(page), "not read in full") {
		t.Errorf("the stopped file's page: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "big"))
	if len(entries) != 1 {
		t.Errorf("the stopped file's directory holds %d entries, want index.html alone", len(entries))
	}
	if _, err := os.Stat(filepath.Join(dir, "writeskew", "index.html")); err != nil {
		t.Errorf("the other file's page: %v", err)
	}
}

// Read uncommitted's counterexample: the writer of x's first value goes, a :fail
// synthetic transaction appends it in its place (it can take that position, and a
// transaction that did not commit gives no edge); the file loads back not valid.
func TestCheckCounterexampleReadUncommitted(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "g0.edn")
	if err := os.WriteFile(in, []byte(`{:index 0, :type :ok, :process 3, :f :txn, :value [[:append :x 0]]}
{:index 1, :type :ok, :process 0, :f :txn, :value [[:append :x 1] [:append :y 1]]}
{:index 2, :type :ok, :process 1, :f :txn, :value [[:append :x 2] [:append :y 2]]}
{:index 3, :type :ok, :process 2, :f :txn, :value [[:r :x [0 1 2]] [:r :y [2 1]]]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report")
	code, out := captureCheck(t, "-d", report, "-c", "read-uncommitted,strong-read-uncommitted", in)
	if code != exitInvalid || !strings.Contains(out, "Counterexample for read-uncommitted, strong-read-uncommitted: 4 of the 4 transactions") ||
		!strings.Contains(out, "is synthetic and :fail") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	cx := filepath.Join(report, "counterexample.edn")
	if code, out := captureCheck(t, "-c", "read-uncommitted", "--shrink", "0", cx); code != exitInvalid || !strings.Contains(out, "G0") {
		t.Errorf("%s: exit %d, want 1 (not valid, G0):\n%s", cx, code, out)
	}
}

// TestCheckKeepsTimeForCounterexamples: with two models, one found not valid at once
// (serializable: a lost update) and one the check cannot decide within --timeout
// (strong-session read uncommitted on this lost update among 300 zipf transactions),
// the check keeps a twentieth of the limit for the counterexamples: the lost update's
// three transactions, where the whole history was reported when the check took all
// of it.
func TestCheckKeepsTimeForCounterexamples(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lost.edn")
	if code := runGen([]string{"--sessions", "30", "--txns", "300", "--ops", "4", "--keys", "50", "--key-dist", "zipf", "--dup-keys", "1", "--val-domain", "6",
		"--fail", "0.05", "--inject", "lost-update", "--inject-at", "0.5", "--seed", "3", "--out", file}); code != 0 {
		t.Fatalf("gen: exit %d", code)
	}
	code, out := captureCheck(t, "--model", "serializable,strong-session-read-uncommitted", "--timeout", "4s", file)
	if code != exitInvalid || !strings.Contains(out, "Counterexample for serializable: 3 of the 300 transactions") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	if strings.Contains(out, "strong-session-read-uncommitted    unknown") && !strings.Contains(out, "of which 200ms is kept for counterexamples") {
		t.Errorf("the unknown model does not say that part of the limit was kept:\n%s", out)
	}
}
