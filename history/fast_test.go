package history

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestInternerIDs checks that the dense slice and the map fallback together give the
// ids a plain map gives: in order of first appearance, whatever mix of small,
// negative, huge and growing integers and strings comes.
func TestInternerIDs(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 50; round++ {
		in := newInterner()
		want := map[string]int32{}
		var wantPrinted []string
		text := []byte{}
		next := int64(0)
		steps := 20000
		if round == 0 {
			steps = 3 * numChunk // several chunks of nums
		}
		for i := 0; i < steps; i++ {
			var s scalar
			var p string
			switch rng.Intn(9) {
			case 0:
				s.n = int64(rng.Intn(100))
			case 1:
				s.n = -int64(rng.Intn(1000)) - 1
			case 2:
				s.n = rng.Int63()
			case 3:
				s.n = int64(minDense) + int64(rng.Intn(4*minDense)) - 8
			case 4:
				// Far ahead of the count of ids: first in the map, later in dense.
				s.n = int64(rng.Intn(1 << 22))
			case 5:
				next += int64(rng.Intn(3))
				s.n = next
			case 6:
				s.n = -1 << 63
			case 7:
				s.n = 1<<63 - 1 - int64(rng.Intn(3))
			default:
				p = []string{":x", `"s"`, ":y/z", `"1"`, "1N", "sym"}[rng.Intn(6)] + strconv.Itoa(rng.Intn(50))
			}
			if p == "" {
				p = strconv.FormatInt(s.n, 10)
			} else {
				s.ts = int32(len(text))
				text = append(text, p...)
				s.te = int32(len(text))
			}
			w, ok := want[p]
			if !ok {
				w = int32(len(want))
				want[p] = w
				wantPrinted = append(wantPrinted, p)
			}
			var got int32
			if s.te == 0 && rng.Intn(2) == 0 {
				// The batch lookup, as the Builder does it, then the rest in order.
				ids := []int32{0}
				in.known([]scalar{s}, ids)
				got = ids[0]
				if got < 0 {
					got = in.id(&s, text)
				}
			} else {
				got = in.id(&s, text)
			}
			if got != w {
				t.Fatalf("round %d, step %d: %s got id %d, want %d", round, i, p, got, w)
			}
		}
		for n, id := range in.ints {
			if uint64(n) < uint64(len(in.dense)) {
				t.Fatalf("round %d: %d (id %d) is in the map, but dense covers it", round, n, id)
			}
		}
		for k := 0; k < 100; k++ {
			id := int32(rng.Intn(len(wantPrinted)))
			if got := in.name(id); got != wantPrinted[id] {
				t.Fatalf("round %d: name(%d) = %q, want %q", round, id, got, wantPrinted[id])
			}
		}
		if printed, _ := in.finish(nil); !reflect.DeepEqual(printed, wantPrinted) {
			t.Fatalf("round %d: printed forms differ", round)
		}
	}
}

// TestFastUint compares the fast integer reader with strconv on integers of every
// length, followed by delimiters and by other bytes, with the buffer ending anywhere.
func TestFastUint(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	after := []byte(" ,]}\n\t\r;\"([{)a:/.N\x00\x2f\x3a\x7f\x80\xf9\xfa\xff0")
	for digits := 1; digits <= 21; digits++ {
		for k := 0; k < 300; k++ {
			var num []byte
			for d := 0; d < digits; d++ {
				num = append(num, byte('0'+rng.Intn(10)))
			}
			if k%3 == 0 {
				num[0] = '0'
			}
			for _, neg := range []bool{false, true} {
				var b []byte
				if neg {
					b = append(b, '-')
				}
				b = append(b, num...)
				b = append(b, after[rng.Intn(len(after))])
				for m := rng.Intn(9); m > 0; m-- {
					b = append(b, "0123456789 ]x"[rng.Intn(13)])
				}
				for cut := len(b); cut >= 0; cut-- {
					checkFastInt(t, b[:cut])
				}
			}
		}
	}
}

func checkFastInt(t *testing.T, b []byte) {
	t.Helper()
	// The reference: an optional '-', 1 to 18 digits, then a delimiter.
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	wantJ := -1
	var want int64
	if j > i && j-i <= 18 && j < len(b) && isDelim(b[j]) {
		var err error
		if want, err = strconv.ParseInt(string(b[:j]), 10, 64); err != nil {
			t.Fatal(err)
		}
		wantJ = j
	}
	got, gotJ := fastInt(b, 0)
	if gotJ != wantJ || wantJ >= 0 && got != want {
		t.Fatalf("fastInt(%q) = %d, %d; want %d, %d", b, got, gotJ, want, wantJ)
	}
}

// parseBoth parses data (as EDN, as JSON, and telling them apart) with and without
// the fast paths, and fails if the results or errors differ.
func parseBoth(t *testing.T, data []byte) {
	t.Helper()
	defer func() { noFastPath = false }()
	for _, parse := range []func(io.Reader, string) (*History, error){ParseEDN, ParseJSON, Parse} {
		noFastPath = true
		h, err := parse(bytes.NewReader(data), "h")
		slow := dumpHistory(h, err)
		noFastPath = false
		h, err = parse(bytes.NewReader(data), "h")
		if fast := dumpHistory(h, err); fast != slow {
			t.Fatalf("input %q:\ngeneral path: %s\n   fast path: %s", data, slow, fast)
		}
	}
}

func dumpHistory(h *History, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%+v", *h)
}

// randomEDN writes n random operations, mostly well-formed and in the shape the fast
// path reads, with now and then something it leaves to the general path, or an error.
func randomEDN(rng *rand.Rand, n int) []byte {
	odd := 1 + rng.Intn(200) // one in odd choices is unusual
	pick := func(common, unusual []string) string {
		if rng.Intn(odd) == 0 {
			return unusual[rng.Intn(len(unusual))]
		}
		return common[rng.Intn(len(common))]
	}
	atom := func() string {
		if rng.Intn(3) == 0 {
			return strconv.Itoa(rng.Intn(300000))
		}
		return pick([]string{"0", "1", "7", "-1", "-5", "65536", "262144", "12345678", "123456789",
			"999999999999", "-999999999999999999", "123456789012345678", ":x", ":y/z", `"s"`, `"é"`, "007"},
			[]string{"1234567890123456789", "+5", "1N", "1.5", "nil", "true", "sym", `"a\nb"`, "{}", "#{1}", "#t 1", "##Inf", `\a`})
	}
	sep := func() string {
		return pick([]string{" ", " ", ", ", ","}, []string{"\n", "  \n ", " ;c\n ", " #_ 9 ", "\t", "\r\n", ""})
	}
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		fields := []string{
			":type" + sep() + pick([]string{":invoke", ":ok", ":invoke", ":ok", ":fail", ":info"}, []string{":bogus", `"ok"`, "1", "nil"}),
			":process " + pick([]string{"0", "1", "2", "3"}, []string{":p", "nil", `"q"`, "-3", "70000", "[1]"}),
			":index " + pick([]string{strconv.Itoa(i)}, []string{"nil", ":i", "-1"}),
			":time " + strconv.Itoa(rng.Intn(1e9)),
		}
		if rng.Intn(10) != 0 {
			fields = append(fields, ":f "+pick([]string{":txn"}, []string{":kill", "nil", `"txn"`, "txn"}))
		}
		switch rng.Intn(12) {
		case 0:
			fields = append(fields, ":value nil")
		case 1:
		default:
			var v strings.Builder
			v.WriteString(pick([]string{"["}, []string{"(", "#{"}))
			for k := rng.Intn(6); k > 0; k-- {
				v.WriteString(sep())
				switch rng.Intn(3) {
				case 0:
					v.WriteString("[:append " + atom() + sep() + atom() + "]")
				case 1:
					v.WriteString("[:r " + atom() + sep() + pick([]string{"nil"}, []string{"[]", "1", "()"}) + "]")
				default:
					v.WriteString("[:r " + atom() + " [")
					for m := rng.Intn(8); m > 0; m-- {
						v.WriteString(atom() + sep())
					}
					v.WriteString("]]")
				}
				if rng.Intn(odd) == 0 {
					v.WriteString([]string{"[:r 1]", "[:append 1]", "[:x 1 2]", "[]", "{:a 1}", "[:r 1 2 3]", "[:r 1 [[1]]]", "[\"r\" 1 nil]"}[rng.Intn(8)])
				}
			}
			switch v.String()[0] {
			case '(':
				v.WriteString(")")
			case '#':
				v.WriteString("}")
			default:
				v.WriteString("]")
			}
			fields = append(fields, ":value"+sep()+v.String())
		}
		if rng.Intn(odd) == 0 {
			fields = append(fields, fields[rng.Intn(len(fields))])
		}
		rng.Shuffle(len(fields), func(a, b int) { fields[a], fields[b] = fields[b], fields[a] })
		buf.WriteString(pick([]string{"{"}, []string{"#jepsen.history.Op{", "[{", "{{"}))
		buf.WriteString(strings.Join(fields, ","+sep()))
		buf.WriteString("}" + sep() + "\n")
	}
	return buf.Bytes()
}

// randomJSON is randomEDN in JSON.
func randomJSON(rng *rand.Rand, n int) []byte {
	odd := 1 + rng.Intn(200)
	pick := func(common, unusual []string) string {
		if rng.Intn(odd) == 0 {
			return unusual[rng.Intn(len(unusual))]
		}
		return common[rng.Intn(len(common))]
	}
	atom := func() string {
		if rng.Intn(3) == 0 {
			return strconv.Itoa(rng.Intn(300000))
		}
		return pick([]string{"0", "1", "7", "-1", "-5", "65536", "262144", "12345678", "123456789",
			"999999999999", "-999999999999999999", "123456789012345678", `":x"`, `":y/z"`, `"s"`, `"é"`, `":"`, `":a b"`, `"::"`, "007"},
			[]string{"1234567890123456789", "+5", "1.5", "1e3", "-0", "null", "true", "x", `"a\nb"`, `"\u0041"`, "{}", "[]", "-"})
	}
	sep := func() string {
		return pick([]string{"", "", ",", " "}, []string{"\n", " \n ", "\t", "\r\n", ";", "#_ 1 ", ",,"})
	}
	key := func(k string) string {
		return pick([]string{`"` + k + `"`}, []string{`":` + k + `"`, k, `"` + k + ` "`}) + sep() + pick([]string{":"}, []string{"", "::", " : "}) + sep()
	}
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		fields := []string{
			key("type") + pick([]string{`"invoke"`, `"ok"`, `":invoke"`, `":ok"`, `"fail"`, `"info"`}, []string{`"bogus"`, `":"`, "1", "null"}),
			key("process") + pick([]string{"0", "1", "2", "3"}, []string{`":p"`, "null", `"q"`, "-3", "70000", "[1]", "1.5", "true"}),
			key("index") + pick([]string{strconv.Itoa(i)}, []string{"null", `"i"`, "-1"}),
			key("time") + strconv.Itoa(rng.Intn(1e9)),
		}
		if rng.Intn(10) != 0 {
			fields = append(fields, key("f")+pick([]string{`"txn"`, `":txn"`}, []string{`"kill"`, "null", "txn"}))
		}
		switch rng.Intn(12) {
		case 0:
			fields = append(fields, key("value")+"null")
		case 1:
		default:
			var v strings.Builder
			v.WriteString("[")
			for k := rng.Intn(6); k > 0; k-- {
				v.WriteString(sep())
				fn := func(f string) string {
					return pick([]string{`"` + f + `"`, `":` + f + `"`}, []string{f, `"` + f + `x"`})
				}
				switch rng.Intn(3) {
				case 0:
					v.WriteString("[" + fn("append") + sep() + "," + atom() + "," + sep() + atom() + "]")
				case 1:
					v.WriteString("[" + fn("r") + "," + atom() + "," + pick([]string{"null"}, []string{"[]", "1", "{}"}) + "]")
				default:
					v.WriteString("[" + fn("r") + "," + atom() + ",[")
					for m := rng.Intn(8); m > 0; m-- {
						v.WriteString(atom() + pick([]string{","}, []string{" ", "", "\n"}))
					}
					v.WriteString("]]")
				}
				v.WriteString(pick([]string{","}, []string{"", " "}))
				if rng.Intn(odd) == 0 {
					v.WriteString([]string{`["r",1]`, `["append",1]`, `["x",1,2]`, "[]", `{"a":1}`, `["r",1,2,3]`, `["r",1,[[1]]]`}[rng.Intn(7)])
				}
			}
			v.WriteString("]")
			fields = append(fields, key("value")+v.String())
		}
		if rng.Intn(odd) == 0 {
			fields = append(fields, fields[rng.Intn(len(fields))])
		}
		rng.Shuffle(len(fields), func(a, b int) { fields[a], fields[b] = fields[b], fields[a] })
		buf.WriteString(pick([]string{"{"}, []string{"[{", "{{", "#{"}))
		buf.WriteString(strings.Join(fields, pick([]string{","}, []string{"", " ", ",\n"})))
		buf.WriteString("}" + sep() + "\n")
	}
	return buf.Bytes()
}

// TestFastPathMatchesGeneral checks that the fast path reads what the general path
// reads, to the same History or the same error.
func TestFastPathMatchesGeneral(t *testing.T) {
	for _, s := range append(fuzzSeedsEDN, fuzzSeedsJSON...) {
		parseBoth(t, []byte(s))
	}
	if data, err := os.ReadFile(siNotSerial); err == nil {
		parseBoth(t, data)
	}
	rng := rand.New(rand.NewSource(3))
	n := 1000
	if testing.Short() {
		n = 200
	}
	for i := 0; i < n; i++ {
		data := randomEDN(rng, 1+rng.Intn(30))
		if i%2 == 1 {
			data = randomJSON(rng, 1+rng.Intn(30))
		}
		parseBoth(t, data)
		parseBoth(t, data[:rng.Intn(len(data))])
		m := append([]byte(nil), data...)
		const mutations = "[]{}() :\n\"\\#;,0-9"
		m[rng.Intn(len(m))] = mutations[rng.Intn(len(mutations))]
		parseBoth(t, m)
	}
}

func FuzzFastPath(f *testing.F) {
	addSeeds(f, append(fuzzSeedsEDN, fuzzSeedsJSON...))
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 20; i++ {
		f.Add(randomEDN(rng, 1+rng.Intn(5)))
		f.Add(randomJSON(rng, 1+rng.Intn(5)))
	}
	f.Fuzz(func(t *testing.T, data []byte) { parseBoth(t, data) })
}
