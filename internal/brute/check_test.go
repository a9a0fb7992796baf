package brute

import "testing"

// verdicts lists, per model, whether the history satisfies it, in Models order:
// serializable, strong-session-serializable, strict-serializable, snapshot-isolation.
type verdicts [4]bool

var (
	allValid   = verdicts{true, true, true, true}
	allInvalid = verdicts{false, false, false, false}
)

// handCases are histories whose verdicts were worked out by hand; each says why.
var handCases = []struct {
	name, why string
	text      string
	want      verdicts
}{
	{
		"duplicate-blocks", "every writer appends two 1s, so every list of x has even length: [1 1 1] is never the list",
		`ok [a x 1] [a x 1]
		 ok [a x 1] [a x 1]
		 ok [r x [1 1 1]]`,
		allInvalid,
	},
	{
		"duplicate-interleave", "T0 then T1 gives [1 2 1]",
		`ok [a x 1]
		 ok [a x 2] [a x 1]
		 ok [r x [1 2 1]]`,
		allValid,
	},
	{
		"future-read", "T reads its own later append: the list is [] before T runs",
		`ok [r x [1]] [a x 1]`,
		allInvalid,
	},
	{
		"read-before-own-append", "another writer of 1 explains the read: T0, T1, T2",
		`ok [a x 1]
		 ok [r x [1]] [a x 1]
		 ok [r x [1 1]]`,
		allValid,
	},
	{
		"internal-read", "a read after the transaction's own append sees it",
		`ok [r x []] [a x 1] [a x 1] [r x [1 1]]`,
		allValid,
	},
	{
		"internal-read-too-long", "alone, the list before T is empty, so the read is [1]",
		`ok [a x 1] [r x [1 1]]`,
		allInvalid,
	},
	{
		"internal-read-from-other", "T0's append explains the first 1",
		`ok [a x 1]
		 ok [a x 1] [r x [1 1]]`,
		allValid,
	},
	{
		"internal-read-missing-own", "a read after an own append must end with it",
		`ok [a x 2]
		 ok [a x 1] [r x [2]]`,
		allInvalid,
	},
	{
		"write-skew", "both read the other's key empty: serially one sees the other's append; under SI both snapshots are empty and they write different keys",
		`ok [r x []] [r y []] [a x 1]
		 ok [r x []] [r y []] [a y 1]`,
		verdicts{false, false, false, true},
	},
	{
		"write-skew-observed", "as write-skew, with a later reader of both appends",
		`ok [r x []] [r y []] [a x 1]
		 ok [r x []] [r y []] [a y 1]
		 ok [r x [1]] [r y [1]]`,
		verdicts{false, false, false, true},
	},
	{
		"lost-update", "both read [] and append to x: serially the second sees the first; under SI they would be concurrent writers of x",
		`ok [r x []] [a x 1]
		 ok [r x []] [a x 2]
		 ok [r x [1 2]]`,
		allInvalid,
	},
	{
		"first-committer-wins", "as lost-update without the reader: the snapshots alone would allow it, first-committer-wins does not",
		`ok [r x []] [a x 1]
		 ok [r x []] [a x 2]`,
		allInvalid,
	},
	{
		"concurrent-blind-writes", "writers that read nothing can always take a later snapshot",
		`ok [a x 1]
		 ok [a x 2]
		 ok [r x [1 2]]`,
		allValid,
	},
	{
		"read-skew", "T1 sees T0's append to y but not to x: no order, and no snapshot, has that",
		`ok [a x 1] [a y 1]
		 ok [r x []] [r y [1]]`,
		allInvalid,
	},
	{
		"read-only-anomaly", "T1 < T0 (x), T0 < T2 (x), T2 < T1 (y): a cycle; SI commits T0, T2, T1 with T1's snapshot empty",
		`ok [a x 1]
		 ok [r x []] [a y 1]
		 ok [r x [1]] [r y []]`,
		verdicts{false, false, false, true},
	},
	{
		"snapshot-with-own-appends", "SI: T1's snapshot is before T0 on y, its own appends follow it",
		`ok [a y 1]
		 ok [r y []] [a x 1] [r x [1]]
		 ok [r y [1]] [r x []]`,
		verdicts{false, false, false, true},
	},
	{
		"old-snapshot", "T sees neither A nor B but commits after both, since U sees A and B and not T: T's snapshot is two commits before its own",
		`ok [a x 1]
		 ok [a y 1]
		 ok [r x []] [r y []] [a z 1]
		 ok [r x [1]] [r y [1]] [r z []]`,
		verdicts{false, false, false, true},
	},
	{
		"fail-read", "a read of a :fail transaction's append is aborted read",
		`fail [a x 1]
		 ok [r x [1]]`,
		allInvalid,
	},
	{
		"fail-unobserved", "a :fail append nobody sees is fine",
		`fail [a x 1]
		 ok [r x []] [a x 2]
		 ok [r x [2]]`,
		allValid,
	},
	{
		"fail-duplicate", "the 1 can come from the :ok writer",
		`fail [a x 1]
		 ok [a x 1]
		 ok [r x [1]]`,
		allValid,
	},
	{
		"info-observed", "an :info append may have committed",
		`info [a x 1]
		 ok [r x [1]]`,
		allValid,
	},
	{
		"info-unobserved", "an :info append may not have committed",
		`info [a x 1] [r x nil]
		 ok [r x []]`,
		allValid,
	},
	{
		"info-observed-and-not", "one reader sees it, a later one must too",
		`info [a x 1]
		 ok p0 [r x [1]] inv=0 cmp=1
		 ok p0 [r x []] inv=2 cmp=3`,
		verdicts{true, false, false, true},
	},
	{
		"info-partial", "an :info transaction's appends happen all or not at all",
		`info [a x 1] [a x 2]
		 ok [r x [1]]`,
		allInvalid,
	},
	{
		"info-partial-duplicate", "its two 1s come together: [1] is only half of them",
		`info [a x 1] [a x 1]
		 ok [r x [1]]`,
		allInvalid,
	},
	{
		"info-reads-unknown", "whatever an :info read says is ignored",
		`info [r x [2]] [a x 1]
		 ok [r x [1]]`,
		allValid,
	},
	{
		"process-order", "same process: T1 invoked after T0 completed must see its append; serializable puts T1 first",
		`ok p0 [a x 1] inv=0 cmp=1
		 ok p0 [r x []] inv=2 cmp=3`,
		verdicts{true, false, false, true},
	},
	{
		"real-time", "different processes, T0 completed before T1 invoked: only strict sees the order",
		`ok p0 [a x 1] inv=0 cmp=1
		 ok p1 [r x []] inv=2 cmp=3`,
		verdicts{true, true, false, true},
	},
	{
		"overlapping", "T0 and T1 overlap in time: either order is real-time order",
		`ok p0 [a x 1] inv=0 cmp=2
		 ok p1 [r x []] inv=1 cmp=3`,
		allValid,
	},
	{
		"process-order-without-invokes", "no invokes: process order is completion order, and strict includes it",
		`ok p0 [a x 1] cmp=0
		 ok p0 [r x []] cmp=1`,
		verdicts{true, false, false, true},
	},
	{
		"info-never-precedes", "an :info transaction has no completion: it may commit after T1",
		`info p0 [a x 1] inv=0
		 ok p1 [r x []] inv=5 cmp=6
		 ok p2 [r x [1]] inv=7 cmp=8`,
		allValid,
	},
	{
		"info-real-time", "T0 completed before :info T1 was invoked, so strict puts T0 first; [2 1] needs T1 first",
		`ok p1 [a x 1] inv=0 cmp=1
		 info p2 [a x 2] inv=2
		 ok p0 [r x [2 1]] inv=5 cmp=6`,
		verdicts{true, true, false, true},
	},
	{
		"info-not-committed", "committed, the :info T0 would precede T1 in its process; it need not commit",
		`info p0 [a x 1] inv=0
		 ok p0 [r x []] inv=2 cmp=3`,
		allValid,
	},
	{
		"info-committed-process-order", "T2 sees T0's append, so T0 committed, and precedes T1 in process p0",
		`info p0 [a x 1] inv=0
		 ok p0 [r x []] inv=2 cmp=3
		 ok p1 [r x [1]] inv=4 cmp=5`,
		verdicts{true, false, false, true},
	},
	{
		"info-some-commit", "T0 must not commit (T1 follows it in p0 and saw nothing), T2 must (T3 saw 2): only the mixed choice works under process order",
		`info p0 [a x 1] inv=0
		 ok p0 [r x []] inv=2 cmp=3
		 info p1 [a x 2] inv=4
		 ok p2 [r x [2]] inv=6 cmp=7`,
		allValid,
	},
	{
		"order-matters", "the values say the order: T1 before T0",
		`ok [a x 1]
		 ok [a x 2]
		 ok [r x [2 1]]`,
		allValid,
	},
	{
		"empty", "no transactions",
		``,
		allValid,
	},
}

func TestHandCases(t *testing.T) {
	for _, c := range handCases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Parse(c.text)
			if err != nil {
				t.Fatal(err)
			}
			for i, model := range Models {
				ok, err := CheckModel(h, model)
				if err != nil {
					t.Fatal(err)
				}
				if ok != c.want[i] {
					t.Errorf("%s: got %v, want %v (%s)\n%s", model, ok, c.want[i], c.why, Format(h))
				}
			}
		})
	}
}

func TestUnknownModel(t *testing.T) {
	h, _ := Parse("ok [a x 1]")
	if _, err := CheckModel(h, "linearizable"); err == nil {
		t.Error("no error for an unknown model")
	}
	if Check(h, "linearizable") {
		t.Error("Check true for an unknown model")
	}
}

func TestMalformed(t *testing.T) {
	h, _ := Parse("ok [a x 1] [r x [1]]")
	h.Ops[1].End = 99
	if _, err := CheckModel(h, Serializable); err == nil {
		t.Error("no error for a read out of range")
	}
	h, _ = Parse("ok [a x 1]")
	h.Txns[0].OpEnd = 5
	if _, err := CheckModel(h, Serializable); err == nil {
		t.Error("no error for ops out of range")
	}
	if _, err := CheckModel(nil, Serializable); err == nil {
		t.Error("no error for nil")
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{
		"ok [a x]", "ok [r x [1 2]", "ok [q x 1]", "ok inv=z", "ok [r x 5]", "bogus",
	} {
		if _, err := Parse(text); err == nil {
			t.Errorf("Parse(%q): no error", text)
		}
	}
}

func TestFormat(t *testing.T) {
	h, err := Parse("T0 p1 ok [a x 1] [r x [1 2 1]] [r y nil] inv=4 cmp=7\np- info [a y 2] [r x [1]] inv=2 cmp=9\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "T0 p1 ok [a x 1] [r x [1 2 1]] [r y nil] inv=4 cmp=7\nT1 p- info [a y 2] [r x nil] inv=2 cmp=-1\n"
	if got := Format(h); got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}
