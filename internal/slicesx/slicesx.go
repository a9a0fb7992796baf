// Package slicesx holds slice helpers the standard library's slices lacks.
package slicesx

// Reserve returns x with room for n more elements. Unlike slices.Grow it does not
// copy a zeroed buffer in: memory fresh from the system is zero already (millions of
// clauses or edges otherwise grow the slices by doubling, or fault their pages twice).
func Reserve[T any](x []T, n int) []T {
	if cap(x)-len(x) >= n {
		return x
	}
	r := make([]T, len(x), len(x)+n)
	copy(r, x)
	return r
}

// Double returns x with room for n more elements, doubling its capacity when it must
// grow. append grows a large slice by a quarter, so a slice that only grows (an arena
// of millions of bytes) is copied about five times its final size; doubled, once.
func Double[T any](x []T, n int) []T {
	if cap(x)-len(x) >= n {
		return x
	}
	r := make([]T, len(x), max(2*cap(x), len(x)+n, 64))
	copy(r, x)
	return r
}
