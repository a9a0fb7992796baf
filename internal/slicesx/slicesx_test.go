package slicesx

import (
	"slices"
	"testing"
)

// TestDouble: the elements stay, there is room for n more, and a slice that only grows
// is reallocated about log2 times, not by append's quarter steps.
func TestDouble(t *testing.T) {
	var x []int32
	grows := 0
	for i := range int32(100_000) {
		before := cap(x)
		x = Double(x, 1)
		if cap(x)-len(x) < 1 {
			t.Fatalf("no room after Double at %d", i)
		}
		if cap(x) != before {
			grows++
		}
		x = append(x, i)
	}
	for i, v := range x {
		if v != int32(i) {
			t.Fatalf("x[%d] = %d", i, v)
		}
	}
	if grows > 12 {
		t.Errorf("%d reallocations for 100,000 elements, want at most 12", grows)
	}
	y := Double([]int32{1, 2}, 1000)
	if !slices.Equal(y, []int32{1, 2}) || cap(y) < 1002 {
		t.Errorf("Double([1 2], 1000) = %v, cap %d", y, cap(y))
	}
}
