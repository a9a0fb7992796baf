package history

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const (
	hugeSCC     = "../../shared/histories/elle-huge-scc.edn"
	siNotSerial = "../../shared/histories/elle-si-without-g-single.edn"
)

func parseString(t *testing.T, json bool, text string) *History {
	t.Helper()
	var h *History
	var err error
	if json {
		h, err = ParseJSON(strings.NewReader(text), "h.json")
	} else {
		h, err = ParseEDN(strings.NewReader(text), "h.edn")
	}
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	if err := h.Validate(); err != nil {
		t.Fatalf("parse %q: invalid result: %v", text, err)
	}
	return h
}

// txnSummary prints a transaction compactly for comparisons.
func txnSummary(h *History, i int) string {
	tx := &h.Txns[i]
	proc := "-"
	if tx.Process >= 0 {
		proc = h.Processes[tx.Process]
	}
	var b strings.Builder
	b.WriteString(tx.Status.String())
	b.WriteString(" p=" + proc)
	b.WriteString(" inv=" + itoa(int64(tx.Invoke)) + " cmp=" + itoa(int64(tx.Complete)))
	b.WriteString(" idx=" + itoa(tx.Index) + " line=" + itoa(int64(tx.Line)) + " ")
	b.WriteString(h.FormatOps(i))
	return b.String()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func summaries(h *History) []string {
	var out []string
	for i := range h.Txns {
		out = append(out, txnSummary(h, i))
	}
	return out
}

func checkSummaries(t *testing.T, h *History, want []string) {
	t.Helper()
	got := summaries(h)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("transactions:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// needShared skips a test when the Jepsen histories of ../shared/histories (Elle's,
// not ours to copy into the repository) are not beside the project; CI has them.
func needShared(t *testing.T) {
	t.Helper()
	for _, f := range []string{hugeSCC, siNotSerial} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("the shared Jepsen histories are not beside the project: %v", err)
		}
	}
}

func TestRealHistories(t *testing.T) {
	needShared(t)
	h, err := ParseFile(hugeSCC)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	count := map[Status]int{}
	for _, tx := range h.Txns {
		count[tx.Status]++
	}
	// grep counts: 10254 :txn invokes, 3036 :ok, 7070 :fail, 148 :info; 20602 lines.
	if len(h.Txns) != 10254 || count[OK] != 3036 || count[Fail] != 7070 || count[Info] != 148 || h.Events != 20602 {
		t.Errorf("got %d txns %v, %d events", len(h.Txns), count, h.Events)
	}
	if got, want := txnSummary(h, 0), "ok p=10 inv=0 cmp=2 idx=2 line=3 [[:append 11 1] [:r 11 [1]] [:r 11 [1]]]"; got != want {
		t.Errorf("first txn: got %s, want %s", got, want)
	}
	if got, want := txnSummary(h, 3), "ok p=20 inv=5 cmp=10 idx=10 line=11 [[:append 10 1] [:r 8 []] [:append 10 2]]"; got != want {
		t.Errorf("fourth txn: got %s, want %s", got, want)
	}
	// Line 1407: {:type :fail, ... :value [[:append 12 60]], :process 26, ... :index 1404}
	found := false
	for i := range h.Txns {
		if h.Txns[i].Index == 1404 {
			found = true
			if s := txnSummary(h, i); !strings.HasPrefix(s, "fail p=26 ") || !strings.HasSuffix(s, "[[:append 12 60]]") {
				t.Errorf("txn with index 1404: %s", s)
			}
		}
	}
	if !found {
		t.Errorf("no txn with index 1404")
	}

	h, err = ParseFile(siNotSerial)
	if err != nil {
		t.Fatal(err)
	}
	checkSummaries(t, h, []string{
		"ok p=2 inv=0 cmp=1 idx=11 line=2 [[:append 9 2]]",
		"ok p=4 inv=2 cmp=3 idx=21 line=4 [[:append 8 1] [:r 9 []]]",
		"ok p=7 inv=4 cmp=5 idx=31 line=6 [[:r 6 []] [:r 8 []] [:append 9 5]]",
		"ok p=9 inv=6 cmp=7 idx=41 line=8 [[:append 6 2] [:r 9 [2]]]",
	})
}

func TestPairing(t *testing.T) {
	cases := []struct {
		name string
		edn  string
		want []string
	}{
		{"only completions", `
{:type :ok, :process 0, :f :txn, :value [[:append 1 2]]}
{:type :ok, :process 1, :f :txn, :value [[:r 1 [2]]]}`,
			[]string{"ok p=0 inv=-1 cmp=0 idx=-1 line=2 [[:append 1 2]]", "ok p=1 inv=-1 cmp=1 idx=-1 line=3 [[:r 1 [2]]]"}},
		{"completion order, interleaved", `
{:type :invoke, :process 0, :value [[:append 1 1]]}
{:type :invoke, :process 1, :value [[:append 1 2]]}
{:type :ok, :process 1, :value [[:append 1 2]]}
{:type :fail, :process 0, :value [[:append 1 1]]}`,
			[]string{"ok p=1 inv=1 cmp=2 idx=-1 line=4 [[:append 1 2]]", "fail p=0 inv=0 cmp=3 idx=-1 line=5 [[:append 1 1]]"}},
		{"no process pairs in file order", `
{:type :invoke, :value [[:append 1 1]]}
{:type :invoke, :value [[:append 2 1]]}
{:type :ok, :value [[:append 1 1]]}
{:type :ok, :value [[:append 2 1]]}
{:type :ok, :value [[:r 2 [1]]]}`,
			[]string{"ok p=- inv=0 cmp=2 idx=-1 line=4 [[:append 1 1]]", "ok p=- inv=1 cmp=3 idx=-1 line=5 [[:append 2 1]]", "ok p=- inv=-1 cmp=4 idx=-1 line=6 [[:r 2 [1]]]"}},
		{"latest open invoke of the process", `
{:type :invoke, :process 0, :value [[:append 1 1]]}
{:type :invoke, :process 0, :value [[:append 2 1]]}
{:type :ok, :process 0, :value [[:append 2 1]]}`,
			[]string{"ok p=0 inv=1 cmp=2 idx=-1 line=4 [[:append 2 1]]", "info p=0 inv=0 cmp=-1 idx=-1 line=2 [[:append 1 1]]"}},
		{"info without value takes the invoke's appends, reads unknown", `
{:type :invoke, :process 3, :f :txn, :value [[:append 1 2] [:r 3 nil]], :index 7}
{:type :info, :process 3, :f :txn, :index 8}`,
			[]string{"info p=3 inv=0 cmp=-1 idx=8 line=3 [[:append 1 2] [:r 3 nil]]"}},
		{"info with value takes its own appends, reads unknown", `
{:type :invoke, :process 3, :f :txn, :value [[:append 1 2] [:r 3 nil]]}
{:type :info, :process 3, :f :txn, :value [[:append 1 5] [:r 3 [1]]]}`,
			[]string{"info p=3 inv=0 cmp=-1 idx=-1 line=3 [[:append 1 5] [:r 3 nil]]"}},
		{"never completed, in invoke order, after completed ones", `
{:type :invoke, :process 1, :value [[:append 1 1]], :index 0}
{:type :invoke, :process 0, :value [[:append 2 1]], :index 1}
{:type :invoke, :process 2, :value [[:r 2 nil]], :index 2}
{:type :ok, :process 2, :value [[:r 2 []]], :index 3}`,
			[]string{"ok p=2 inv=2 cmp=3 idx=3 line=5 [[:r 2 []]]", "info p=1 inv=0 cmp=-1 idx=0 line=2 [[:append 1 1]]", "info p=0 inv=1 cmp=-1 idx=1 line=3 [[:append 2 1]]"}},
		{"nemesis skipped", `
{:type :info, :f :start-partition, :process :nemesis, :value nil}
{:type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}
{:type :info, :f :start-partition, :process :nemesis, :value [:isolated {"n1" #{"n2" "n3"}}]}
{:type :ok, :process 0, :f :txn, :value [[:r 1 nil]]}`,
			[]string{"ok p=0 inv=0 cmp=1 idx=-1 line=5 [[:r 1 []]]"}},
		{"completion without value: the invoke's ops, reads unknown", `
{:type :invoke, :process 0, :value [[:r 1 nil] [:append 1 3]]}
{:type :fail, :process 0}`,
			[]string{"fail p=0 inv=0 cmp=1 idx=-1 line=3 [[:r 1 nil] [:append 1 3]]"}},
		{"fail reads are not kept", `
{:type :fail, :process 0, :value [[:r 1 [4 5]]]}`,
			[]string{"fail p=0 inv=-1 cmp=0 idx=-1 line=2 [[:r 1 nil]]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := parseString(t, false, c.edn)
			checkSummaries(t, h, c.want)
		})
	}
	h := parseString(t, false, casesNemesis)
	if h.Events != 4 || len(h.Processes) != 1 {
		t.Errorf("nemesis: events %d, processes %v", h.Events, h.Processes)
	}
}

const casesNemesis = `
{:type :info, :f :start-partition, :process :nemesis, :value nil}
{:type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}
{:type :info, :f :start-partition, :process :nemesis, :value [:isolated {"n1" #{"n2" "n3"}}]}
{:type :ok, :process 0, :f :txn, :value [[:r 1 nil]]}`

func TestKnownReads(t *testing.T) {
	h := parseString(t, false, `{:type :ok, :process 0, :value [[:r 1 nil] [:r 1 []] [:r 1 [3 3 4]]]}`)
	ops := h.TxnOps(0)
	// An :ok read of nil saw the initial state, the empty list, as Elle reads it.
	if !ops[0].Known || !ops[1].Known || !ops[2].Known {
		t.Fatalf("known: %v", ops)
	}
	if l := h.ReadList(&ops[0]); len(l) != 0 {
		t.Errorf("nil read: %v", l)
	}
	if l := h.ReadList(&ops[1]); len(l) != 0 {
		t.Errorf("empty read: %v", l)
	}
	l := h.ReadList(&ops[2])
	if len(l) != 3 || l[0] != l[1] || l[0] == l[2] || h.Values[l[0]] != "3" || h.Values[l[2]] != "4" {
		t.Errorf("read [3 3 4]: %v, values %v", l, h.Values)
	}
}

func TestSyntaxVariants(t *testing.T) {
	want := []string{
		`ok p=0 inv=0 cmp=1 idx=1 line=2 [[:append :x "s"] [:r :x [1 "s" :k]]]`,
	}
	edn := []string{
		"{:index 0 :type :invoke :process 0 :f :txn :value [[:append :x \"s\"] [:r :x nil]]}\n{:index 1 :type :ok :process 0 :f :txn :value [[:append :x \"s\"] [:r :x [1 \"s\" :k]]]}",
		"[{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x \"s\"] [:r :x nil]]}\n{:index 1, :type :ok, :process 0, :f :txn, :value [[:append :x \"s\"] [:r :x [1 \"s\" :k]]]}]",
		"({:index 0, :type :invoke, :process 0, :f :txn, :value ([:append :x \"s\"] [:r :x nil])}\n{:index 1, :type :ok, :process 0, :f :txn, :value [(:append :x \"s\") [:r :x (1 \"s\" :k)]]})",
		"#jepsen.history.Op{:index 0, :type :invoke, :process 0, :f :txn, :value [[:append :x \"s\"] [:r :x nil]], :extra {:a [1 #{2}] :b #inst \"2020\"}} ; comment\n" +
			"#jepsen.history.Op{:index 1, :time 5, :type :ok, :process 0, #_ :ignored #_ 3 :f :txn, :value [[:append :x \"s\"] [:r :x [1 \"s\" :k]]], :error nil}",
	}
	for _, text := range edn {
		checkSummaries(t, parseString(t, false, text), want)
	}
	// Multi-line maps: Line is the line where the completion's map starts.
	h := parseString(t, false, "{:type :invoke,\n :process 0,\n :value [[:append 1 2]]}\n\n{:type :ok,\n :process 0,\n :value [[:append 1 2]]}\n")
	checkSummaries(t, h, []string{"ok p=0 inv=0 cmp=1 idx=-1 line=5 [[:append 1 2]]"})

	json := []string{
		`{"index":0,"type":"invoke","process":0,"f":"txn","value":[["append",":x","s"],["r",":x",null]]}` + "\n" +
			`{"index":1,"type":"ok","process":0,"f":"txn","value":[["append",":x","s"],["r",":x",[1,"s",":k"]]]}`,
		`[{"index":0,"type":":invoke","process":0,"f":":txn","value":[[":append",":x","s"],[":r",":x",null]]},` + "\n" +
			` {"index":1,"type":":ok","process":0,"f":":txn","value":[[":append",":x","s"],[":r",":x",[1,"s",":k"]]]}]`,
	}
	for _, text := range json {
		checkSummaries(t, parseString(t, true, text), want)
		h, err := Parse(strings.NewReader(text), "sniffed")
		if err != nil {
			t.Fatal(err)
		}
		checkSummaries(t, h, want)
	}
	for _, text := range edn {
		h, err := Parse(strings.NewReader(text), "sniffed")
		if err != nil {
			t.Fatal(err)
		}
		checkSummaries(t, h, want)
	}
	// Escapes print canonically in both formats.
	he := parseString(t, false, `{:type :ok, :value [[:append "a\"b\u0041\n" "\u00e9"]]}`)
	hj := parseString(t, true, `{"type":"ok","value":[["append","a\"b\u0041\n","\u00e9"]]}`)
	if he.Keys[0] != `"a\"bA\n"` || hj.Keys[0] != he.Keys[0] || he.Values[0] != `"é"` || hj.Values[0] != he.Values[0] {
		t.Errorf("escapes: EDN %q %q, JSON %q %q", he.Keys, he.Values, hj.Keys, hj.Values)
	}
	// Key and value spaces are separate; integers and strings are distinct.
	h = parseString(t, false, `{:type :ok, :value [[:append 1 "1"] [:append "1" 1]]}`)
	if !reflect.DeepEqual(h.Keys, []string{"1", `"1"`}) || !reflect.DeepEqual(h.Values, []string{`"1"`, "1"}) {
		t.Errorf("interning: keys %q values %q", h.Keys, h.Values)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		json bool
		text string
		want string
	}{
		{false, "{:type :ok, :value [[:append 1 2] }", `h.edn:1:35: expected a value or "]" (to close the one opened at 1:20), found "}"`},
		{false, "{:type :ok, :value [[:append 1 2]]}\n{:type :ok, :value [[:append 1 2] 7]}", `h.edn:2:35: expected a micro-op like [:append k v] or [:r k list], found 7`},
		{false, "{:type :ok, :value [[:append 1]]}", `h.edn:1:21: append without a value`},
		{false, "{:type :ok, :value [[:append 1 nil]]}", `h.edn:1:32: append without a value`},
		{false, "{:type :ok, :value [[:r 1 2 3]]}", `h.edn:1:21: expected 3 elements in [:r k list], found 4`},
		{false, "{:type :ok, :value [[:r 1 2]]}", `h.edn:1:27: expected the value of a read to be a list or nil, found 2`},
		{false, "{:type :ok, :value [[:w 1 2]]}", `h.edn:1:22: expected :append or :r to start a micro-op, found :w`},
		{false, "{:type :done, :value []}", `h.edn:1:8: unknown :type :done`},
		{false, "{:process 1, :value []}", `h.edn:1:1: operation has no :type`},
		{false, "{:type :ok, :value 3}", `h.edn:1:20: expected a :value like`},
		{false, "{:type :ok, :value [[:r [1] nil]]}", `h.edn:1:25: expected a key`},
		{false, "{:type :ok :value}", `h.edn:1:1: map has a key without a value`},
		{false, "{:type :ok, :value [[:r 1 \"abc]]}", `h.edn:1:27: string never closed`},
		{false, "[{:type :ok, :value []}", `h.edn:1:24: expected "]" (to close the one opened at 1:1), found end of file`},
		{false, "[{:type :ok, :value []}] x", `h.edn:1:26: expected the end of file after the collection of operations, found "x"`},
		{false, ":type :ok", `h.edn:1:1: expected an operation map like {:type :invoke`},
		{false, "{:type :invoke, :process 0, :value [[:append 1 2]]}\n\n{:type :ok, :process 0, :value [[:append 1 2] [:r 1 nil]]}", `h.edn:3:1: completion has 2 micro-ops but its invoke at line 1 has 1`},
		{false, "{:type :invoke, :process 0, :value [[:append 1 2]]}\n{:type :ok, :process 0, :value [[:r 1 nil]]}", `h.edn:2:33: micro-op 1 is a read here but an append in its invoke at line 1`},
		{false, "{:type :invoke, :process 0, :value [[:append 1 2]]}\n{:type :ok, :process 0, :value [[:append 3 2]]}", `h.edn:2:33: micro-op 1 has key 3 here but key 1 in its invoke at line 1`},
		{false, "{:type :ok, :index :x, :value []}", `h.edn:1:20: expected an integer :index, found :x`},
		{false, "{:type :ok, :value [[:r 1 \"a\\qb\"]]}", `h.edn:1:30: expected an escape`},
		{true, `{"type":"ok","value":[["append",1,2]]}` + "\n" + `{"type":"ok","value":[["append",1,2]}`, `h.json:2:37: expected a value or "]" (to close the array opened at 2:22), found "}"`},
		{true, `{"type":"ok","value":[["append",1,2] ] `, `h.json:1:40: expected a string key or "}"`},
		{true, `{"type" "ok"}`, `h.json:1:9: expected ":" after an object key, found "\""`},
		{true, `{"type":"ok","value":[["append",1,tru]]}`, `h.json:1:35: expected a JSON value, found "tru"`},
		{true, `{"type":"ok","value":[["append",1,01x]]}`, `h.json:1:35: expected a number, found "01x"`},
		{true, `{"type":"ok","value":[["r",1,{"a":1}]]}`, `h.json:1:30: expected the value of a read to be a list or nil, found a map {...}`},
		{true, "{\"type\":\"ok\",\"value\":[[\"r\",1,\"a\nb\"]]}", `h.json:1:32: control character '\n' in a string`},
	}
	for _, c := range cases {
		var err error
		if c.json {
			_, err = ParseJSON(strings.NewReader(c.text), "h.json")
		} else {
			_, err = ParseEDN(strings.NewReader(c.text), "h.edn")
		}
		if err == nil {
			t.Errorf("%q: no error, want %s", c.text, c.want)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v is not a *ParseError", c.text, err)
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q:\n got %s\nwant %s", c.text, err, c.want)
		}
	}
}

// equalHistories compares everything but Source, Events and Txn.Line.
func equalHistories(t *testing.T, a, b *History) {
	t.Helper()
	strip := func(h *History) History {
		c := *h
		c.Source, c.Events = "", 0
		c.Txns = append([]Txn(nil), h.Txns...)
		for i := range c.Txns {
			c.Txns[i].Line = 0
		}
		// Reserved capacity may make empty slices non-nil.
		if len(c.Txns) == 0 {
			c.Txns = nil
		}
		if len(c.Ops) == 0 {
			c.Ops = nil
		}
		if len(c.ReadValues) == 0 {
			c.ReadValues = nil
		}
		return c
	}
	sa, sb := strip(a), strip(b)
	if reflect.DeepEqual(sa, sb) {
		return
	}
	if len(sa.Txns) != len(sb.Txns) {
		t.Fatalf("%d txns vs %d", len(sa.Txns), len(sb.Txns))
	}
	for i := range sa.Txns {
		if sa.Txns[i] != sb.Txns[i] || a.FormatOps(i) != b.FormatOps(i) {
			t.Fatalf("txn %d differs: %s vs %s", i, txnSummary(a, i), txnSummary(b, i))
		}
	}
	t.Fatalf("histories differ: keys %q vs %q, values %q vs %q, processes %q vs %q", sa.Keys, sb.Keys, sa.Values, sb.Values, sa.Processes, sb.Processes)
}

const mixedHistory = `
{:type :invoke, :process 0, :f :txn, :value [[:append :x "s"] [:r :x nil]], :index 0}
{:type :invoke, :process :p1, :f :txn, :value [[:append 2 1]], :index 1}
{:type :info, :f :kill, :process :nemesis, :value nil}
{:type :invoke, :process "p2", :f :txn, :value [[:append 2 2]], :index 2}
{:type :info, :process :p1, :f :txn, :value [[:append 2 1]], :index 3}
{:type :ok, :process 0, :f :txn, :value [[:append :x "s"] [:r :x [1 "s" :k]]], :index 4}
{:type :invoke, :f :txn, :value [[:r 2 nil]], :index 5}
{:type :invoke, :process 0, :f :txn, :value [[:append 2 3] [:r 3 nil]], :index 6}
{:type :ok, :f :txn, :value [[:r 2 [1 2 2]]], :index 7}
{:type :fail, :process 9, :f :txn, :value [[:append 3 1]], :index 8}
{:type :invoke, :process 5, :f :txn, :value [[:append 2 4]], :index 9}
{:type :info, :process 0, :f :txn, :index 10}
{:type :invoke, :process 6, :f :txn, :value [[:append 2 5]], :index 11}
{:type :info, :process 6, :f :txn, :value [[:append 2 5]], :index 12}
`

func TestRoundTrip(t *testing.T) {
	inputs := map[string]*History{}
	files := []string{hugeSCC, siNotSerial}
	if _, err := os.Stat(hugeSCC); err != nil {
		files = nil // the hand-written inputs below still round-trip
		t.Logf("without the shared Jepsen histories: %v", err)
	}
	for _, f := range files {
		h, err := ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = h
	}
	inputs["mixed"] = parseString(t, false, mixedHistory)
	// Never completed, same process: must stay in invoke order, not be re-paired.
	inputs["stacked"] = parseString(t, false, "{:type :invoke :process 0 :index 4}{:type :invoke :process 0 :index 5}")
	// A trailing :info completion pairs with the latest invoke; the other never completes.
	inputs["trailing info"] = parseString(t, false, "{:type :invoke :process 0 :value [[:append 1 1]]}\n"+
		"{:type :invoke :process 0 :value [[:append 1 2]]}\n{:type :info :process 0 :index 7}\n{:type :info :value [[:append 2 :v]]}")
	for name, h := range inputs {
		var e, j, ej bytes.Buffer
		if err := WriteHistoryEDN(&e, h); err != nil {
			t.Fatal(err)
		}
		he, err := ParseEDN(bytes.NewReader(e.Bytes()), name+".edn")
		if err != nil {
			t.Fatalf("%s: reparse EDN: %v", name, err)
		}
		equalHistories(t, h, he)
		if err := WriteHistoryJSON(&j, he); err != nil {
			t.Fatal(err)
		}
		hj, err := Parse(bytes.NewReader(j.Bytes()), name+".json")
		if err != nil {
			t.Fatalf("%s: reparse JSON: %v", name, err)
		}
		equalHistories(t, h, hj)
		// Writing again gives the same text.
		if err := WriteHistoryEDN(&ej, hj); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Bytes(), ej.Bytes()) {
			t.Errorf("%s: EDN -> JSON -> EDN changed the text", name)
		}
	}
}

func TestFromEventsMatchesParsers(t *testing.T) {
	events := []Event{
		{Index: 0, Time: 1, Type: TypeInvoke, Process: 0, Value: []Op{{Append: true, Key: 1, Value: 2}, {Key: 3}}},
		{Index: 1, Time: 2, Type: TypeInvoke, Process: 1, Value: []Op{{Key: 1}}},
		{Index: 2, Time: 3, Type: TypeOK, Process: 0, Value: []Op{{Append: true, Key: 1, Value: 2}, {Key: 3, Read: []int64{}}}},
		{Index: 3, Time: 4, Type: TypeInfo, Process: 1, Value: []Op{{Key: 1, Read: []int64{2}}}, Error: "timeout \"x\"\n"},
		{Index: 4, Time: 5, Type: TypeInvoke, Process: 2, Value: []Op{{Append: true, Key: 1, Value: -7}}},
		{Index: 5, Time: 6, Type: TypeFail, Process: 2, Value: []Op{{Append: true, Key: 1, Value: -7}}, Error: "abort"},
		// Nemesis actions as doppel run records them: skipped, and they take no
		// position in real-time order.
		{Index: 6, Time: 7, Type: TypeInfo, F: "kill", Note: "postgresql \"15/main\""},
		{Index: 7, Time: 8, Type: TypeInfo, F: "kill"},
		{Index: 8, Time: 9, Type: TypeInvoke, Process: 2, Value: []Op{{Append: true, Key: 1, Value: 9}}},
	}
	h, err := FromEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	checkSummaries(t, h, []string{
		"ok p=0 inv=0 cmp=2 idx=2 line=3 [[:append 1 2] [:r 3 []]]",
		"info p=1 inv=1 cmp=-1 idx=3 line=4 [[:r 1 nil]]",
		"fail p=2 inv=4 cmp=5 idx=5 line=6 [[:append 1 -7]]",
		"info p=2 inv=6 cmp=-1 idx=8 line=9 [[:append 1 9]]",
	})
	if h.Events != len(events) {
		t.Errorf("%d events counted, want %d", h.Events, len(events))
	}
	var e, j bytes.Buffer
	for i := range events {
		if err := WriteEDN(&e, &events[i]); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&j, &events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if first := strings.SplitN(e.String(), "\n", 2)[0]; first != "{:index 0, :time 1, :type :invoke, :process 0, :f :txn, :value [[:append 1 2] [:r 3 nil]]}" {
		t.Errorf("EDN line: %s", first)
	}
	if first := strings.SplitN(j.String(), "\n", 2)[0]; first != `{"index":0,"time":1,"type":"invoke","process":0,"f":"txn","value":[["append",1,2],["r",3,null]]}` {
		t.Errorf("JSON line: %s", first)
	}
	if line := strings.Split(e.String(), "\n")[6]; line != `{:index 6, :time 7, :type :info, :process :nemesis, :f :kill, :value "postgresql \"15/main\""}` {
		t.Errorf("EDN nemesis line: %s", line)
	}
	if line := strings.Split(j.String(), "\n")[7]; line != `{"index":7,"time":8,"type":"info","process":"nemesis","f":"kill","value":null}` {
		t.Errorf("JSON nemesis line: %s", line)
	}
	he, err := ParseEDN(&e, "events.edn")
	if err != nil {
		t.Fatal(err)
	}
	hj, err := ParseJSON(&j, "events.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*History{he, hj} {
		if !reflect.DeepEqual(summaries(p), summaries(h)) || p.Events != h.Events {
			t.Errorf("parsed events differ:\n%s\nvs\n%s", strings.Join(summaries(p), "\n"), strings.Join(summaries(h), "\n"))
		}
	}
	if _, err := FromEvents([]Event{{Type: TypeOK, Value: []Op{{Key: 1}}}, {Type: 9}}); err == nil || !strings.Contains(err.Error(), "events:2:") {
		t.Errorf("bad type: %v", err)
	}
}

// A reader that fails must give its error, not a syntax error.
type failingReader struct{ data []byte }

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errors.New("disk on fire")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	_, err := ParseEDN(&failingReader{data: []byte(`{:type :ok, :value [[:r 1 [1 2`)}, "x.edn")
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("got %v", err)
	}
}

// Tokens split across buffer refills must read the same.
type byteReader struct{ data []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	p[0] = r.data[0]
	r.data = r.data[1:]
	return 1, nil
}

func TestOneByteReads(t *testing.T) {
	h1 := parseString(t, false, mixedHistory)
	h2, err := ParseEDN(&byteReader{data: []byte(mixedHistory)}, "h.edn")
	if err != nil {
		t.Fatal(err)
	}
	equalHistories(t, h1, h2)
	checkSummaries(t, h2, summaries(h1)) // lines too
	var j bytes.Buffer
	if err := WriteHistoryJSON(&j, h1); err != nil {
		t.Fatal(err)
	}
	hj1 := parseString(t, true, j.String())
	hj2, err := Parse(&byteReader{data: j.Bytes()}, "h.json")
	if err != nil {
		t.Fatal(err)
	}
	equalHistories(t, hj1, hj2)
	checkSummaries(t, hj2, summaries(hj1))
	if !strings.Contains(j.String(), `["append",":x","s"]`) || !strings.Contains(j.String(), `"process":":p1"`) {
		t.Errorf("JSON keywords and strings:\n%s", j.String())
	}
}

func TestDeepNesting(t *testing.T) {
	for _, text := range []string{
		"{:a " + strings.Repeat("[", 5000),
		"{:type :ok, :value " + strings.Repeat("#_", 5000) + "[]}",
		strings.Repeat("#a ", 5000) + "{}",
	} {
		_, err := ParseEDN(strings.NewReader(text), "deep.edn")
		if err == nil || !strings.Contains(err.Error(), "nested more than") {
			t.Errorf("%.20s...: %v", text, err)
		}
	}
	if _, err := ParseJSON(strings.NewReader(`{"a":`+strings.Repeat("[", 5000)), "deep.json"); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("JSON: %v", err)
	}
}

// A cut history may hold an :ok read whose result is dropped; nil would read back as the
// empty list, so the writers leave the read out and the rest of the transaction stays.
func TestUnknownOKReadIsLeftOut(t *testing.T) {
	h := parseString(t, false, "{:type :invoke :process 0 :value [[:r 1 nil] [:append 1 2] [:r 2 nil]]}\n"+
		"{:type :ok :process 0 :value [[:r 1 [5]] [:append 1 2] [:r 2 [7]]]}")
	h.Ops[h.Txns[0].OpStart].Known = false
	for _, write := range []func(io.Writer, *History) error{WriteHistoryEDN, WriteHistoryJSON} {
		var b bytes.Buffer
		if err := write(&b, h); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "5") {
			t.Errorf("the dropped read is written:\n%s", b.String())
		}
		back, err := Parse(bytes.NewReader(b.Bytes()), "cut")
		if err != nil {
			t.Fatal(err)
		}
		ops := back.TxnOps(0)
		if len(ops) != 2 || ops[0].Kind != Append || ops[1].Kind != Read || !ops[1].Known || len(back.ReadList(&ops[1])) != 1 {
			t.Errorf("read back: %v\n%s", ops, b.String())
		}
	}
}

// Elle's tests write an invocation's read as [:r k]: a read whose value is not given.
func TestTwoElementRead(t *testing.T) {
	for _, src := range []string{
		"{:type :invoke :process 1 :value [[:r :x] [:append :y 1]]}\n{:type :ok :process 1 :value [[:r :x [1]] [:append :y 1]]}\n{:type :ok :process 2 :value [[:r :x]]}",
		`{"type":"invoke","process":1,"value":[["r","x"],["append","y",1]]}` + "\n" + `{"type":"ok","process":1,"value":[["r","x",[1]],["append","y",1]]}` + "\n" + `{"type":"ok","process":2,"value":[["r","x"]]}`,
	} {
		h, err := Parse(strings.NewReader(src), "elle")
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Txns) != 2 {
			t.Fatalf("%d transactions", len(h.Txns))
		}
		ops := h.TxnOps(0)
		if len(ops) != 2 || !ops[0].Known || len(h.ReadList(&ops[0])) != 1 {
			t.Errorf("first: %v", ops)
		}
		// Completed :ok without a value: the initial state, like nil.
		if ops := h.TxnOps(1); len(ops) != 1 || !ops[0].Known || len(h.ReadList(&ops[0])) != 0 {
			t.Errorf("second: %v", ops)
		}
	}
}

// TestLongReads: read values go to one slice that grows as the parser goes (by
// estimates of what the whole input needs). Every read must come back value by value,
// through the builder alone and through the file parser (which reserves room from the
// file's size), with reads of every length, the empty one included, across growths.
func TestLongReads(t *testing.T) {
	var events []Event
	var want [][]int64
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 3000; i++ {
		n := rng.IntN(400)
		if i%97 == 0 {
			n = 0
		}
		read := make([]int64, n)
		for j := range read {
			read[j] = int64(rng.IntN(5000)) - 10
		}
		want = append(want, read)
		ops := []Op{{Key: int64(i % 7), Read: read}, {Append: true, Key: int64(i % 7), Value: int64(i)}}
		events = append(events,
			Event{Index: int64(2 * i), Type: TypeInvoke, Process: int64(i % 3), Value: []Op{{Key: int64(i % 7)}, ops[1]}},
			Event{Index: int64(2*i + 1), Type: TypeOK, Process: int64(i % 3), Value: ops})
	}
	for _, g := range bothWays(t, events) {
		if len(g.Txns) != len(want) {
			t.Fatalf("%d transactions, want %d", len(g.Txns), len(want))
		}
		total := 0
		for i, w := range want {
			op := &g.TxnOps(i)[0]
			got := g.ReadList(op)
			total += len(got)
			if len(got) != len(w) {
				t.Fatalf("transaction %d reads %d values, want %d", i, len(got), len(w))
			}
			for j, v := range got {
				if g.Values[v] != strconv.FormatInt(w[j], 10) {
					t.Fatalf("transaction %d: value %d is %s, want %d", i, j, g.Values[v], w[j])
				}
			}
		}
		if total > len(g.ReadValues) || total < 4<<16 {
			t.Errorf("%d read values stored, %d in reads (want more than 256K, all stored: no read here is a prefix of another)", len(g.ReadValues), total)
		}
	}
}

// TestSharedReads: a read that is a prefix of its key's longest read so far shares
// that read's storage, and one that extends it extends it. Reads of growing lists on
// interleaved keys, with shorter (stale) reads, equal reads, divergent reads and empty
// ones, must each come back value by value, through the builder and the file parser,
// while ReadValues holds far fewer values than the reads show.
func TestSharedReads(t *testing.T) {
	const keys = 5
	var events []Event
	var want [][]int64
	lists := make([][]int64, keys)
	rng := rand.New(rand.NewPCG(3, 9))
	for i := 0; i < 4000; i++ {
		k := rng.IntN(keys)
		var read []int64
		switch r := rng.IntN(20); {
		case r < 12: // the whole list
			read = lists[k]
		case r < 19: // a prefix
			read = lists[k][:rng.IntN(len(lists[k])+1)]
		default: // diverges from the list at a random position
			read = append([]int64(nil), lists[k][:rng.IntN(len(lists[k])+1)]...)
			read = append(read, int64(rng.IntN(3)))
		}
		read = append([]int64{}, read...)
		want = append(want, read)
		v := int64(rng.IntN(3)) // duplicate values
		lists[k] = append(lists[k], v)
		ops := []Op{{Key: int64(k), Read: read}, {Append: true, Key: int64(k), Value: v}}
		events = append(events,
			Event{Index: int64(2 * i), Type: TypeInvoke, Process: int64(i % 3), Value: []Op{{Key: int64(k)}, ops[1]}},
			Event{Index: int64(2*i + 1), Type: TypeOK, Process: int64(i % 3), Value: ops})
	}
	for _, g := range bothWays(t, events) {
		total := 0
		for i, w := range want {
			got := g.ReadList(&g.TxnOps(i)[0])
			total += len(got)
			if len(got) != len(w) {
				t.Fatalf("transaction %d reads %d values, want %d", i, len(got), len(w))
			}
			for j, v := range got {
				if g.Values[v] != strconv.FormatInt(w[j], 10) {
					t.Fatalf("transaction %d: value %d is %s, want %d", i, j, g.Values[v], w[j])
				}
			}
		}
		if len(g.ReadValues) > total/4 {
			t.Errorf("%d read values stored for %d in reads: reads are not shared", len(g.ReadValues), total)
		}
	}
}

// bothWays builds the history of events through the builder alone and through the
// file parser (which reserves room from the file's size).
func bothWays(t *testing.T, events []Event) []*History {
	t.Helper()
	h, err := FromEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h.edn")
	var buf bytes.Buffer
	for i := range events {
		if err := WriteEDN(&buf, &events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	hf, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return []*History{h, hf}
}
