package check

import (
	"encoding/binary"
	"fmt"
	"strings"

	"doppel/encode"
	"doppel/history"
)

// lostUpdates finds Elle's lost updates (DESIGN.md, "Lost update"): two or more :ok
// transactions whose first read of a key, made before their first append to it,
// returned the same list, and which then appended to it. It compares values only, so
// it holds in every attribution of duplicate values: one anomaly per key and list.
func lostUpdates(h *history.History) []Anomaly {
	out, _ := lostUpdatesStop(h, nil)
	return out
}

// lostUpdatesStop is lostUpdates that asks stop (when not nil) every stopEvery
// transactions whether to give up, and then reports false, having found nothing.
func lostUpdatesStop(h *history.History, stop func() bool) ([]Anomaly, bool) {
	type group struct {
		key  int32
		read []int32
		txns []int32
	}
	var groups []*group
	byRead := map[string]*group{}
	var buf []byte
	for t := range h.Txns {
		if stop != nil && t&(stopEvery-1) == 0 && t > 0 && stop() {
			return nil, false
		}
		if h.Txns[t].Status != history.OK {
			continue
		}
		ops := h.TxnOps(t)
		for i, op := range ops {
			if op.Kind != history.Append || firstOnKey(ops[:i], op.Key, history.Append) >= 0 {
				continue
			}
			// The transaction's first append to the key: its first read before it.
			r := firstOnKey(ops[:i], op.Key, history.Read)
			if r < 0 || !ops[r].Known {
				continue
			}
			read := h.ReadList(&ops[r])
			buf = binary.AppendVarint(buf[:0], int64(op.Key))
			for _, v := range read {
				buf = binary.AppendVarint(buf, int64(v))
			}
			g := byRead[string(buf)]
			if g == nil {
				g = &group{key: op.Key, read: read}
				byRead[string(buf)] = g
				groups = append(groups, g)
			}
			g.txns = append(g.txns, int32(t))
		}
	}
	var out []Anomaly
	for _, g := range groups {
		if len(g.txns) < 2 {
			continue
		}
		a := Anomaly{Type: "lost-update", Key: h.Keys[g.key]}
		var names []string
		for _, t := range g.txns {
			a.Txns = append(a.Txns, NewTxnRef(h, t))
			names = append(names, encode.TxnName(h, t))
		}
		a.Explanation = fmt.Sprintf("%s all read key %s = %s and then appended to it: each append must come right after that list, and only one can (a lost update)",
			strings.Join(names, ", "), h.Keys[g.key], encode.ShortList(h, g.read))
		out = append(out, a)
	}
	return out, true
}

// firstOnKey returns the index of the first op of kind on key in ops, or -1.
func firstOnKey(ops []history.MicroOp, key int32, kind history.Kind) int {
	for i := range ops {
		if ops[i].Key == key && ops[i].Kind == kind {
			return i
		}
	}
	return -1
}
