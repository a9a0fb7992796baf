package check

import (
	"fmt"
	"sort"
	"strings"
)

// model says which extra orders a consistency model adds to the data dependencies.
type model struct {
	process  bool // each process's transactions in order
	realtime bool // a transaction completed before another was invoked precedes it
	snapshot bool // snapshot isolation: G2-item (with adjacent anti-dependencies) is allowed
}

// models are the consistency models doppel checks, named as in Elle.
var models = map[string]model{
	"serializable":                {},
	"strong-session-serializable": {process: true},
	"strict-serializable":         {process: true, realtime: true},
	"snapshot-isolation":          {snapshot: true},
}

// baseAnomalies are forbidden by every model here. Cycle anomalies also come with a
// -process or -realtime suffix when the cycle needs such an edge.
var baseAnomalies = []string{
	"G0", "G1a", "G1b", "G1c", "G-single", "G-nonadjacent", "G2-item",
	"internal", "incompatible-order", "garbage-read", "future-read", "incomplete-append", "duplicate-elements",
}

// forbids reports whether model m forbids anomaly type typ: the table that decides
// verdicts, as data.
func forbids(m string, typ string) bool {
	spec := models[m]
	switch {
	case strings.HasSuffix(typ, "-realtime"):
		return spec.realtime
	case strings.HasSuffix(typ, "-process"):
		return spec.process
	}
	if typ == "G2-item" {
		return !spec.snapshot
	}
	for _, b := range baseAnomalies {
		if b == typ {
			return true
		}
	}
	return false
}

// ModelNames lists the models Check accepts.
func ModelNames() []string {
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func validateModels(ms []string) ([]string, error) {
	if len(ms) == 0 {
		return []string{"serializable"}, nil
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		m = strings.TrimSpace(m)
		if _, ok := models[m]; !ok {
			return nil, fmt.Errorf("unknown model %q (known: %s)", m, strings.Join(ModelNames(), ", "))
		}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out, nil
}

// graphWithin reports whether every edge of model a's graph is in model b's, so that a
// cycle in every attribution under a is one under b too.
func graphWithin(a, b string) bool {
	ma, mb := models[a], models[b]
	if ma.snapshot || mb.snapshot {
		return a == b
	}
	return (mb.process || !ma.process) && (mb.realtime || !ma.realtime)
}

// decideOrder orders model names for deciding: the serializable family weakest first
// (an anomaly found under a weaker model settles the stronger ones), then snapshot
// isolation (valid under any serializable-family model implies it).
func decideOrder(names []string) []string {
	rank := func(m string) int {
		spec := models[m]
		switch {
		case spec.snapshot:
			return 3
		case spec.realtime:
			return 2
		case spec.process:
			return 1
		}
		return 0
	}
	out := append([]string(nil), names...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// impliedValid reports whether a model already found valid implies m: every
// serializable-family model implies the ones whose graph is within its own, and
// snapshot isolation.
func impliedValid(m string, decided map[string]*ModelResult) bool {
	for d, r := range decided {
		if d == m || r.Valid != Valid || models[d].snapshot {
			continue
		}
		if models[m].snapshot || graphWithin(m, d) {
			return true
		}
	}
	return false
}
