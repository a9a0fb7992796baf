package check

import (
	"bufio"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"doppel/history"
	"doppel/internal/brute"
)

// TestOthergenAgainstBruteForce compares every model's verdict, each model alone and
// all at once, with the brute force's on tiny histories from a generator that shares
// no code with doppel's (tools/othergen: strict-serializable, snapshot-isolated and
// read-committed stores with :info and :fail transactions) and on mutants of them (a
// read's list cut, extended, or a value changed or swapped), written by
// tools/othergen/tinycorpus.py.
func TestOthergenAgainstBruteForce(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "othergen", "tiny.edn.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var names, texts []string
	sc := bufio.NewScanner(z)
	var b strings.Builder
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), ";; history "); ok {
			if len(names) > 0 {
				texts = append(texts, b.String())
			}
			names, b = append(names, name), strings.Builder{}
			continue
		}
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	texts = append(texts, b.String())
	models := ModelNames()
	valid, invalid := 0, 0
	for i, name := range names {
		h, err := history.Parse(strings.NewReader(texts[i]), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		all, err := Check(h, Options{Models: models})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for j, m := range models {
			want, err := brute.CheckGraph(h, m)
			if err != nil {
				t.Fatalf("%s: the brute force: %v", name, err)
			}
			one, err := Check(h, Options{Models: []string{m}})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want {
				valid++
			} else {
				invalid++
			}
			if got := one.Models[0]; (got.Valid == Valid) != want {
				t.Errorf("%s: %s alone: %v (%s), the brute force says valid=%v", name, m, got.Valid, got.Message, want)
			}
			if got := all.Models[j]; got.Model != m || (got.Valid == Valid) != want {
				t.Errorf("%s: %s with every model: %v (%s), the brute force says valid=%v", name, m, got.Valid, got.Message, want)
			}
		}
	}
	t.Logf("%d histories, %d models: %d valid, %d not valid by the brute force", len(names), len(models), valid, invalid)
	if len(names) < 1000 || valid == 0 || invalid == 0 {
		t.Fatalf("the corpus holds %d histories (%d valid, %d not valid verdicts)", len(names), valid, invalid)
	}
}
