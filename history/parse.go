package history

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
)

// ParseEDN reads a Jepsen list-append history in EDN: one operation map per line (or
// spread over lines), or one vector or list of operation maps. Operations whose :f is
// not :txn (nemesis operations, say) are counted in History.Events and otherwise
// skipped. source names the input in messages.
func ParseEDN(r io.Reader, source string) (*History, error) {
	return parse(newScanner(r, source), false, inputSize(r), nil)
}

// ParseJSON reads the same history as JSON: one object per line, or one array of
// objects. Names ("ok", "append", "r") may also be written as keywords (":ok"); a
// string key or value ":x" is the keyword :x.
func ParseJSON(r io.Reader, source string) (*History, error) {
	return parse(newScanner(r, source), true, inputSize(r), nil)
}

// Parse reads a history in EDN or JSON, telling them apart by the first operation:
// keyword keys (:type) mean EDN, string keys ("type") mean JSON.
func Parse(r io.Reader, source string) (*History, error) {
	return ParseStop(r, source, nil)
}

// ParseStop is Parse that asks stop (when not nil) every few hundred operations whether
// to give up, and then returns a *StoppedError (a caller's time or memory limit: a
// gigabyte of history takes seconds to read).
func ParseStop(r io.Reader, source string, stop func() bool) (*History, error) {
	size := inputSize(r)
	s := newScanner(r, source)
	s.json = looksJSON(s)
	return parse(s, s.json, size, stop)
}

// ParseFile parses the history in the file at path ("-" is standard input).
func ParseFile(path string) (*History, error) {
	return ParseFileStop(path, nil)
}

// ParseFileStop is ParseFile with ParseStop's stop.
// A gzip-compressed file (or standard input) is read through gzip, whatever its name:
// recorded histories are often kept compressed.
func ParseFileStop(path string, stop func() bool) (*History, error) {
	if path == "-" {
		br := bufio.NewReaderSize(os.Stdin, 1<<20)
		if magic, _ := br.Peek(2); isGzip(magic) {
			return parseGzip(br, "<stdin>", stop)
		}
		return ParseStop(br, "<stdin>", stop)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var magic [2]byte
	n, _ := io.ReadFull(f, magic[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if isGzip(magic[:n]) {
		return parseGzip(bufio.NewReaderSize(f, 1<<20), path, stop)
	}
	return ParseStop(f, path, stop)
}

// isGzip reports whether magic starts a gzip stream.
func isGzip(magic []byte) bool { return len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b }

// parseGzip parses the gzip-compressed history r; a damaged stream is an error naming
// source.
func parseGzip(r io.Reader, source string, stop func() bool) (*History, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable gzip file: %w", source, err)
	}
	defer zr.Close()
	return ParseStop(zr, source, stop)
}

// StoppedError is a parse given up because its stop hook said so: nothing is known of
// the history (a part of it is no history to check).
type StoppedError struct {
	File string
	Line int // the line the parse had reached
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("%s: parsing stopped at line %d", e.File, e.Line)
}

// inputSize returns the size of r's data if it is known cheaply, else -1.
func inputSize(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case *os.File:
		if st, err := r.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size()
		}
	}
	return -1
}

// looksJSON peeks at the start of the input without consuming anything that matters:
// it skips whitespace, then looks past "[" and "{" for the first key.
func looksJSON(s *scanner) bool {
	s.json = true // whitespace only: no comments or discards
	if err := s.skipSpace(); err != nil {
		return false
	}
	s.json = false
	i := 0
	skip := func() {
		for {
			c := s.peekAt(i)
			if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' {
				i++
				continue
			}
			return
		}
	}
	if c := s.peekAt(i); c == '[' {
		i++
		skip()
	}
	if s.peekAt(i) != '{' {
		return false
	}
	i++
	skip()
	return s.peekAt(i) == '"'
}

func parse(s *scanner, json bool, size int64, stop func() bool) (*History, error) {
	s.json = json
	b := NewBuilder(s.file)
	b.reserve(size)
	p := parser{s: s, b: b, stop: stop}
	p.startPipe()
	err := p.run()
	if berr := p.closePipe(); berr != nil {
		return nil, berr
	}
	if err != nil {
		return nil, err
	}
	if s.rerr != nil {
		return nil, fmt.Errorf("%s: %w", s.file, s.rerr)
	}
	// The stop hook holds to the end of a parse that asked it (one too small to ask
	// it takes no time).
	ask := func() bool { return p.asked && p.stop() }
	if p.stop != nil && ask() {
		return nil, p.stopped()
	}
	h, ok, err := b.finish(ask)
	if !ok {
		return nil, p.stopped()
	}
	return h, err
}

// stopped is the error of a parse its stop hook ended, at the last line it began.
func (p *parser) stopped() *StoppedError {
	line := int(p.s.line)
	if p.s.col() == 1 && line > 1 { // at the end, after the last newline
		line--
	}
	return &StoppedError{File: p.s.file, Line: line}
}

// noFastPath turns the fast path off (fast.go), for tests comparing the two paths.
var noFastPath = false

type parser struct {
	s    *scanner
	b    *Builder
	rec  opRecord // scratch
	pipe pipe     // to the Builder
	// stop, when not nil, is asked at each full batch (pipe.go) whether to give up;
	// asked: it was.
	stop  func() bool
	asked bool
}

func (p *parser) run() error {
	s := p.s
	if err := s.skipSpace(); err != nil {
		return err
	}
	closer := -1
	var openLine, openCol int32
	if c := s.peek(); c == '[' || c == '(' && !s.json {
		// One collection of operations spanning the file.
		openLine, openCol = s.line, s.col()
		closer = ']'
		if c == '(' {
			closer = ')'
		}
		s.pos++
	}
	for {
		if err := s.skipSpace(); err != nil {
			return err
		}
		c := s.peek()
		if c < 0 {
			if closer >= 0 {
				return s.errHere("expected %q (to close the one opened at %d:%d), found end of file", string(rune(closer)), openLine, openCol)
			}
			return nil
		}
		if c == closer {
			s.pos++
			if err := s.skipSpace(); err != nil {
				return err
			}
			if s.peek() >= 0 {
				return s.errHere("expected the end of file after the collection of operations, found %s", s.found())
			}
			return nil
		}
		if c != '{' && (s.json || c != '#') {
			return s.errHere("expected an operation map like {%s}, found %s", p.example(), s.found())
		}
		if c == '{' && !noFastPath {
			fast := p.fastOp
			if s.json {
				fast = p.fastJSONOp
			}
			ok, err := fast()
			if err != nil {
				return err
			}
			if ok {
				continue
			}
		}
		s.t.reset()
		s.depth = 0
		root, err := s.value()
		if err != nil {
			return err
		}
		if err := p.op(root); err != nil {
			return err
		}
	}
}

func (p *parser) example() string {
	if p.s.json {
		return `"type":"invoke", "process":0, "f":"txn", "value":[...]`
	}
	return ":type :invoke, :process 0, :f :txn, :value [...]"
}

// errAt reports a problem with node n.
func (p *parser) errAt(n *node, format string, args ...any) error {
	return &ParseError{File: p.s.file, Line: int(n.line), Col: int(n.col), Msg: fmt.Sprintf(format, args...)}
}

// describe names node n for messages: its text for atoms, its kind for collections.
func (p *parser) describe(n *node) string {
	t := &p.s.t
	switch n.kind {
	case nInt:
		return strconv.FormatInt(n.n, 10)
	case nVector:
		return "a vector [...]"
	case nList:
		return "a list (...)"
	case nSet:
		return "a set #{...}"
	case nMap:
		return "a map {...}"
	case nTagged:
		return "a tagged value #" + string(t.textOf(n))
	}
	txt := t.textOf(n)
	if len(txt) > 40 {
		return string(txt[:37]) + "..."
	}
	return string(txt)
}

// name returns the name of a keyword or string node (":ok" and "ok" give "ok"), or nil.
func (p *parser) name(n *node) []byte {
	txt := p.s.t.textOf(n)
	switch n.kind {
	case nKeyword:
		return txt[1:]
	case nString:
		txt = txt[1 : len(txt)-1]
		if len(txt) > 1 && txt[0] == ':' {
			txt = txt[1:]
		}
		return txt
	}
	return nil
}

func (p *parser) scalarOf(n *node) scalar {
	if n.kind == nInt {
		return scalar{n: n.n}
	}
	return scalar{ts: n.ts, te: n.te}
}

func isAtom(n *node) bool {
	return n.kind != nNil && n.kind < nVector
}

// op interprets one operation map and feeds it to the Builder.
func (p *parser) op(root int32) error {
	t := &p.s.t
	n := &t.nodes[root]
	if n.kind == nTagged {
		n = &t.nodes[t.kids[n.ks]]
	}
	if n.kind != nMap {
		return p.errAt(n, "expected an operation map like {%s}, found %s", p.example(), p.describe(n))
	}
	var typ, f, proc, index, value *node
	kids := t.children(n)
	for i := 0; i+1 < len(kids); i += 2 {
		k, v := &t.nodes[kids[i]], &t.nodes[kids[i+1]]
		switch string(p.name(k)) {
		case "type":
			typ = v
		case "f":
			f = v
		case "process":
			proc = v
		case "index":
			index = v
		case "value":
			value = v
		}
	}
	r := &p.rec
	r.reset()
	r.line, r.col = n.line, n.col
	if typ != nil {
		t, ok := typeNamed(p.name(typ))
		if !ok {
			return p.errAt(typ, "unknown :type %s (expected :invoke, :ok, :fail or :info)", p.describe(typ))
		}
		r.typ = t
	}
	if f != nil && string(p.name(f)) != "txn" {
		return p.skip()
	}
	if typ == nil {
		return p.errAt(n, "operation has no :type (expected :invoke, :ok, :fail or :info)")
	}
	if proc != nil && proc.kind != nNil {
		if !isAtom(proc) {
			return p.errAt(proc, "expected a :process like 3 or :nemesis, found %s", p.describe(proc))
		}
		r.hasProcess = true
		r.process = p.scalarOf(proc)
	}
	if index != nil && index.kind != nNil {
		if index.kind != nInt {
			return p.errAt(index, "expected an integer :index, found %s", p.describe(index))
		}
		r.index = index.n
	}
	if value != nil && value.kind != nNil {
		if value.kind != nVector && value.kind != nList {
			return p.errAt(value, "expected a :value like [[:append k v] [:r k list]], found %s", p.describe(value))
		}
		r.hasValue = true
		for _, mi := range t.children(value) {
			if err := p.microOp(&t.nodes[mi]); err != nil {
				return err
			}
		}
	}
	r.text = t.text
	return p.emit(r, p.s.base+int64(p.s.pos))
}

func (p *parser) microOp(m *node) error {
	t := &p.s.t
	if m.kind != nVector && m.kind != nList {
		return p.errAt(m, "expected a micro-op like [:append k v] or [:r k list], found %s", p.describe(m))
	}
	el := t.children(m)
	if len(el) == 0 {
		return p.errAt(m, "expected a micro-op like [:append k v] or [:r k list], found an empty one")
	}
	fn := &t.nodes[el[0]]
	var isAppend bool
	switch string(p.name(fn)) {
	case "append":
		isAppend = true
	case "r":
	default:
		return p.errAt(fn, "expected :append or :r to start a micro-op, found %s", p.describe(fn))
	}
	if isAppend && len(el) == 2 {
		return p.errAt(m, "append without a value (expected [:append k v])")
	}
	if !isAppend && len(el) == 2 {
		// [:r k]: a read whose value is not written, as Elle's tests write invocations.
		r := &p.rec
		key := &t.nodes[el[1]]
		if !isAtom(key) {
			return p.errAt(key, "expected a key (an integer, string or keyword), found %s", p.describe(key))
		}
		r.mops = append(r.mops, rawMicro{key: p.scalarOf(key), line: m.line, col: m.col})
		return nil
	}
	if len(el) != 3 {
		if isAppend {
			return p.errAt(m, "expected 3 elements in [:append k v], found %d", len(el))
		}
		return p.errAt(m, "expected 3 elements in [:r k list], found %d", len(el))
	}
	key, val := &t.nodes[el[1]], &t.nodes[el[2]]
	if !isAtom(key) {
		return p.errAt(key, "expected a key (an integer, string or keyword), found %s", p.describe(key))
	}
	r := &p.rec
	rm := rawMicro{append: isAppend, key: p.scalarOf(key), line: m.line, col: m.col}
	if isAppend {
		if val.kind == nNil {
			return p.errAt(val, "append without a value (expected [:append k v], found nil)")
		}
		if !isAtom(val) {
			return p.errAt(val, "expected an appended value (an integer, string or keyword), found %s", p.describe(val))
		}
		rm.value = p.scalarOf(val)
	} else if val.kind != nNil {
		if val.kind != nVector && val.kind != nList {
			return p.errAt(val, "expected the value of a read to be a list or nil, found %s", p.describe(val))
		}
		rm.known = true
		rm.rs = int32(len(r.reads))
		for _, vi := range t.children(val) {
			v := &t.nodes[vi]
			if !isAtom(v) {
				return p.errAt(v, "expected a value read (an integer, string or keyword), found %s", p.describe(v))
			}
			r.reads = append(r.reads, p.scalarOf(v))
		}
		rm.re = int32(len(r.reads))
	}
	r.mops = append(r.mops, rm)
	return nil
}

// typeNamed maps a :type name (invoke, ok, fail, info) to its Type.
func typeNamed(name []byte) (Type, bool) {
	switch string(name) {
	case "invoke":
		return TypeInvoke, true
	case "ok":
		return TypeOK, true
	case "fail":
		return TypeFail, true
	case "info":
		return TypeInfo, true
	}
	return 0, false
}
