// Package brute is the trusted oracle for tiny list-append histories: a checker written
// straight from the definitions of the consistency models (DESIGN.md section 2), by
// enumerating commit choices and commit orders, and a generator of random tiny histories
// with heavy value duplication to compare the real checker against.
//
// The checker deliberately shares nothing with the segmentation encoding of DESIGN.md
// section 4: it executes candidate orders against real lists and compares what reads
// would have returned with what they did return.
package brute

import (
	"encoding/binary"
	"fmt"

	"doppel/history"
)

// Model names, as in Elle.
const (
	Serializable              = "serializable"
	StrongSessionSerializable = "strong-session-serializable"
	StrictSerializable        = "strict-serializable"
	SnapshotIsolation         = "snapshot-isolation"
)

// Models lists every model Check knows.
var Models = []string{Serializable, StrongSessionSerializable, StrictSerializable, SnapshotIsolation}

// MaxTxns is the largest history Check accepts (transaction sets are bit masks). The
// search is exponential: histories of more than about 10 transactions may take long.
const MaxTxns = 64

// Check reports whether h satisfies model, by the graph definition (CheckGraph), which
// decides every model; the execution oracle (CheckModel) is checked against it. It is
// false for an unknown model or a malformed or too large history; CheckGraph says which.
func Check(h *history.History, model string) bool {
	ok, err := CheckGraph(h, model)
	return err == nil && ok
}

// CheckModel reports whether h satisfies model, or an error for an unknown model or a
// malformed or too large history.
//
// Definitions: :fail transactions never commit, :ok ones commit, and every subset of
// the :info transactions is tried as the set that committed. For the serializable
// family, some total order of the committed transactions, executed serially from empty
// lists, must make every known read of every :ok transaction return what it returned
// (the list so far plus the transaction's own earlier appends). strong-session adds
// process order, strict adds real-time order and process order. For snapshot isolation,
// there must be a commit order and, per transaction, a snapshot point (a prefix of the
// commit order ending at or before its own commit) such that each read returns the
// snapshot's list plus the transaction's own earlier appends, and no two transactions
// appending to the same key are concurrent (each sees the other's commit or is seen).
func CheckModel(h *history.History, model string) (bool, error) {
	var order func(h *history.History, a, b int) bool
	snapshot := false
	switch model {
	case Serializable:
	case StrongSessionSerializable:
		order = processBefore
	case StrictSerializable:
		order = func(h *history.History, a, b int) bool {
			return processBefore(h, a, b) || realTimeBefore(h, a, b)
		}
	case SnapshotIsolation:
		snapshot = true
	default:
		return false, fmt.Errorf("brute: unknown model %q", model)
	}
	if err := validate(h); err != nil {
		return false, err
	}
	s := newSearch(h, snapshot, order)
	if s.impossible {
		return false, nil
	}
	// Every subset of the optional (:info) transactions, as the set that committed.
	opt := s.optional
	for sub := uint64(0); ; sub = (sub - opt) & opt {
		if s.run(s.ok | sub) {
			return true, nil
		}
		if sub == opt {
			break
		}
	}
	return false, nil
}

// processBefore: a and b ran in the same process and a was invoked first (by invoke
// position; an absent invoke, -1, counts as earliest; ties by order in h.Txns, which is
// completion order).
func processBefore(h *history.History, a, b int) bool {
	ta, tb := &h.Txns[a], &h.Txns[b]
	if ta.Process < 0 || ta.Process != tb.Process {
		return false
	}
	if ta.Invoke != tb.Invoke {
		return ta.Invoke < tb.Invoke
	}
	return a < b
}

// realTimeBefore: a completed before b was invoked. An :info transaction has Complete =
// -1 and so precedes nothing; a missing invoke (-1) means b started before everything.
func realTimeBefore(h *history.History, a, b int) bool {
	ta, tb := &h.Txns[a], &h.Txns[b]
	return ta.Complete >= 0 && tb.Invoke >= 0 && ta.Complete < tb.Invoke
}

// validate rejects histories whose indices would make the search read out of range.
func validate(h *history.History) error {
	if h == nil {
		return fmt.Errorf("brute: nil history")
	}
	if len(h.Txns) > MaxTxns {
		return fmt.Errorf("brute: %d transactions, at most %d", len(h.Txns), MaxTxns)
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.OpStart < 0 || t.OpStart > t.OpEnd || int(t.OpEnd) > len(h.Ops) {
			return fmt.Errorf("brute: txn %d: ops [%d:%d] out of range", i, t.OpStart, t.OpEnd)
		}
		if t.Status > history.Fail {
			return fmt.Errorf("brute: txn %d: bad status %d", i, t.Status)
		}
		for _, op := range h.Ops[t.OpStart:t.OpEnd] {
			if op.Key < 0 || op.Key >= 1<<16 {
				return fmt.Errorf("brute: txn %d: bad key id %d", i, op.Key)
			}
			if op.Kind == history.Read && op.Known &&
				(op.Start < 0 || op.Start > op.End || int(op.End) > len(h.ReadValues)) {
				return fmt.Errorf("brute: txn %d: read [%d:%d] out of range", i, op.Start, op.End)
			}
		}
	}
	return nil
}

// readRef is a known read of a committed :ok transaction, for pruning.
type readRef struct {
	txn  int
	key  int32
	read []int32
	// snapLen is the length of the part of read that precedes the transaction's own
	// earlier appends to the key (read minus those appends): the list as the transaction
	// found it.
	snapLen int
}

type search struct {
	h        *history.History
	n        int
	snapshot bool // snapshot isolation; otherwise serial execution
	ok       uint64
	optional uint64 // :info transactions that append something
	pred     []uint64
	// conflict[t]: transactions other than t appending to a key t appends to.
	conflict []uint64
	// readsOf[x]: the known reads of key x by :ok transactions; readsBy[t]: t's.
	readsOf [][]readRef
	readsBy [][]readRef
	// impossible: some :ok read can be explained by no order at all.
	impossible bool

	committed uint64 // of the current run
	lists     [][]int32
	own       [][]int32 // a transaction's own appends per key, while it is checked
	// lenHist[s*keys+x] is the length of key x's list after the first s commits.
	lenHist []int32
	pos     []int // position of each placed transaction in the commit order
	failed  map[string]struct{}
	buf     []byte
}

func newSearch(h *history.History, snapshot bool, order func(*history.History, int, int) bool) *search {
	n := len(h.Txns)
	keys := len(h.Keys)
	for _, op := range h.Ops {
		keys = max(keys, int(op.Key)+1)
	}
	s := &search{
		h: h, n: n, snapshot: snapshot,
		pred:     make([]uint64, n),
		conflict: make([]uint64, n),
		readsOf:  make([][]readRef, keys),
		readsBy:  make([][]readRef, n),
		lists:    make([][]int32, keys),
		own:      make([][]int32, keys),
		pos:      make([]int, n),
	}
	writers := make([]uint64, keys)
	for t := 0; t < n; t++ {
		ops := h.TxnOps(t)
		appends := false
		for _, op := range ops {
			if op.Kind == history.Append {
				writers[op.Key] |= 1 << t
				appends = true
			}
		}
		switch h.Txns[t].Status {
		case history.OK:
			s.ok |= 1 << t
		case history.Info:
			// An :info transaction without appends changes no list and has no known
			// reads: committing it could only add order constraints, never explain more.
			if appends {
				s.optional |= 1 << t
			}
		}
	}
	for t := 0; t < n; t++ {
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				s.conflict[t] |= writers[op.Key]
			}
		}
		s.conflict[t] &^= 1 << t
		if order != nil {
			for u := 0; u < n; u++ {
				if u != t && order(h, u, t) {
					s.pred[t] |= 1 << u
				}
			}
		}
	}
	// A read returns some list L followed by the transaction's own earlier appends to the
	// key (L is the serial state or the snapshot). If the read does not end with those
	// appends, no order explains it.
	for t := 0; t < n; t++ {
		if s.ok&(1<<t) == 0 {
			continue
		}
		for k := range s.own {
			s.own[k] = s.own[k][:0]
		}
		for _, op := range h.TxnOps(t) {
			if op.Kind == history.Append {
				s.own[op.Key] = append(s.own[op.Key], op.Value)
				continue
			}
			if !op.Known {
				continue
			}
			r := h.ReadValues[op.Start:op.End]
			own := s.own[op.Key]
			snapLen := len(r) - len(own)
			if snapLen < 0 || !equal(r[snapLen:], own) {
				s.impossible = true
				continue
			}
			rd := readRef{txn: t, key: op.Key, read: r, snapLen: snapLen}
			s.readsOf[op.Key] = append(s.readsOf[op.Key], rd)
			s.readsBy[t] = append(s.readsBy[t], rd)
		}
	}
	return s
}

// run reports whether some order of exactly the transactions in committed explains
// every read.
func (s *search) run(committed uint64) bool {
	s.committed = committed
	for x := range s.lists {
		s.lists[x] = s.lists[x][:0]
	}
	keys := len(s.lists)
	s.lenHist = s.lenHist[:0]
	for range keys {
		s.lenHist = append(s.lenHist, 0)
	}
	if s.failed == nil {
		s.failed = make(map[string]struct{})
	} else {
		clear(s.failed)
	}
	return s.extend(0, 0)
}

// extend tries every committed transaction whose predecessors are all placed as the
// next one (position p) after the placed ones.
func (s *search) extend(placed uint64, p int) bool {
	if placed == s.committed {
		return true
	}
	if !s.snapshot {
		// Serial execution: what is left to do depends only on which transactions are
		// placed and on the lists of keys still to be read, so a failure is remembered
		// under that state and not explored again through another order.
		if _, seen := s.failed[string(s.stateKey(placed))]; seen {
			return false
		}
		if s.tryEach(placed, p) {
			return true
		}
		// The search below restored every list, so the key is the same as above.
		s.failed[string(s.stateKey(placed))] = struct{}{}
		return false
	}
	return s.tryEach(placed, p)
}

func (s *search) tryEach(placed uint64, p int) bool {
	keys := len(s.lists)
	for t := 0; t < s.n; t++ {
		bit := uint64(1) << t
		if s.committed&bit == 0 || placed&bit != 0 || s.pred[t]&s.committed&^placed != 0 {
			continue
		}
		if !s.readsHold(t, placed, p) {
			continue
		}
		// Commit t: its appends extend the lists, in program order.
		mark := len(s.buf)
		for x := range s.lists {
			s.buf = binary.AppendUvarint(s.buf, uint64(len(s.lists[x])))
		}
		for _, op := range s.h.TxnOps(t) {
			if op.Kind == history.Append {
				s.lists[op.Key] = append(s.lists[op.Key], op.Value)
			}
		}
		s.pos[t] = p
		if s.snapshot {
			for x := range keys {
				s.lenHist = append(s.lenHist, int32(len(s.lists[x])))
			}
		}
		if s.futureReadsPossible(t, placed|bit) &&
			(!s.snapshot || s.snapshotsLeft(placed|bit, p+1)) &&
			s.extend(placed|bit, p+1) {
			return true
		}
		// Undo: restore the list lengths saved at mark.
		rest := s.buf[mark:]
		for x := range s.lists {
			l, w := binary.Uvarint(rest)
			rest = rest[w:]
			s.lists[x] = s.lists[x][:l]
		}
		s.buf = s.buf[:mark]
		if s.snapshot {
			s.lenHist = s.lenHist[:len(s.lenHist)-keys]
		}
	}
	return false
}

// readsHold reports whether t, committed at position p after the placed transactions,
// can have returned its reads: serially, it sees the current lists; under snapshot
// isolation, it sees the lists after some s <= p commits, with s after every placed
// transaction that appends to a key t appends to (else the two would be concurrent).
func (s *search) readsHold(t int, placed uint64, p int) bool {
	if s.ok&(1<<t) == 0 {
		return true // only :ok transactions have known reads
	}
	if !s.snapshot {
		return s.readsSee(t, -1)
	}
	lo := 0
	for u := 0; u < s.n; u++ {
		if placed&s.conflict[t]&(1<<u) != 0 {
			lo = max(lo, s.pos[u]+1)
		}
	}
	for snap := p; snap >= lo; snap-- {
		if s.readsSee(t, snap) {
			return true
		}
	}
	return false
}

// readsSee executes t's micro-ops against the lists after the first snap commits (the
// current lists if snap < 0) and reports whether every known read returns what it did.
func (s *search) readsSee(t int, snap int) bool {
	keys := len(s.lists)
	for _, op := range s.h.TxnOps(t) {
		s.own[op.Key] = s.own[op.Key][:0]
	}
	for _, op := range s.h.TxnOps(t) {
		if op.Kind == history.Append {
			s.own[op.Key] = append(s.own[op.Key], op.Value)
			continue
		}
		if !op.Known {
			continue
		}
		seen := s.lists[op.Key]
		if snap >= 0 {
			seen = seen[:s.lenHist[snap*keys+int(op.Key)]]
		}
		r := s.h.ReadValues[op.Start:op.End]
		own := s.own[op.Key]
		if len(r) != len(seen)+len(own) || !equal(r[:len(seen)], seen) || !equal(r[len(seen):], own) {
			return false
		}
	}
	return true
}

// futureReadsPossible prunes: lists only grow, and every read returns a prefix of the
// final list followed by the reader's own appends. So for every read still to come,
// the part before the reader's own appends must, serially, start with the current list
// (the reader runs later); under snapshot isolation it is a prefix of the final list, as
// is the current list, so the two must agree on their common length. Only keys that
// the transaction just committed (t) appended to have changed.
func (s *search) futureReadsPossible(t int, placed uint64) bool {
	for _, op := range s.h.TxnOps(t) {
		if op.Kind != history.Append {
			continue
		}
		cur := s.lists[op.Key]
		for _, rd := range s.readsOf[op.Key] {
			if placed&(1<<rd.txn) != 0 || s.committed&(1<<rd.txn) == 0 {
				continue
			}
			if !s.snapshot && len(cur) > rd.snapLen {
				return false
			}
			n := min(len(cur), rd.snapLen)
			if !equal(cur[:n], rd.read[:n]) {
				return false
			}
		}
	}
	return true
}

// snapshotsLeft prunes snapshot isolation, with p transactions placed: a transaction
// still to commit that read some key shorter (before its own appends) than the key's
// list is now cannot use a later snapshot (lists only grow), so one of the snapshots
// that exist and that it may still take (after every placed writer of a key it writes)
// must explain its reads.
func (s *search) snapshotsLeft(placed uint64, p int) bool {
	for u := 0; u < s.n; u++ {
		if s.committed&(1<<u) == 0 || placed&(1<<u) != 0 {
			continue
		}
		past := false
		for _, rd := range s.readsBy[u] {
			if rd.snapLen < len(s.lists[rd.key]) {
				past = true
				break
			}
		}
		if past && !s.readsHold(u, placed, p) {
			return false
		}
	}
	return true
}

// stateKey encodes what the rest of a serial search depends on: the placed set and the
// lists of keys that transactions not yet placed read.
func (s *search) stateKey(placed uint64) []byte {
	k := s.buf[len(s.buf):]
	k = binary.LittleEndian.AppendUint64(k, placed)
	for x, reads := range s.readsOf {
		read := false
		for _, rd := range reads {
			if placed&(1<<rd.txn) == 0 && s.committed&(1<<rd.txn) != 0 {
				read = true
				break
			}
		}
		if !read {
			continue
		}
		k = binary.AppendUvarint(k, uint64(x))
		k = binary.AppendUvarint(k, uint64(len(s.lists[x])))
		for _, v := range s.lists[x] {
			k = binary.AppendVarint(k, int64(v))
		}
	}
	return k
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
