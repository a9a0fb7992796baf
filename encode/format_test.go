package encode

import (
	"strconv"
	"strings"
	"testing"

	"doppel/history"
)

func TestListAround(t *testing.T) {
	h := &history.History{}
	var long []int32
	for i := 0; i < 200; i++ {
		h.Values = append(h.Values, strconv.Itoa(i+1))
		long = append(long, int32(i))
	}
	for _, tc := range []struct {
		vals  []int32
		focus []int
		want  string
	}{
		{long[:5], []int{2}, "[1 2 3 4 5]"},
		{long, []int{47}, "[… 46 47 48 49 50 …] (positions 46-50 of 200, counted from 1)"},
		{long, []int{0}, "[1 2 3 …] (positions 1-3 of 200, counted from 1)"},
		{long, []int{199}, "[… 198 199 200] (positions 198-200 of 200, counted from 1)"},
		{long, []int{47, 49, 120}, "[… 46 47 48 49 50 51 52 … 119 120 121 122 123 …] (positions 46-52, 119-123 of 200, counted from 1)"},
		{long, nil, "[1 2 3 … 197 198 199 200] (200 values)"},
	} {
		if got := ListAround(h, tc.vals, tc.focus...); got != tc.want {
			t.Errorf("ListAround(%d values, %v) = %q, want %q", len(tc.vals), tc.focus, got, tc.want)
		}
	}
	// However many positions, the text stays short.
	many := make([]int, 0, 200)
	for i := 0; i < 200; i += 7 {
		many = append(many, i)
	}
	if got := ListAround(h, long, many...); len(got) > 200 || !strings.Contains(got, ", …") {
		t.Errorf("ListAround with %d positions: %d bytes: %s", len(many), len(got), got)
	}
}
