package brute

import (
	"fmt"
	"strconv"
	"strings"

	"doppel/history"
)

// Format prints h one transaction per line, for test failure messages:
//
//	T3 p1 ok [a x 1] [r x [1 2 1]] inv=4 cmp=7
//
// T3 is h.Txns[3]; p- means no process; an unknown read prints as [r x nil]. Parse reads
// this form back, so a failing history can be pasted into a test.
func Format(h *history.History) string {
	var b strings.Builder
	for i := range h.Txns {
		t := &h.Txns[i]
		fmt.Fprintf(&b, "T%d ", i)
		if t.Process >= 0 {
			b.WriteString("p" + name(h.Processes, t.Process))
		} else {
			b.WriteString("p-")
		}
		b.WriteString(" " + t.Status.String())
		for _, op := range h.TxnOps(i) {
			if op.Kind == history.Append {
				fmt.Fprintf(&b, " [a %s %s]", name(h.Keys, op.Key), name(h.Values, op.Value))
				continue
			}
			fmt.Fprintf(&b, " [r %s ", name(h.Keys, op.Key))
			if !op.Known {
				b.WriteString("nil]")
				continue
			}
			b.WriteByte('[')
			for j, v := range h.ReadValues[op.Start:op.End] {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(name(h.Values, v))
			}
			b.WriteString("]]")
		}
		fmt.Fprintf(&b, " inv=%d cmp=%d\n", t.Invoke, t.Complete)
	}
	return b.String()
}

// name is the printed form of an interned id, or #id when the table lacks it.
func name(table []string, id int32) string {
	if id >= 0 && int(id) < len(table) {
		return table[id]
	}
	return "#" + strconv.Itoa(int(id))
}

// Parse reads the form Format prints: one transaction per non-blank line, in h.Txns
// order, made of optional label Tn, process pNAME (p- or absent: none), status
// ok|info|fail (absent: ok), micro-ops [a KEY VALUE] [r KEY [V...]] [r KEY nil], and
// optional inv=N cmp=N (absent: -1). Keys, values and processes are interned in order
// of first appearance. A line starting with # is a comment. An :info transaction's
// reads are unknown whatever the line says, and its Complete is -1.
func Parse(text string) (*history.History, error) {
	h := &history.History{Source: "brute.Parse"}
	keys, values, procs := map[string]int32{}, map[string]int32{}, map[string]int32{}
	intern := func(m map[string]int32, table *[]string, s string) int32 {
		id, ok := m[s]
		if !ok {
			id = int32(len(*table))
			m[s] = id
			*table = append(*table, s)
		}
		return id
	}
	maxPos := int32(-1)
	for lineNo, line := range strings.Split(text, "\n") {
		toks := tokenize(line)
		if len(toks) == 0 || strings.HasPrefix(toks[0], "#") {
			continue
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("brute.Parse: line %d: %s", lineNo+1, fmt.Sprintf(format, args...))
		}
		t := history.Txn{Status: history.OK, Process: -1, Invoke: -1, Complete: -1,
			Index: int64(len(h.Txns)), Line: int32(lineNo + 1), OpStart: int32(len(h.Ops))}
		for i := 0; i < len(toks); i++ {
			tok := toks[i]
			switch {
			case tok == "[":
				// [a K V] | [r K nil] | [r K [V...]]
				if i+3 >= len(toks) {
					return nil, fail("unfinished micro-op")
				}
				kind, key := toks[i+1], toks[i+2]
				op := history.MicroOp{Key: intern(keys, &h.Keys, key)}
				switch kind {
				case "a", "append":
					if toks[i+3] == "[" || toks[i+3] == "]" || i+4 >= len(toks) || toks[i+4] != "]" {
						return nil, fail("want [a KEY VALUE]")
					}
					op.Kind = history.Append
					op.Value = intern(values, &h.Values, toks[i+3])
					i += 4
				case "r":
					op.Kind = history.Read
					j := i + 3
					switch toks[j] {
					case "nil":
						j++
					case "[":
						op.Known = true
						op.Start = int32(len(h.ReadValues))
						for j++; j < len(toks) && toks[j] != "]"; j++ {
							if toks[j] == "[" {
								return nil, fail("nested list in read")
							}
							h.ReadValues = append(h.ReadValues, intern(values, &h.Values, toks[j]))
						}
						if j >= len(toks) {
							return nil, fail("unfinished read list")
						}
						op.End = int32(len(h.ReadValues))
						j++
					default:
						return nil, fail("want [r KEY [VALUES]] or [r KEY nil]")
					}
					if j >= len(toks) || toks[j] != "]" {
						return nil, fail("unfinished read")
					}
					i = j
				default:
					return nil, fail("unknown micro-op %q", kind)
				}
				h.Ops = append(h.Ops, op)
			case tok == "ok":
				t.Status = history.OK
			case tok == "info":
				t.Status = history.Info
			case tok == "fail":
				t.Status = history.Fail
			case tok == "p-":
				t.Process = -1
			case strings.HasPrefix(tok, "inv=") || strings.HasPrefix(tok, "cmp="):
				n, err := strconv.ParseInt(tok[4:], 10, 32)
				if err != nil || n < -1 {
					return nil, fail("bad position %q", tok)
				}
				if tok[0] == 'i' {
					t.Invoke = int32(n)
				} else {
					t.Complete = int32(n)
				}
				maxPos = max(maxPos, int32(n))
			case len(tok) > 1 && tok[0] == 'p':
				t.Process = intern(procs, &h.Processes, tok[1:])
			case len(tok) > 1 && tok[0] == 'T':
				// label, ignored
			default:
				return nil, fail("unexpected %q", tok)
			}
		}
		t.OpEnd = int32(len(h.Ops))
		if t.Status == history.Info {
			t.Complete = -1
		}
		if t.Status != history.OK {
			for i := t.OpStart; i < t.OpEnd; i++ {
				h.Ops[i].Known = false
				h.Ops[i].Start, h.Ops[i].End = 0, 0
			}
		}
		h.Txns = append(h.Txns, t)
	}
	h.Events = max(int(maxPos)+1, 2*len(h.Txns))
	return h, nil
}

// tokenize splits a line into words and the brackets [ and ].
func tokenize(line string) []string {
	var toks []string
	word := -1
	for i := 0; i <= len(line); i++ {
		c := byte(' ')
		if i < len(line) {
			c = line[i]
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '[' || c == ']' || c == ',' {
			if word >= 0 {
				toks = append(toks, line[word:i])
				word = -1
			}
			if c == '[' || c == ']' {
				toks = append(toks, line[i:i+1])
			}
			continue
		}
		if word < 0 {
			word = i
		}
	}
	return toks
}
