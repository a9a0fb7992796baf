package history

import (
	"encoding/binary"
	"io"
	"math/bits"
)

// A fast path for the common shape of an EDN operation,
//
//	{:index 3, :time 159, :type :ok, :process 3, :f :txn, :value [[:append 1 2] [:r 3 [1 2]] [:r 4 nil]]}
//
// which reads it straight from the input buffer into the batch for the Builder
// (pipe.go), without the tree of nodes the general path builds. It accepts only input
// that the general path reads without error and to the same opRecord (same scalars,
// lines and columns), and gives up on anything else having consumed nothing: a
// comment, a discarded form, a tag, a list, a set, a nested map, a string with
// escapes, a symbol other than nil, a number that is not a plain integer of at most 18
// digits, an unknown :type, an :f other than :txn, a repeated key, a malformed
// micro-op, a newline inside a micro-op, the end of the buffer. The general path then
// reads the operation, and reports any error.

// fastAhead is how much input the fast path wants in the buffer: an operation that
// does not fit in it goes the general way.
const fastAhead = 1 << 16

// fastWindow bounds how far the fast path reads ahead, so that its operations stay far
// below the general path's size limits (maxOpBytes), however large the buffer grew.
const fastWindow = 1 << 22

// readAhead reads until fastAhead bytes are buffered or the input ends. It moves the
// buffered bytes to the front of the buffer only when there is no room after them, so
// rarely, however little each read returns.
func (s *scanner) readAhead() {
	for !s.eof && s.end-s.pos < fastAhead {
		if len(s.buf)-s.end < fastAhead {
			if !s.fill() { // moves fewer than fastAhead bytes, or grows the buffer
				return
			}
			continue
		}
		n, err := s.rd.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			if err != io.EOF {
				s.rerr = err
			}
			s.eof = true
		} else if n == 0 {
			return // no progress: the general path will try again
		}
	}
}

// delimTable[c] reports whether c ends a token (isDelim).
var delimTable = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isDelim(byte(c))
	}
	return t
}()

// fastInt reads the integer at b[i:] (an optional '-', 1 to 18 digits, then a
// delimiter) and returns it and the index after it; j < 0 if there is none.
func fastInt(b []byte, i int) (v int64, j int) {
	if i < len(b) && b[i] == '-' {
		v, j = fastUint(b, i+1)
		return -v, j
	}
	return fastUint(b, i)
}

// fastUint is fastInt without the sign. Up to 8 digits, it reads them 8 bytes at a
// time, without a branch a digit (SWAR: SIMD within a register).
func fastUint(b []byte, i int) (v int64, j int) {
	j = i
	if i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:]) // b[i] in the low byte
		// A byte is a digit (0x30 to 0x39) if its high nibble is 3 and stays 3 when 6
		// is added. A carry out of a byte that is not a digit spoils only later bytes.
		e := (x&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030) | ((x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030)
		n := bits.TrailingZeros64(e) >> 3 // leading digits
		if n == 0 {
			return 0, -1
		}
		// The digits' values, moved to the high bytes (leading zeros below them).
		d := (x - 0x3030303030303030) << (64 - 8*n)
		d = (d & 0x0F0F0F0F0F0F0F0F) * (10<<8 + 1) >> 8
		d = (d & 0x00FF00FF00FF00FF) * (100<<16 + 1) >> 16
		d = (d & 0x0000FFFF0000FFFF) * (10000<<32 + 1) >> 32
		v, j = int64(d), i+n
		if n < 8 {
			if !delimTable[b[j]] {
				return 0, -1
			}
			return v, j
		}
	}
	for j < len(b) && j-i < 18 {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		v = v*10 + int64(c)
		j++
	}
	if j == i || j == len(b) || !delimTable[b[j]] {
		return 0, -1
	}
	return v, j
}

// tokenEnd returns the index of the first delimiter at or after i, or -1.
func tokenEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		if delimTable[b[i]] {
			return i
		}
	}
	return -1
}

// fastAtom reads at b[i:] an integer, a keyword, a string without escapes or control
// characters (printed as written), or nil, and returns it and the index after it; j < 0
// if there is something else.
func fastAtom(b []byte, i int) (sc scalar, isNil bool, j int) {
	switch c := b[i]; {
	case c >= '0' && c <= '9' || c == '-':
		v, j := fastInt(b, i)
		return scalar{n: v}, false, j
	case c == ':':
		if j = tokenEnd(b, i); j-i >= 2 {
			return scalar{ts: int32(i), te: int32(j)}, false, j
		}
	case c == '"':
		for j = i + 1; j < len(b); j++ {
			d := b[j]
			if d == '"' {
				return scalar{ts: int32(i), te: int32(j + 1)}, false, j + 1
			}
			if d == '\\' || d < 0x20 {
				break
			}
		}
	case c == 'n':
		if j = tokenEnd(b, i); j-i == 3 && b[i+1] == 'i' && b[i+2] == 'l' {
			return scalar{}, true, j
		}
	}
	return scalar{}, false, -1
}

// fastKeyword reads the keyword at b[i:] and returns its name (after the colon) and the
// index after it; j < 0 if there is none.
func fastKeyword(b []byte, i int) (name []byte, j int) {
	if b[i] != ':' {
		return nil, -1
	}
	if j = tokenEnd(b, i); j-i < 2 {
		return nil, -1
	}
	return b[i+1 : j], j
}

// fastSpace skips whitespace and commas from b[i:]; it stops at anything else and at
// a newline (which the caller counts).
func fastSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', ',', '\t', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// The keys of an operation that the fast paths have seen.
const (
	seenType = 1 << iota
	seenF
	seenProcess
	seenIndex
	seenValue
)

// fastOp reads the operation map at the scanner's position (a '{') and hands it to
// the Builder. It returns false, having consumed nothing, if the operation does not
// have the shape it handles.
func (p *parser) fastOp() (bool, error) {
	s := p.s
	s.readAhead()
	// Indexes in b are below fastWindow, so they fit scalar.ts and te.
	b := s.buf[s.pos:min(s.end, s.pos+fastWindow)]
	base := s.base + int64(s.pos) // file offset of b[0]
	line, lineStart := s.line, s.lineStart
	r := &p.rec
	r.reset()
	r.line, r.col = line, int32(base-lineStart+1)
	// Micro-ops and reads go straight to the batch for the Builder (see push).
	bt := p.pipe.cur
	ms, rs := len(bt.mops), len(bt.reads)
	mops, reads := bt.mops, bt.reads
	hasText := false // some scalar is not an integer
	var seen uint8
	i := 1 // after '{'
	for {
		// A key, or the end of the map.
		for i = fastSpace(b, i); i < len(b) && b[i] == '\n'; i = fastSpace(b, i+1) {
			line, lineStart = line+1, base+int64(i)+1
		}
		if i == len(b) {
			return false, nil
		}
		if b[i] == '}' {
			i++
			break
		}
		key, j := fastKeyword(b, i)
		if j < 0 {
			return false, nil
		}
		for i = fastSpace(b, j); i < len(b) && b[i] == '\n'; i = fastSpace(b, i+1) {
			line, lineStart = line+1, base+int64(i)+1
		}
		if i == len(b) {
			return false, nil
		}
		var bit uint8
		switch string(key) {
		case "type":
			bit = seenType
			name, j := fastKeyword(b, i)
			t, ok := typeNamed(name)
			if !ok {
				return false, nil
			}
			r.typ, i = t, j
		case "f":
			bit = seenF
			name, j := fastKeyword(b, i)
			if string(name) != "txn" {
				return false, nil
			}
			i = j
		case "process":
			bit = seenProcess
			sc, isNil, j := fastAtom(b, i)
			if j < 0 {
				return false, nil
			}
			if !isNil {
				r.hasProcess, r.process = true, sc
			}
			i = j
		case "index":
			bit = seenIndex
			sc, isNil, j := fastAtom(b, i)
			if j < 0 || !isNil && sc.te != 0 {
				return false, nil
			}
			if !isNil {
				r.index = sc.n
			}
			i = j
		case "value":
			bit = seenValue
			if b[i] != '[' {
				_, isNil, j := fastAtom(b, i)
				if j < 0 || !isNil {
					return false, nil
				}
				i = j
				break
			}
			r.hasValue = true
			i++
			// Micro-ops, up to the closing ']'.
			for {
				for i = fastSpace(b, i); i < len(b) && b[i] == '\n'; i = fastSpace(b, i+1) {
					line, lineStart = line+1, base+int64(i)+1
				}
				if i == len(b) {
					return false, nil
				}
				if b[i] == ']' {
					i++
					break
				}
				if b[i] != '[' {
					return false, nil
				}
				m := rawMicro{line: line, col: int32(base + int64(i) - lineStart + 1)}
				i = fastSpace(b, i+1)
				if i+3 > len(b) {
					return false, nil
				}
				if b[i] == ':' && b[i+1] == 'r' && delimTable[b[i+2]] {
					i += 2
				} else if name, j := fastKeyword(b, i); string(name) == "append" {
					m.append = true
					i = j
				} else {
					return false, nil
				}
				i = fastSpace(b, i)
				if i == len(b) {
					return false, nil
				}
				var isNil bool
				if m.key, isNil, i = fastAtom(b, i); i < 0 || isNil {
					return false, nil
				}
				if i = fastSpace(b, i); i == len(b) {
					return false, nil
				}
				if m.append {
					if m.value, isNil, i = fastAtom(b, i); i < 0 || isNil {
						return false, nil
					}
				} else if b[i] == '[' {
					m.known = true
					m.rs = int32(len(reads) - rs)
					i++
					// The values read, up to the closing ']'.
					for {
						if i = fastSpace(b, i); i == len(b) {
							return false, nil
						}
						c := b[i]
						if c == ']' {
							i++
							break
						}
						if c-'0' <= 9 {
							// The common case: a non-negative integer.
							if v, j := fastUint(b, i); j >= 0 {
								reads = append(reads, scalar{n: v})
								i = j
								continue
							}
						}
						sc, isNil, j := fastAtom(b, i)
						if j < 0 || isNil {
							return false, nil
						}
						hasText = hasText || sc.te != 0
						reads = append(reads, sc)
						i = j
					}
					m.re = int32(len(reads) - rs)
				} else if _, isNil, i = fastAtom(b, i); i < 0 || !isNil {
					return false, nil
				}
				if i = fastSpace(b, i); i == len(b) || b[i] != ']' {
					return false, nil
				}
				i++
				hasText = hasText || m.key.te|m.value.te != 0
				mops = append(mops, m)
			}
		default:
			// Another key (:time, say): its value must be an atom.
			_, _, j := fastAtom(b, i)
			if j < 0 {
				return false, nil
			}
			i = j
		}
		if seen&bit != 0 {
			return false, nil
		}
		seen |= bit
	}
	if seen&seenType == 0 {
		return false, nil
	}
	bt.mops, bt.reads = mops, reads
	s.pos += i
	s.line, s.lineStart = line, lineStart
	hasText = hasText || r.hasProcess && r.process.te != 0
	return true, p.push(r, ms, rs, b, hasText, base+int64(i))
}

// The same for a JSON operation,
//
//	{"index":3,"time":159,"type":"ok","process":3,"f":"txn","value":[["append",1,2],["r",3,[1,2]],["r",4,null]]}
//
// with names written as strings or as keywords (":ok"); it gives up on a string with
// escapes, a number that is not a plain integer of at most 18 digits, true and false,
// a nested object, and all that fastOp gives up on.

// fastString reads the string at b[i:] (a '"') if it has no escapes or control
// characters, and returns the bounds of its contents and the index after it; j < 0 if
// there is none.
func fastString(b []byte, i int) (s, e, j int) {
	for j = i + 1; j < len(b); j++ {
		d := b[j]
		if d == '"' {
			return i + 1, j, j + 1
		}
		if d == '\\' || d < 0x20 {
			break
		}
	}
	return 0, 0, -1
}

// jsonName returns the name written in the string at b[i:] (without the leading
// colon of a keyword, as parser.name), and the index after it; j < 0 if there is none.
func jsonName(b []byte, i int) (name []byte, j int) {
	if b[i] != '"' {
		return nil, -1
	}
	s, e, j := fastString(b, i)
	if j < 0 {
		return nil, -1
	}
	if e-s > 1 && b[s] == ':' {
		s++
	}
	return b[s:e], j
}

// jsonAtom reads at b[i:] an integer, a string without escapes or control characters
// (a keyword if it reads ":name", as scanner.jsonValue), or null, and returns it and
// the index after it; j < 0 if there is something else.
func jsonAtom(b []byte, i int) (sc scalar, isNil bool, j int) {
	switch c := b[i]; {
	case c >= '0' && c <= '9' || c == '-':
		v, j := fastInt(b, i)
		return scalar{n: v}, false, j
	case c == '"':
		s, e, j := fastString(b, i)
		if j < 0 {
			return scalar{}, false, -1
		}
		if e-s > 1 && b[s] == ':' && tokenEnd(b[:e], s+1) < 0 {
			return scalar{ts: int32(s), te: int32(e)}, false, j // a keyword: ":name"
		}
		return scalar{ts: int32(i), te: int32(j)}, false, j
	case c == 'n':
		if j = tokenEnd(b, i); j-i == 4 && string(b[i:j]) == "null" {
			return scalar{}, true, j
		}
	}
	return scalar{}, false, -1
}

// jsonColon skips whitespace and commas from b[i:], then expects a colon and skips
// the whitespace after it; it returns -1 if there is no colon (or a newline).
func jsonColon(b []byte, i int) int {
	if i = fastSpace(b, i); i == len(b) || b[i] != ':' {
		return -1
	}
	return fastSpace(b, i+1)
}

// fastJSONOp is fastOp for JSON.
func (p *parser) fastJSONOp() (bool, error) {
	s := p.s
	s.readAhead()
	b := s.buf[s.pos:min(s.end, s.pos+fastWindow)]
	base := s.base + int64(s.pos)
	line, lineStart := s.line, s.lineStart
	r := &p.rec
	r.reset()
	r.line, r.col = line, int32(base-lineStart+1)
	// Micro-ops and reads go straight to the batch for the Builder (see push).
	bt := p.pipe.cur
	ms, rs := len(bt.mops), len(bt.reads)
	mops, reads := bt.mops, bt.reads
	hasText := false // some scalar is not an integer
	var seen uint8
	i := 1 // after '{'
	for {
		for i = fastSpace(b, i); i < len(b) && b[i] == '\n'; i = fastSpace(b, i+1) {
			line, lineStart = line+1, base+int64(i)+1
		}
		if i == len(b) {
			return false, nil
		}
		if b[i] == '}' {
			i++
			break
		}
		key, j := jsonName(b, i)
		if j < 0 {
			return false, nil
		}
		if i = jsonColon(b, j); i < 0 || i == len(b) {
			return false, nil
		}
		var bit uint8
		switch string(key) {
		case "type":
			bit = seenType
			name, j := jsonName(b, i)
			t, ok := typeNamed(name)
			if !ok {
				return false, nil
			}
			r.typ, i = t, j
		case "f":
			bit = seenF
			name, j := jsonName(b, i)
			if string(name) != "txn" {
				return false, nil
			}
			i = j
		case "process":
			bit = seenProcess
			sc, isNil, j := jsonAtom(b, i)
			if j < 0 {
				return false, nil
			}
			if !isNil {
				r.hasProcess, r.process = true, sc
			}
			i = j
		case "index":
			bit = seenIndex
			sc, isNil, j := jsonAtom(b, i)
			if j < 0 || !isNil && sc.te != 0 {
				return false, nil
			}
			if !isNil {
				r.index = sc.n
			}
			i = j
		case "value":
			bit = seenValue
			if b[i] != '[' {
				_, isNil, j := jsonAtom(b, i)
				if j < 0 || !isNil {
					return false, nil
				}
				i = j
				break
			}
			r.hasValue = true
			i++
			for {
				for i = fastSpace(b, i); i < len(b) && b[i] == '\n'; i = fastSpace(b, i+1) {
					line, lineStart = line+1, base+int64(i)+1
				}
				if i == len(b) {
					return false, nil
				}
				if b[i] == ']' {
					i++
					break
				}
				if b[i] != '[' {
					return false, nil
				}
				m := rawMicro{line: line, col: int32(base + int64(i) - lineStart + 1)}
				if i = fastSpace(b, i+1); i == len(b) {
					return false, nil
				}
				name, j := jsonName(b, i)
				switch string(name) {
				case "append":
					m.append = true
				case "r":
				default:
					return false, nil
				}
				if i = fastSpace(b, j); i == len(b) {
					return false, nil
				}
				var isNil bool
				if m.key, isNil, i = jsonAtom(b, i); i < 0 || isNil {
					return false, nil
				}
				if i = fastSpace(b, i); i == len(b) {
					return false, nil
				}
				if m.append {
					if m.value, isNil, i = jsonAtom(b, i); i < 0 || isNil {
						return false, nil
					}
				} else if b[i] == '[' {
					m.known = true
					m.rs = int32(len(reads) - rs)
					i++
					for {
						if i = fastSpace(b, i); i == len(b) {
							return false, nil
						}
						c := b[i]
						if c == ']' {
							i++
							break
						}
						if c-'0' <= 9 {
							if v, j := fastUint(b, i); j >= 0 {
								reads = append(reads, scalar{n: v})
								i = j
								continue
							}
						}
						sc, isNil, j := jsonAtom(b, i)
						if j < 0 || isNil {
							return false, nil
						}
						hasText = hasText || sc.te != 0
						reads = append(reads, sc)
						i = j
					}
					m.re = int32(len(reads) - rs)
				} else if _, isNil, i = jsonAtom(b, i); i < 0 || !isNil {
					return false, nil
				}
				if i = fastSpace(b, i); i == len(b) || b[i] != ']' {
					return false, nil
				}
				i++
				hasText = hasText || m.key.te|m.value.te != 0
				mops = append(mops, m)
			}
		default:
			// Another key ("time", say): its value must be an atom.
			_, _, j := jsonAtom(b, i)
			if j < 0 {
				return false, nil
			}
			i = j
		}
		if seen&bit != 0 {
			return false, nil
		}
		seen |= bit
	}
	if seen&seenType == 0 {
		return false, nil
	}
	bt.mops, bt.reads = mops, reads
	s.pos += i
	s.line, s.lineStart = line, lineStart
	hasText = hasText || r.hasProcess && r.process.te != 0
	return true, p.push(r, ms, rs, b, hasText, base+int64(i))
}
