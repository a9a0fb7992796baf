package check

import (
	"fmt"
	"sort"
	"strings"
)

// model says what graph a consistency model is decided on (DESIGN.md, "Consistency
// models") and which anomalies it forbids.
type model struct {
	process  bool // each process's transactions in order
	realtime bool // a transaction completed before another was invoked precedes it
	snapshot bool // snapshot isolation: the split start/commit graph
	// perRead: each read is its own observation (encode.InferPerRead) and the graph has
	// ww and wr edges only: read committed's G0 and G1c.
	perRead bool
	// single (with perRead): the graph keeps its anti-dependencies and only cycles with
	// exactly one of them (G-single) or none are forbidden: consistent view and up.
	single bool
	// uncommitted: read uncommitted, decided on its own definition (package
	// uncommitted): Elle's ww edges from each key's longest read only.
	uncommitted bool
	// forbid lists the anomaly types the model forbids: the table that decides verdicts.
	forbid []string
}

// Anomaly types by kind. Cycle types also come with a -process or -realtime suffix when
// the cycle needs such an edge.
var (
	// findings: anomalies of reads alone, which every model here forbids (Elle: G1a and
	// G1b through G1, incompatible-order => G1a, future-read => G1c, duplicate-elements
	// from PL-1; garbage-read and incomplete-append are doppel's, a G1a and a G0).
	findings   = []string{"G1a", "G1b", "incompatible-order", "garbage-read", "future-read", "incomplete-append", "duplicate-elements", "cyclic-versions"}
	dataCycles = []string{"G0", "G1c"}                                         // ww and wr edges only (G1c: Elle's G1c with G0)
	rwCycles   = []string{"G0", "G1c", "G-single", "G-nonadjacent", "G2-item"} // every cycle (serializable)
	siCycles   = []string{"G0", "G1c", "G-single", "G-nonadjacent"}            // no two adjacent rw edges
)

// Anomalies Elle's weaker models forbid beyond read committed's (DESIGN.md, "Elle's
// weaker models"). Elle's list-append never reports G-cursor, G-monotonic, G-MSR, G-SIb
// nor G-update: they stay in the table so that it is Elle's, and are never found.
var (
	cursorStability = []string{"lost-update", "G-cursor"}
	consistentView  = list(cursorStability, []string{"G-single", "G-monotonic"})
	forwardView     = list(consistentView, []string{"G-SIb"})
	updateSerial    = list(forwardView, []string{"G-update"})
	// serializable implies update serializable and snapshot isolation; snapshot
	// isolation implies forward consistent view and monotonic snapshot read.
	serialExtra   = list(updateSerial, []string{"G-MSR"})
	snapshotExtra = list(forwardView, []string{"G-MSR"})
)

// models are the consistency models doppel decides, under Elle's friendly names. The
// anomalies each forbids follow Elle's definitions (its direct-proscribed-anomalies,
// closed under the model lattice and the anomaly implications), with the deviation for
// internal that DESIGN.md explains.
var models = map[string]model{
	// Read uncommitted: G0, duplicate-elements, cyclic-versions (never reported for
	// list-append) and doppel's garbage-read (DESIGN.md, "Read uncommitted").
	"read-uncommitted":                {uncommitted: true, forbid: readUncommitted},
	"strong-session-read-uncommitted": {uncommitted: true, process: true, forbid: list(readUncommitted, []string{"G0-process"})},
	"strong-read-uncommitted":         {uncommitted: true, process: true, realtime: true, forbid: list(readUncommitted, []string{"G0-process", "G0-realtime"})},
	"read-committed":                  {perRead: true, forbid: list(findings, dataCycles)},
	"strong-session-read-committed":   {perRead: true, process: true, forbid: list(findings, dataCycles, suffixed(dataCycles, "-process"))},
	"strong-read-committed": {perRead: true, process: true, realtime: true,
		forbid: list(findings, dataCycles, suffixed(dataCycles, "-process"), suffixed(dataCycles, "-realtime"))},
	// Elle's models between read committed and the serializable ones: the ones Elle's
	// list-append can only decide as read committed (what else they forbid it never
	// reports), cursor stability (lost updates too) and the G-single ones.
	"monotonic-atomic-view":   {perRead: true, forbid: list(findings, dataCycles)},
	"monotonic-view":          {perRead: true, forbid: list(findings, dataCycles, []string{"G-monotonic"})},
	"monotonic-snapshot-read": {perRead: true, forbid: list(findings, dataCycles, []string{"G-MSR"})},
	"cursor-stability":        {perRead: true, forbid: list(findings, dataCycles, cursorStability)},
	"consistent-view":         {perRead: true, single: true, forbid: list(findings, dataCycles, consistentView)},
	"forward-consistent-view": {perRead: true, single: true, forbid: list(findings, dataCycles, forwardView)},
	"update-serializable":     {perRead: true, single: true, forbid: list(findings, dataCycles, updateSerial)},
	// Without predicates G2 is G2-item: repeatable read forbids every cycle, and its
	// verdict is serializable's (DESIGN.md); a non-repeatable read is internal.
	"repeatable-read":             {forbid: list(findings, rwCycles, []string{"internal"}, cursorStability)},
	"serializable":                {forbid: list(findings, rwCycles, []string{"internal"}, serialExtra)},
	"strong-session-serializable": {process: true, forbid: list(findings, rwCycles, []string{"internal"}, serialExtra, suffixed(rwCycles, "-process"))},
	"strict-serializable": {process: true, realtime: true,
		forbid: list(findings, rwCycles, []string{"internal"}, serialExtra, suffixed(rwCycles, "-process"), suffixed(rwCycles, "-realtime"))},
	"snapshot-isolation": {snapshot: true, forbid: list(findings, siCycles, []string{"internal"}, snapshotExtra)},
	// Elle's strong-session-SI forbids G1-process and G-nonadjacent-process, strong SI
	// their -realtime forms too: the split graph with process (and real-time) order.
	"strong-session-snapshot-isolation": {snapshot: true, process: true,
		forbid: list(findings, siCycles, []string{"internal"}, snapshotExtra, suffixed(siCycles, "-process"))},
	"strong-snapshot-isolation": {snapshot: true, process: true, realtime: true,
		forbid: list(findings, siCycles, []string{"internal"}, snapshotExtra, suffixed(siCycles, "-process"), suffixed(siCycles, "-realtime"))},
}

// aliases maps the other names Elle accepts (Adya's, lower-cased) to doppel's.
var aliases = map[string]string{
	"pl-1":                  "read-uncommitted",
	"strong-session-pl-1":   "strong-session-read-uncommitted",
	"strong-pl-1":           "strong-read-uncommitted",
	"pl-2":                  "read-committed",
	"strong-session-pl-2":   "strong-session-read-committed",
	"strong-pl-2":           "strong-read-committed",
	"pl-2.99":               "repeatable-read",
	"pl-3":                  "serializable",
	"conflict-serializable": "serializable",
	"pl-ss":                 "strict-serializable",
	"strong-serializable":   "strict-serializable",
	"pl-si":                 "snapshot-isolation",
	"pl-2l":                 "monotonic-view",
	"pl-msr":                "monotonic-snapshot-read",
	"pl-cs":                 "cursor-stability",
	"pl-2+":                 "consistent-view",
	"pl-fcv":                "forward-consistent-view",
	"pl-3u":                 "update-serializable",
}

// notDecided names Elle's models doppel does not decide, and why (DESIGN.md): none now.
var notDecided = map[string]string{}

var readUncommitted = []string{"G0", "duplicate-elements", "garbage-read", "cyclic-versions"}

func list(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func suffixed(types []string, suffix string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t + suffix
	}
	return out
}

// forbids reports whether model m forbids anomaly type typ.
func forbids(m string, typ string) bool {
	for _, f := range models[m].forbid {
		if f == typ {
			return true
		}
	}
	return false
}

// ModelNames lists the models Check decides, by their canonical names.
func ModelNames() []string {
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CanonicalModel returns doppel's name for a model as Elle's users spell it (any
// case, with or without EDN's leading colon, Adya's PL-n names), or an error naming
// the known models.
func CanonicalModel(name string) (string, error) {
	m := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), ":"))
	if a, ok := aliases[m]; ok {
		m = a
	}
	if _, ok := models[m]; ok {
		return m, nil
	}
	if why, ok := notDecided[m]; ok {
		return "", fmt.Errorf("model %q is one of Elle's, but doppel does not decide it: %s (decided: %s)", name, why, strings.Join(ModelNames(), ", "))
	}
	return "", fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(ModelNames(), ", "))
}

func validateModels(ms []string) ([]string, error) {
	if len(ms) == 0 {
		return []string{"serializable"}, nil
	}
	seen := map[string]bool{}
	var out []string
	for _, name := range ms {
		if strings.EqualFold(strings.TrimSpace(name), "all") {
			for _, m := range ModelNames() {
				if !seen[m] {
					seen[m] = true
					out = append(out, m)
				}
			}
			continue
		}
		m, err := CanonicalModel(name)
		if err != nil {
			return nil, err
		}
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out, nil
}

// graphWithin reports whether a cycle in every attribution under model a is one under
// model b: b's attributions are among a's (a per-read model has more), and every cycle
// of a's graph is one of b's (b has a's orders; a graph with anti-dependencies is
// within another only if that has them too, and a plain one's cycles may have adjacent
// anti-dependencies, which the split graph does not have).
func graphWithin(a, b string) bool {
	ma, mb := models[a], models[b]
	if ma.uncommitted || mb.uncommitted {
		// Read uncommitted's graph (Elle's ww from the longest reads) is within every
		// model's with its orders (DESIGN.md, "Read uncommitted": read committed's
		// attributions give it), and no other model's graph is within it.
		return ma.uncommitted && (!ma.process || mb.process) && (!ma.realtime || mb.realtime)
	}
	switch {
	case mb.perRead && !ma.perRead:
		return false
	case ma.process && !mb.process, ma.realtime && !mb.realtime:
		return false
	case !ma.perRead && mb.perRead:
		return false // a has anti-dependencies, b does not
	case !ma.perRead && !ma.snapshot && mb.snapshot:
		return false
	case ma.single && mb.perRead && !mb.single:
		return false // a forbids G-single, b's graph has no anti-dependencies
	}
	return true
}

// neverReported are the anomaly types the table keeps as Elle's but no list-append
// analysis produces (see cursorStability above): no verdict depends on them.
var neverReported = map[string]bool{"G-cursor": true, "G-monotonic": true, "G-MSR": true, "G-SIb": true, "G-update": true}

// forbidsWithin reports whether model b forbids every anomaly type model a forbids (a
// finding such as lost-update counts only for the models that forbid it). Types never
// reported do not count: a model that differs from b only by them has b's verdicts
// (update serializable is valid where forward consistent view is: on the independent
// generator's snapshot-isolated store at 10K, it stayed unknown at 60 s otherwise).
func forbidsWithin(a, b string) bool {
	for _, typ := range models[a].forbid {
		if !forbids(b, typ) && !neverReported[typ] {
			return false
		}
	}
	return true
}

// decideOrder orders model names for deciding: the serializable family weakest first
// (an anomaly found under a weaker model settles the stronger ones), then snapshot
// isolation (valid under any serializable-family model implies it), then the per-read
// models (valid under any stronger model implies them).
func decideOrder(names []string) []string {
	rank := func(m string) int {
		spec := models[m]
		r := 0
		switch {
		case spec.perRead:
			r = 10
		case spec.snapshot:
			r = 3
		}
		if spec.realtime {
			return r + 2
		}
		if spec.process {
			return r + 1
		}
		return r
	}
	out := append([]string(nil), names...)
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

// impliedValid reports whether a model already found valid implies m: its attribution
// and order satisfy m too (m has at least its attributions and a graph within its).
func impliedValid(m string, decided map[string]*ModelResult) bool {
	for d, r := range decided {
		if d != m && r.Valid == Valid && graphWithin(m, d) && forbidsWithin(m, d) {
			return true
		}
	}
	return false
}
