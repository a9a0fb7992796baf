package history

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseFileReadsGzip: a gzip-compressed history file is read through gzip (by its
// content, not its name), and a damaged one is an error naming the file.
func TestParseFileReadsGzip(t *testing.T) {
	text := "{:type :invoke, :process 0, :f :txn, :value [[:append 1 1]]}\n" +
		"{:type :ok, :process 0, :f :txn, :value [[:append 1 1]]}\n" +
		"{:type :invoke, :process 1, :f :txn, :value [[:r 1 nil]]}\n" +
		"{:type :ok, :process 1, :f :txn, :value [[:r 1 [1]]]}\n"
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(text))
	zw.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "history.edn") // no .gz: detected by content
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Txns) != 2 {
		t.Fatalf("%d transactions, want 2", len(h.Txns))
	}
	bad := filepath.Join(dir, "cut.edn.gz")
	if err := os.WriteFile(bad, buf.Bytes()[:len(buf.Bytes())/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a damaged gzip file: error %v, want one naming %s", err, bad)
	}
}
