package history

import (
	"os"
	"testing"
)

func BenchmarkParseLocalFile(b *testing.B) {
	f := os.Getenv("PARSE_FILE")
	if f == "" {
		b.Skip("no PARSE_FILE")
	}
	for i := 0; i < b.N; i++ {
		h, err := ParseFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(h.ReadValues)), "readvalues")
	}
}
