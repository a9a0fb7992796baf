package sat

import (
	"strings"
	"testing"
)

func TestParseDIMACS(t *testing.T) {
	in := `c a comment
p cnf 3 4
1 -2 0
2 3
 -1 0
c another comment
-3 0
1 2 3 0
%
0
`
	s, err := ParseDIMACS(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if s.NumVars() != 3 {
		t.Fatalf("NumVars = %d", s.NumVars())
	}
	var b strings.Builder
	s.WriteDIMACS(&b)
	want := "p cnf 3 4\n1 -2 0\n2 3 -1 0\n-3 0\n1 2 3 0\n"
	if b.String() != want {
		t.Fatalf("WriteDIMACS:\n%s\nwant:\n%s", b.String(), want)
	}
	st, model, err := SolveDIMACS(strings.NewReader(in))
	if err != nil || st != Sat {
		t.Fatalf("SolveDIMACS: %v %v", st, err)
	}
	// -3 forces 3 false; then (2 3 -1) gives 2 or -1; (1 -2) gives 1 or -2.
	if model[2] || (model[0] && !model[1]) || (model[1] && !model[0]) {
		t.Fatalf("bad model %v", model)
	}
	st, _, err = SolveDIMACS(strings.NewReader("p cnf 1 2\n1 0\n-1 0\n"))
	if err != nil || st != Unsat {
		t.Fatalf("want UNSAT, got %v %v", st, err)
	}
}

func TestParseDIMACSErrors(t *testing.T) {
	cases := []struct{ in, msg string }{
		{"", "line 0: no \"p cnf\" line"},
		{"1 2 0\n", "line 1: clause before"},
		{"p cnf 2 1\n1 x 0\n", "line 2: bad literal \"x\""},
		{"p cnf 2 1\n1 3 0\n", "line 2: literal 3 out of range"},
		{"p cnf 2 1\n-3 0\n", "line 2: literal -3 out of range"},
		{"p cnf 2 1\n1 2\n", "line 2: last clause not terminated"},
		{"p cnf 2 2\n1 2 0\n", "2 clauses declared, 1 found"},
		{"p cnf 2 1\n1 0\n2 0\n", "line 3: more than the 1 clauses"},
		{"p cnf 2\n", "line 1: want \"p cnf VARS CLAUSES\""},
		{"p dnf 2 1\n", "line 1: want"},
		{"p cnf -2 1\n", "line 1: bad counts"},
		{"p cnf 99999999999 1\n", "line 1: bad counts"},
		{"p cnf 1 1\np cnf 1 1\n", "line 2: second problem line"},
		{"p cnf 1 1\n\n\n99999999999999999999 0\n", "line 4: bad literal"},
	}
	for _, c := range cases {
		_, err := ParseDIMACS(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseDIMACS(%q) = %v, want error containing %q", c.in, err, c.msg)
		}
	}
}

func FuzzParseDIMACS(f *testing.F) {
	f.Add("p cnf 3 2\n1 -2 0\n2 3 0\n")
	f.Add("c x\np cnf 1 2\n1 0\n-1 0\n")
	f.Add("p cnf 2 1\n1 2\n")
	f.Add("p cnf 0 0\n%\n")
	f.Fuzz(func(t *testing.T, in string) {
		// A small variable bound keeps each input cheap; ParseDIMACS shares the code.
		s, err := parseDIMACS(strings.NewReader(in), 40)
		if err != nil {
			return
		}
		s.SetConflictLimit(1000)
		st := s.Solve()
		if st == Sat {
			// The model must satisfy the formula as written back.
			var b strings.Builder
			if err := s.WriteDIMACS(&b); err != nil {
				t.Fatal(err)
			}
			s2, err := ParseDIMACS(strings.NewReader(b.String()))
			if err != nil {
				t.Fatalf("re-parse of written formula: %v", err)
			}
			for i := 0; i < s.NumVars(); i++ {
				l := PosLit(Var(i))
				if !s.ModelValue(l) {
					l = l.Not()
				}
				s2.AddClause(l)
			}
			if s2.Solve() != Sat {
				t.Fatalf("model does not satisfy %q", in)
			}
		}
	})
}
