package history

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// The lexers read bytes from a large buffer and build, for one operation at a time, a
// small tree of nodes in reusable slices (no allocation per operation once warm).

type nodeKind uint8

const (
	nNil nodeKind = iota
	nBool
	nInt
	nString  // text: printed form, JSON-quoted
	nKeyword // text: ":name"
	nSymbol
	nOther // floats, big integers, characters, ...: text as written
	nVector
	nList
	nSet
	nMap    // kids: key, value, key, value, ...
	nTagged // text: the tag; kids: the tagged value
)

type node struct {
	kind      nodeKind
	line, col int32
	n         int64 // nInt
	ts, te    int32 // printed form in tree.text (scalars), tag (nTagged)
	ks, ke    int32 // children in tree.kids (collections, nTagged)
}

type tree struct {
	nodes []node
	kids  []int32
	text  []byte
	stack []int32 // children of the collections being read
}

func (t *tree) reset() {
	t.nodes = t.nodes[:0]
	t.kids = t.kids[:0]
	t.text = t.text[:0]
	t.stack = t.stack[:0]
}

func (t *tree) textOf(n *node) []byte { return t.text[n.ts:n.te] }

func (t *tree) children(n *node) []int32 { return t.kids[n.ks:n.ke] }

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 1000

// maxOpBytes bounds the scratch space of one operation (its strings and nodes).
const maxOpBytes = 1 << 30

const bufSize = 1 << 20

type scanner struct {
	rd        io.Reader
	buf       []byte
	pos, end  int
	base      int64 // file offset of buf[0]
	line      int32
	lineStart int64 // file offset of the current line's first byte
	eof       bool
	rerr      error
	file      string
	json      bool
	depth     int
	t         tree
}

func newScanner(r io.Reader, file string) *scanner {
	size := bufSize
	// Small in-memory inputs (tests, fuzzing) need no megabyte buffer.
	if l, ok := r.(interface{ Len() int }); ok && l.Len() < size {
		size = max(l.Len()+1, 4096)
	}
	return &scanner{rd: r, buf: make([]byte, size), line: 1, file: file}
}

// fill reads more input; it returns false when none is left.
func (s *scanner) fill() bool {
	if s.eof {
		return false
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.end = n
		s.pos = 0
	}
	if s.end == len(s.buf) {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for tries := 0; ; tries++ {
		n, err := s.rd.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			if err != io.EOF {
				s.rerr = err
			}
			s.eof = true
			return n > 0
		}
		if n > 0 {
			return true
		}
		if tries > 100 {
			s.rerr = io.ErrNoProgress
			s.eof = true
			return false
		}
	}
}

// peek returns the next byte, or -1 at the end of input.
func (s *scanner) peek() int {
	if s.pos < s.end {
		return int(s.buf[s.pos])
	}
	if !s.fill() {
		return -1
	}
	return int(s.buf[s.pos])
}

// peekAt returns the byte i positions ahead, or -1.
func (s *scanner) peekAt(i int) int {
	for s.pos+i >= s.end {
		if !s.fill() {
			return -1
		}
	}
	return int(s.buf[s.pos+i])
}

func (s *scanner) col() int32 { return int32(s.base + int64(s.pos) - s.lineStart + 1) }

func (s *scanner) newline() {
	s.line++
	s.lineStart = s.base + int64(s.pos)
}

// errHere reports a problem at the current position; a read error takes precedence.
func (s *scanner) errHere(format string, args ...any) error {
	if s.rerr != nil {
		return fmt.Errorf("%s: %w", s.file, s.rerr)
	}
	return &ParseError{File: s.file, Line: int(s.line), Col: int(s.col()), Msg: fmt.Sprintf(format, args...)}
}

// found describes the next input for messages.
func (s *scanner) found() string {
	c := s.peek()
	if c < 0 {
		return "end of file"
	}
	if c < utf8.RuneSelf {
		return strconv.Quote(string(rune(c)))
	}
	var b [utf8.UTFMax]byte
	n := 0
	for n < utf8.UTFMax {
		d := s.peekAt(n)
		if d < 0 {
			break
		}
		b[n] = byte(d)
		n++
		if utf8.FullRune(b[:n]) {
			break
		}
	}
	return strconv.Quote(string(b[:n]))
}

// skipSpace skips whitespace (commas included, in both formats), and in EDN also
// ; comments and #_ discarded forms.
func (s *scanner) skipSpace() error {
	for {
		for s.pos < s.end {
			switch s.buf[s.pos] {
			case ' ', '\t', '\r', ',':
				s.pos++
			case '\n':
				s.pos++
				s.newline()
			case ';':
				if s.json {
					return nil
				}
				s.skipComment()
			case '#':
				if s.json || s.peekAt(1) != '_' {
					return nil
				}
				s.pos += 2
				if err := s.enter(); err != nil {
					return err
				}
				if err := s.skipSpace(); err != nil {
					return err
				}
				mark := len(s.t.nodes)
				kmark, tmark := len(s.t.kids), len(s.t.text)
				if _, err := s.value(); err != nil {
					return err
				}
				s.depth--
				s.t.nodes, s.t.kids, s.t.text = s.t.nodes[:mark], s.t.kids[:kmark], s.t.text[:tmark]
			default:
				return nil
			}
		}
		if !s.fill() {
			return nil
		}
	}
}

func (s *scanner) skipComment() {
	for {
		for s.pos < s.end {
			if s.buf[s.pos] == '\n' {
				return
			}
			s.pos++
		}
		if !s.fill() {
			return
		}
	}
}

func (s *scanner) addNode(n node) (int32, error) {
	if len(s.t.nodes) >= maxOpBytes/32 || len(s.t.text) >= maxOpBytes {
		return 0, s.errHere("operation too large")
	}
	s.t.nodes = append(s.t.nodes, n)
	return int32(len(s.t.nodes) - 1), nil
}

// value reads one value at the current position (after skipSpace) and returns its node.
func (s *scanner) value() (int32, error) {
	if s.json {
		return s.jsonValue()
	}
	return s.ednValue()
}

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', '(', ')', '[', ']', '{', '}', '"', ';':
		return true
	}
	return false
}

// token appends the bytes up to the next delimiter to t.text.
func (s *scanner) token() {
	for {
		start := s.pos
		for s.pos < s.end && !isDelim(s.buf[s.pos]) {
			s.pos++
		}
		s.t.text = append(s.t.text, s.buf[start:s.pos]...)
		if s.pos < s.end || !s.fill() {
			return
		}
	}
}

// parseInt parses an optionally signed decimal integer.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

func (s *scanner) ednValue() (int32, error) {
	line, col := s.line, s.col()
	c := s.peek()
	switch {
	case c < 0:
		return 0, s.errHere("expected a value, found end of file")
	case c == '{':
		s.pos++
		return s.collection(nMap, '}', line, col)
	case c == '[':
		s.pos++
		return s.collection(nVector, ']', line, col)
	case c == '(':
		s.pos++
		return s.collection(nList, ')', line, col)
	case c == '"':
		s.pos++
		return s.str(line, col)
	case c == '#':
		d := s.peekAt(1)
		if d == '{' {
			s.pos += 2
			return s.collection(nSet, '}', line, col)
		}
		// A tagged value: #tag value.
		s.pos++
		ts := int32(len(s.t.text))
		s.token()
		te := int32(len(s.t.text))
		if te == ts {
			return 0, s.errHere("expected a tag after \"#\", found %s", s.found())
		}
		if s.t.text[ts] == '#' {
			// ##Inf, ##NaN: a symbolic value, not a tag.
			s.t.text = append(s.t.text[:ts+1], s.t.text[ts:te]...)
			s.t.text[ts] = '#'
			return s.addNode(node{kind: nOther, line: line, col: col, ts: ts, te: te + 1})
		}
		if err := s.skipSpace(); err != nil {
			return 0, err
		}
		if err := s.enter(); err != nil {
			return 0, err
		}
		v, err := s.ednValue()
		s.depth--
		if err != nil {
			return 0, err
		}
		ks := int32(len(s.t.kids))
		s.t.kids = append(s.t.kids, v)
		return s.addNode(node{kind: nTagged, line: line, col: col, ts: ts, te: te, ks: ks, ke: ks + 1})
	case c == ')' || c == ']' || c == '}':
		return 0, s.errHere("expected a value, found %s", s.found())
	case c == '\\':
		// A character literal: \a, \newline, \u0041, and \( etc.
		ts := int32(len(s.t.text))
		s.t.text = append(s.t.text, '\\')
		s.pos++
		if d := s.peek(); d >= 0 {
			s.t.text = append(s.t.text, byte(d))
			s.pos++
			s.token()
		} else {
			return 0, s.errHere("expected a character after \"\\\", found end of file")
		}
		return s.addNode(node{kind: nOther, line: line, col: col, ts: ts, te: int32(len(s.t.text))})
	}
	if c >= '0' && c <= '9' {
		if v, ok := s.fastInt(); ok {
			return s.addNode(node{kind: nInt, line: line, col: col, n: v})
		}
	}
	ts := int32(len(s.t.text))
	s.token()
	tok := s.t.text[ts:]
	if len(tok) == 0 {
		return 0, s.errHere("expected a value, found %s", s.found())
	}
	n := node{line: line, col: col, ts: ts, te: int32(len(s.t.text))}
	switch {
	case tok[0] == ':':
		if len(tok) == 1 {
			return 0, &ParseError{File: s.file, Line: int(line), Col: int(col), Msg: "expected a keyword name after \":\""}
		}
		n.kind = nKeyword
	case tok[0] >= '0' && tok[0] <= '9' || (tok[0] == '-' || tok[0] == '+') && len(tok) > 1 && tok[1] >= '0' && tok[1] <= '9':
		if v, ok := parseInt(tok); ok {
			n.kind, n.n = nInt, v
			s.t.text = s.t.text[:ts]
			n.te = ts
		} else {
			n.kind = nOther
		}
	case string(tok) == "nil":
		n.kind = nNil
	case string(tok) == "true" || string(tok) == "false":
		n.kind = nBool
	default:
		n.kind = nSymbol
	}
	return s.addNode(n)
}

// fastInt reads a small unsigned integer that lies entirely in the buffer, the common
// case, without copying it; it consumes nothing and returns false otherwise.
func (s *scanner) fastInt() (int64, bool) {
	var v int64
	i := s.pos
	for ; i < s.end && i-s.pos < 18; i++ {
		c := s.buf[i]
		if c < '0' || c > '9' {
			if !isDelim(c) {
				return 0, false
			}
			s.pos = i
			return v, true
		}
		v = v*10 + int64(c-'0')
	}
	return 0, false
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxDepth {
		return s.errHere("values nested more than %d deep", maxDepth)
	}
	return nil
}

// collection reads the elements of a vector, list, set or EDN map up to close.
func (s *scanner) collection(kind nodeKind, close byte, line, col int32) (int32, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	mark := len(s.t.stack)
	for {
		if err := s.skipSpace(); err != nil {
			return 0, err
		}
		c := s.peek()
		if c == int(close) {
			s.pos++
			break
		}
		if c < 0 {
			return 0, s.errHere("expected a value or %q (to close the one opened at %d:%d), found end of file", string(close), line, col)
		}
		if c == ')' || c == ']' || c == '}' {
			return 0, s.errHere("expected a value or %q (to close the one opened at %d:%d), found %s", string(close), line, col, s.found())
		}
		v, err := s.ednValue()
		if err != nil {
			return 0, err
		}
		s.t.stack = append(s.t.stack, v)
	}
	elems := s.t.stack[mark:]
	if kind == nMap && len(elems)%2 != 0 {
		return 0, &ParseError{File: s.file, Line: int(line), Col: int(col), Msg: "map has a key without a value"}
	}
	s.depth--
	ks := int32(len(s.t.kids))
	s.t.kids = append(s.t.kids, elems...)
	s.t.stack = s.t.stack[:mark]
	return s.addNode(node{kind: kind, line: line, col: col, ks: ks, ke: int32(len(s.t.kids))})
}

// str reads a string body (the opening quote is consumed) and stores its canonical
// printed form: JSON-quoted, escaping only ", \ and control characters.
func (s *scanner) str(line, col int32) (int32, error) {
	ts := int32(len(s.t.text))
	s.t.text = append(s.t.text, '"')
	for {
		start := s.pos
		for s.pos < s.end {
			c := s.buf[s.pos]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			s.pos++
		}
		s.t.text = append(s.t.text, s.buf[start:s.pos]...)
		if len(s.t.text) >= maxOpBytes {
			return 0, s.errHere("string too long")
		}
		if s.pos == s.end {
			if !s.fill() {
				return 0, &ParseError{File: s.file, Line: int(line), Col: int(col), Msg: "string never closed (expected '\"' before the end of file)"}
			}
			continue
		}
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			s.t.text = append(s.t.text, '"')
			return s.addNode(node{kind: nString, line: line, col: col, ts: ts, te: int32(len(s.t.text))})
		case c < 0x20:
			if s.json {
				return 0, s.errHere("control character %q in a string (expected it escaped)", rune(c))
			}
			s.pos++
			if c == '\n' {
				s.newline()
			}
			s.appendEscaped(rune(c))
		default: // backslash
			if err := s.escape(); err != nil {
				return 0, err
			}
		}
	}
}

// appendEscaped appends r to t.text as it appears inside a canonical quoted string.
func (s *scanner) appendEscaped(r rune) {
	switch r {
	case '"':
		s.t.text = append(s.t.text, '\\', '"')
	case '\\':
		s.t.text = append(s.t.text, '\\', '\\')
	case '\n':
		s.t.text = append(s.t.text, '\\', 'n')
	case '\t':
		s.t.text = append(s.t.text, '\\', 't')
	case '\r':
		s.t.text = append(s.t.text, '\\', 'r')
	default:
		if r < 0x20 || r == 0x7f {
			s.t.text = append(s.t.text, '\\', 'u', '0', '0', "0123456789abcdef"[r>>4], "0123456789abcdef"[r&15])
		} else {
			s.t.text = utf8.AppendRune(s.t.text, r)
		}
	}
}

// escape reads one backslash escape inside a string.
func (s *scanner) escape() error {
	s.pos++ // the backslash
	c := s.peek()
	if c < 0 {
		return s.errHere("expected an escape after \"\\\", found end of file")
	}
	s.pos++
	switch c {
	case '"', '\\', '/':
		s.appendEscaped(rune(c))
	case 'n':
		s.appendEscaped('\n')
	case 't':
		s.appendEscaped('\t')
	case 'r':
		s.appendEscaped('\r')
	case 'b':
		s.appendEscaped('\b')
	case 'f':
		s.appendEscaped('\f')
	case 'u':
		r, err := s.hex4()
		if err != nil {
			return err
		}
		if r >= 0xD800 && r < 0xDC00 && s.peek() == '\\' && s.peekAt(1) == 'u' {
			s.pos += 2
			lo, err := s.hex4()
			if err != nil {
				return err
			}
			if lo >= 0xDC00 && lo < 0xE000 {
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			} else {
				s.appendEscaped(utf8.RuneError)
				r = lo
			}
		}
		if r >= 0xD800 && r < 0xE000 {
			r = utf8.RuneError
		}
		s.appendEscaped(r)
	default:
		s.pos--
		return s.errHere("expected an escape like \\n, \\\" or \\u0041 in a string, found %s", s.found())
	}
	return nil
}

func (s *scanner) hex4() (rune, error) {
	var r rune
	for i := 0; i < 4; i++ {
		c := s.peek()
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, s.errHere("expected 4 hexadecimal digits after \\u, found %s", s.found())
		}
		r = r<<4 | rune(d)
		s.pos++
	}
	return r, nil
}

func (s *scanner) jsonValue() (int32, error) {
	line, col := s.line, s.col()
	c := s.peek()
	switch {
	case c < 0:
		return 0, s.errHere("expected a JSON value, found end of file")
	case c == '{':
		s.pos++
		return s.jsonObject(line, col)
	case c == '[':
		s.pos++
		return s.jsonArray(line, col)
	case c == '"':
		s.pos++
		v, err := s.str(line, col)
		if err != nil {
			return 0, err
		}
		// A JSON string ":x" stands for the keyword :x.
		n := &s.t.nodes[v]
		if txt := s.t.textOf(n); len(txt) > 3 && txt[1] == ':' && keywordName(txt[2:len(txt)-1]) {
			copy(txt, txt[1:len(txt)-1])
			n.te -= 2
			s.t.text = s.t.text[:n.te]
			n.kind = nKeyword
		}
		return v, nil
	case c == '-' || c >= '0' && c <= '9':
		if c != '-' {
			if v, ok := s.fastInt(); ok {
				return s.addNode(node{kind: nInt, line: line, col: col, n: v})
			}
		}
		ts := int32(len(s.t.text))
		s.token()
		tok := s.t.text[ts:]
		n := node{line: line, col: col, ts: ts, te: int32(len(s.t.text))}
		if v, ok := parseInt(tok); ok && tok[0] != '+' {
			n.kind, n.n = nInt, v
			s.t.text = s.t.text[:ts]
			n.te = ts
		} else if jsonNumber(tok) {
			n.kind = nOther
		} else {
			return 0, &ParseError{File: s.file, Line: int(line), Col: int(col), Msg: fmt.Sprintf("expected a number, found %q", tok)}
		}
		return s.addNode(n)
	}
	ts := int32(len(s.t.text))
	s.token()
	tok := s.t.text[ts:]
	n := node{line: line, col: col, ts: ts, te: int32(len(s.t.text))}
	switch string(tok) {
	case "null":
		n.kind = nNil
		s.t.text = append(s.t.text[:ts], "nil"...)
		n.te = int32(len(s.t.text))
	case "true", "false":
		n.kind = nBool
	default:
		s.t.text = s.t.text[:ts]
		return 0, &ParseError{File: s.file, Line: int(line), Col: int(col), Msg: "expected a JSON value, found " + s.describeToken(tok)}
	}
	return s.addNode(n)
}

func (s *scanner) describeToken(tok []byte) string {
	if len(tok) == 0 {
		return s.found()
	}
	if len(tok) > 40 {
		tok = tok[:40]
	}
	return strconv.Quote(string(tok))
}

// keywordName reports whether b can be a keyword's name (after the colon).
func keywordName(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if isDelim(c) || c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}

func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if !digits() {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(b)
}

func (s *scanner) jsonArray(line, col int32) (int32, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	mark := len(s.t.stack)
	for {
		if err := s.skipSpace(); err != nil {
			return 0, err
		}
		c := s.peek()
		if c == ']' {
			s.pos++
			break
		}
		if c < 0 || c == '}' || c == ')' {
			return 0, s.errHere("expected a value or \"]\" (to close the array opened at %d:%d), found %s", line, col, s.found())
		}
		v, err := s.jsonValue()
		if err != nil {
			return 0, err
		}
		s.t.stack = append(s.t.stack, v)
	}
	s.depth--
	ks := int32(len(s.t.kids))
	s.t.kids = append(s.t.kids, s.t.stack[mark:]...)
	s.t.stack = s.t.stack[:mark]
	return s.addNode(node{kind: nVector, line: line, col: col, ks: ks, ke: int32(len(s.t.kids))})
}

func (s *scanner) jsonObject(line, col int32) (int32, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	mark := len(s.t.stack)
	for {
		if err := s.skipSpace(); err != nil {
			return 0, err
		}
		c := s.peek()
		if c == '}' {
			s.pos++
			break
		}
		if c != '"' {
			return 0, s.errHere("expected a string key or \"}\" (to close the object opened at %d:%d), found %s", line, col, s.found())
		}
		k, err := s.jsonValue()
		if err != nil {
			return 0, err
		}
		if err := s.skipSpace(); err != nil {
			return 0, err
		}
		if s.peek() != ':' {
			return 0, s.errHere("expected \":\" after an object key, found %s", s.found())
		}
		s.pos++
		if err := s.skipSpace(); err != nil {
			return 0, err
		}
		v, err := s.jsonValue()
		if err != nil {
			return 0, err
		}
		s.t.stack = append(s.t.stack, k, v)
	}
	s.depth--
	ks := int32(len(s.t.kids))
	s.t.kids = append(s.t.kids, s.t.stack[mark:]...)
	s.t.stack = s.t.stack[:mark]
	return s.addNode(node{kind: nMap, line: line, col: col, ks: ks, ke: int32(len(s.t.kids))})
}
