package sat

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxDIMACSVars bounds the declared variable count so a bad header cannot exhaust memory
// (each variable costs about 100 bytes).
const maxDIMACSVars = 1 << 24

// ParseDIMACS reads a CNF formula in DIMACS format ("p cnf VARS CLAUSES", comment lines
// starting with "c", clauses as 0-terminated integer lists that may span lines; a line "%"
// ends the input, as in SATLIB files). Errors name the line.
func ParseDIMACS(r io.Reader) (*Solver, error) { return parseDIMACS(r, maxDIMACSVars) }

func parseDIMACS(r io.Reader, maxVars int) (*Solver, error) {
	br := bufio.NewReader(r)
	s := New()
	var clause []Lit
	lineNo := 0
	header := false
	numVars, numClauses, clauses := 0, 0, 0
	for {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			if err != io.EOF {
				return nil, fmt.Errorf("dimacs: line %d: %w", lineNo+1, err)
			}
			break
		}
		lineNo++
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0 || strings.HasPrefix(fields[0], "c"):
			continue
		case fields[0] == "%":
			err = io.EOF
		case fields[0] == "p":
			if header {
				return nil, fmt.Errorf("dimacs: line %d: second problem line", lineNo)
			}
			if len(fields) != 4 || fields[1] != "cnf" {
				return nil, fmt.Errorf("dimacs: line %d: want \"p cnf VARS CLAUSES\", got %q", lineNo, strings.TrimSpace(line))
			}
			nv, err1 := strconv.Atoi(fields[2])
			nc, err2 := strconv.Atoi(fields[3])
			if err1 != nil || err2 != nil || nv < 0 || nc < 0 || nv > maxVars {
				return nil, fmt.Errorf("dimacs: line %d: bad counts in %q", lineNo, strings.TrimSpace(line))
			}
			header = true
			numVars, numClauses = nv, nc
			for s.NumVars() < numVars {
				s.NewVar()
			}
			continue
		default:
			if !header {
				return nil, fmt.Errorf("dimacs: line %d: clause before the \"p cnf\" line", lineNo)
			}
			for _, f := range fields {
				n, perr := strconv.ParseInt(f, 10, 64)
				if perr != nil {
					return nil, fmt.Errorf("dimacs: line %d: bad literal %q", lineNo, f)
				}
				if n == 0 {
					clauses++
					if clauses > numClauses {
						return nil, fmt.Errorf("dimacs: line %d: more than the %d clauses declared", lineNo, numClauses)
					}
					s.AddClause(clause...)
					clause = clause[:0]
					continue
				}
				if n > int64(numVars) || -n > int64(numVars) {
					return nil, fmt.Errorf("dimacs: line %d: literal %d out of range (%d variables declared)", lineNo, n, numVars)
				}
				if n > 0 {
					clause = append(clause, PosLit(Var(n-1)))
				} else {
					clause = append(clause, NegLit(Var(-n-1)))
				}
			}
		}
		if err == io.EOF {
			break
		}
	}
	if !header {
		return nil, fmt.Errorf("dimacs: line %d: no \"p cnf\" line", lineNo)
	}
	if len(clause) > 0 {
		return nil, fmt.Errorf("dimacs: line %d: last clause not terminated by 0", lineNo)
	}
	if clauses != numClauses {
		return nil, fmt.Errorf("dimacs: line %d: %d clauses declared, %d found", lineNo, numClauses, clauses)
	}
	return s, nil
}

// WriteDIMACS writes the clauses given to AddClause (not learned ones, not the theory) in
// DIMACS format.
func (s *Solver) WriteDIMACS(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "p cnf %d %d\n", s.NumVars(), len(s.origEnd))
	start := int32(0)
	buf := make([]byte, 0, 16)
	for _, end := range s.origEnd {
		for _, l := range s.origLits[start:end] {
			buf = strconv.AppendInt(buf[:0], int64(l.Var())+1, 10)
			if l.IsNeg() {
				bw.WriteByte('-')
			}
			bw.Write(buf)
			bw.WriteByte(' ')
		}
		bw.WriteString("0\n")
		start = end
	}
	return bw.Flush()
}

// SolveDIMACS parses a DIMACS CNF formula and solves it. For Sat it also returns the model,
// indexed by variable (0-based).
func SolveDIMACS(r io.Reader) (Status, []bool, error) {
	s, err := ParseDIMACS(r)
	if err != nil {
		return Unknown, nil, err
	}
	st := s.Solve()
	if st != Sat {
		return st, nil, nil
	}
	return st, s.Model(), nil
}
