package workload

import (
	"math"
	"reflect"
	"testing"
)

func TestValidateRejectsBadSpecs(t *testing.T) {
	if err := DefaultSpec().Validate(); err != nil {
		t.Fatalf("default spec invalid: %v", err)
	}
	bad := []func(*Spec){
		func(s *Spec) { s.Sessions = 0 },
		func(s *Spec) { s.Txns = -1 },
		func(s *Spec) { s.Ops = 0 },
		func(s *Spec) { s.Keys = 0 },
		func(s *Spec) { s.Reads = 1.5 },
		func(s *Spec) { s.Reads = math.NaN() },
		func(s *Spec) { s.KeyDist = "gauss" },
		func(s *Spec) { s.KeyZipf = -1 },
		func(s *Spec) { s.KeyZipf = math.Inf(1) },
		func(s *Spec) { s.DupKeys = -0.1 },
		func(s *Spec) { s.ValZipf = math.NaN() },
		func(s *Spec) { s.ValDomain = 0 },
	}
	for i, mutate := range bad {
		s := DefaultSpec()
		mutate(&s)
		if err := s.Validate(); err == nil {
			t.Errorf("case %d: %+v accepted", i, s)
		}
		if ops := NewTxnSource(s, 0).Next(); ops != nil {
			t.Errorf("case %d: invalid spec produced ops %v", i, ops)
		}
	}
}

func TestTxnSourceDeterministic(t *testing.T) {
	s := DefaultSpec()
	a, b, c := NewTxnSource(s, 3), NewTxnSource(s, 3), NewTxnSource(s, 4)
	same := true
	for range 100 {
		x, y, z := a.Next(), b.Next(), c.Next()
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("same (seed, session) differ: %v vs %v", x, y)
		}
		same = same && reflect.DeepEqual(x, z)
	}
	if same {
		t.Fatal("sessions 3 and 4 produced identical transactions")
	}
}

// draw draws the transactions of one session and returns per-key access counts, the number of reads, and
// the values appended per key.
func draw(s Spec, session, txns int) (keyCount []int, reads int, vals map[int64][]int64) {
	keyCount = make([]int, s.Keys)
	vals = map[int64][]int64{}
	g := NewTxnSource(s, session)
	for range txns {
		ops := g.Next()
		if len(ops) != s.Ops {
			panic("wrong op count")
		}
		for _, op := range ops {
			keyCount[op.Key]++
			if op.Append {
				if op.Value <= 0 || op.Read != nil {
					panic("bad append")
				}
				vals[op.Key] = append(vals[op.Key], op.Value)
			} else {
				if op.Read != nil {
					panic("read carries a result")
				}
				reads++
			}
		}
	}
	return
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestKeyDistributions(t *testing.T) {
	const txns = 20000
	s := DefaultSpec()
	s.Keys, s.Ops, s.Reads = 100, 5, 0.3
	n := float64(txns * s.Ops)

	s.KeyDist = "uniform"
	kc, reads, _ := draw(s, 0, txns)
	if !near(float64(reads)/n, 0.3, 0.01) {
		t.Errorf("read fraction %v, want 0.3", float64(reads)/n)
	}
	for k, c := range kc {
		if !near(float64(c)/n, 0.01, 0.003) {
			t.Errorf("uniform: key %d frequency %v", k, float64(c)/n)
		}
	}

	s.KeyDist = "hotspot"
	kc, _, _ = draw(s, 0, txns)
	hot := 0
	for _, c := range kc[:20] {
		hot += c
	}
	if !near(float64(hot)/n, 0.8, 0.01) {
		t.Errorf("hotspot: hot share %v, want 0.8", float64(hot)/n)
	}

	for _, theta := range []float64{0.5, 1, 2} {
		s.KeyDist, s.KeyZipf = "zipf", theta
		kc, _, _ = draw(s, 1, txns)
		var total float64
		for r := 1; r <= s.Keys; r++ {
			total += math.Pow(float64(r), -theta)
		}
		for _, k := range []int{0, 1, 9} {
			want := math.Pow(float64(k+1), -theta) / total
			if !near(float64(kc[k])/n, want, 0.1*want+0.002) {
				t.Errorf("zipf θ=%v: key %d frequency %v, want %v", theta, k, float64(kc[k])/n, want)
			}
		}
	}
}

func TestDupKeysAndUniqueValues(t *testing.T) {
	s := DefaultSpec()
	s.Keys, s.DupKeys, s.Sessions, s.ValDomain, s.ValZipf = 200, 0.25, 4, 5, 1
	g := NewTxnSource(s, 0)
	nDup := 0
	for k := range int64(s.Keys) {
		if g.IsDupKey(k) {
			nDup++
		}
	}
	if nDup != 50 {
		t.Fatalf("%d duplicate keys, want 50", nDup)
	}
	seen := map[[2]int64]int{} // (key, value) -> session
	dupVals := make([]int, s.ValDomain+1)
	for session := range s.Sessions {
		_, _, vals := draw(s, session, 2000)
		for k, vs := range vals {
			for _, v := range vs {
				if g.IsDupKey(k) {
					if v < 1 || v > int64(s.ValDomain) {
						t.Fatalf("dup key %d: value %d outside 1..%d", k, v, s.ValDomain)
					}
					dupVals[v]++
					continue
				}
				if prev, ok := seen[[2]int64{k, v}]; ok {
					t.Fatalf("key %d value %d appended by sessions %d and %d", k, v, prev, session)
				}
				seen[[2]int64{k, v}] = session
			}
		}
	}
	// zipf θ=1 over 1..5: P(1) = 1/H5 ≈ 0.438, P(5) ≈ 0.088.
	total := 0
	for _, c := range dupVals {
		total += c
	}
	if p1 := float64(dupVals[1]) / float64(total); !near(p1, 0.438, 0.03) {
		t.Errorf("value 1 frequency %v, want 0.438", p1)
	}
	if p5 := float64(dupVals[5]) / float64(total); !near(p5, 0.088, 0.02) {
		t.Errorf("value 5 frequency %v, want 0.088", p5)
	}
}

func TestZipfThetaZeroIsUniform(t *testing.T) {
	s := DefaultSpec()
	s.Keys, s.KeyDist, s.KeyZipf = 10, "zipf", 0
	kc, _, _ := draw(s, 0, 10000)
	for k, c := range kc {
		if !near(float64(c)/40000, 0.1, 0.01) {
			t.Errorf("θ=0: key %d frequency %v", k, float64(c)/40000)
		}
	}
}

// TestKeyRotation: with --key-rotate N a session moves to fresh keys every N
// transactions, so no key's list grows past what N transactions append.
func TestKeyRotation(t *testing.T) {
	spec := DefaultSpec()
	spec.KeyRotate = 10
	g := NewTxnSource(spec, 0)
	for i := 0; i < 50; i++ {
		for _, op := range g.Next() {
			if gen := op.Key / int64(spec.Keys); gen != int64(i/10) {
				t.Fatalf("transaction %d uses key %d of generation %d, want %d", i, op.Key, gen, i/10)
			}
			if op.Append && g.IsDupKey(op.Key) != g.IsDupKey(op.Key%int64(spec.Keys)) {
				t.Fatalf("key %d and its first generation disagree on duplicates", op.Key)
			}
		}
	}
	spec.KeyRotate = -1
	if spec.Validate() == nil {
		t.Fatal("negative key-rotate accepted")
	}
}
