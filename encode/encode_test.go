package encode

import (
	"testing"

	"doppel/internal/brute"
)

func build(t *testing.T, text string) *Problem {
	t.Helper()
	h, err := brute.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return Build(h)
}

// TestSegmentStates checks how much choice each key leaves.
func TestSegmentStates(t *testing.T) {
	for _, tc := range []struct {
		name, history string
		want          KeyState
	}{
		{"unique values are fixed", "T0 p0 ok [a x 1] inv=0 cmp=1\nT1 p1 ok [a x 2] [a x 3] inv=2 cmp=3\nT2 p2 ok [r x [1 2 3]] inv=4 cmp=5", KeyFixed},
		{"figure 1b has one attribution", "T0 p0 ok [a x 1] inv=0 cmp=1\nT1 p1 ok [a x 2] [a x 1] inv=2 cmp=3\nT2 p2 ok [r x [1 2 1]] inv=4 cmp=5", KeyFixed},
		{"figure 1d has none", "T0 p0 ok [a x 1] [a x 1] inv=0 cmp=1\nT1 p1 ok [a x 1] [a x 1] inv=2 cmp=3\nT2 p2 ok [r x [1 1 1]] inv=4 cmp=5", KeyUnsat},
		{"two writers of one value are open", "T0 p0 ok [a x 1] inv=0 cmp=1\nT1 p1 ok [a x 1] inv=2 cmp=3\nT2 p2 ok [r x [1]] inv=4 cmp=5", KeyOpen},
		{"a read cut pins the block", "T0 p0 ok [a x 1] [a x 1] inv=0 cmp=1\nT1 p1 ok [a x 1] inv=2 cmp=3\nT2 p2 ok [r x [1]] [r x [1 1 1]] inv=4 cmp=5", KeyFixed},
		{"read then append pins the writer", "T0 p0 ok [a x 1] inv=0 cmp=1\nT1 p1 ok [r x [1]] [a x 1] inv=2 cmp=3\nT2 p2 ok [r x [1 1]] inv=4 cmp=5", KeyFixed},
		{"a transaction cannot sit under its own read", "T0 p0 ok [r x [1]] [a x 1] inv=0 cmp=1", KeyUnsat},
		{"never read", "T0 p0 ok [a x 1] inv=0 cmp=1", KeyUnread},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := build(t, tc.history)
			if got := p.Plans[0].State; got != tc.want {
				t.Fatalf("state %d, want %d (plan %+v)", got, tc.want, p.Plans[0])
			}
		})
	}
}

// TestFixedEdges checks the known edges of a fixed key: ww between blocks, wr to the
// reader, and the unobserved writer after the last block through the hub.
func TestFixedEdges(t *testing.T) {
	p := build(t, "T0 p0 ok [a x 1] inv=0 cmp=1\nT1 p1 ok [a x 2] inv=2 cmp=3\nT2 p2 ok [r x [1]] inv=4 cmp=5\nT3 p0 ok [a x 3] inv=6 cmp=7")
	type e struct {
		from, to int32
		kind     EdgeKind
	}
	got := map[e]bool{}
	for _, x := range p.Edges {
		if x.G1 != x.G0 {
			t.Fatalf("guarded edge in a fixed key: %+v", x)
		}
		got[e{x.From, x.To, x.Kind}] = true
	}
	hub := p.HubBase
	for _, want := range []e{{0, 2, WR}, {2, hub, RW}, {0, hub, WW}, {hub, 1, Hub}, {hub, 3, Hub}} {
		if !got[want] {
			t.Errorf("missing edge %+v in %v", want, got)
		}
	}
	if len(p.Plans[0].Unobserved) != 2 {
		t.Errorf("unobserved writers: %v", p.Plans[0].Unobserved)
	}
}

// TestInternal finds a read that does not end with the transaction's own appends.
func TestInternal(t *testing.T) {
	p := build(t, "T0 p0 ok [a x 1] [r x [2]] inv=0 cmp=1")
	if len(p.In.Findings) != 1 || p.In.Findings[0].Type != "internal" {
		t.Fatalf("findings: %+v", p.In.Findings)
	}
}
