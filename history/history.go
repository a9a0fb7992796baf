// Package history holds the list-append history model and its parsers and writers.
//
// Two views of a history exist. Event is one line of a Jepsen history file (an invoke or
// a completion) with integer keys and values; generators and runners produce Events and
// write them. History is the checker's view: one Txn per transaction (an invoke paired
// with its completion), keys and values interned into dense int32 ids, micro-operations
// in flat slices.
package history

import (
	"cmp"
	"slices"
)

// Type is the :type of a history event.
type Type uint8

const (
	TypeInvoke Type = iota
	TypeOK
	TypeFail
	TypeInfo
)

// Op is one micro-operation of an Event: [:append k v] or [:r k [v...]].
type Op struct {
	Append bool
	Key    int64
	Value  int64 // the appended value (Append only)
	// Read is the list read (reads only), written as nil when nil: not known in an
	// invocation or an :info completion, the empty list in an :ok one (as Elle reads it).
	Read []int64
}

// Event is one line of a history file, as generators and runners produce it.
type Event struct {
	Index   int64 // :index; written as given
	Time    int64 // :time in nanoseconds; written as given
	Type    Type
	Process int64
	Value   []Op   // :value of an :f :txn operation
	Error   string // optional :error, written as a string when non-empty
	// F is "" for a transaction (:f :txn). Otherwise the event is a nemesis action as
	// Jepsen records one: :process :nemesis (Process is not written), :f F (:kill,
	// :start, :pause, :resume, ...), :value Note (a string; nil when empty), and no
	// Value. Checkers skip it; it marks when a fault happened.
	F    string
	Note string
}

// IsNemesis reports whether e is a nemesis action rather than a transaction.
func (e *Event) IsNemesis() bool { return e.F != "" }

// Status is the outcome of a transaction.
type Status uint8

const (
	// OK: committed; its reads must be explained.
	OK Status = iota
	// Info: may or may not have committed (an :info completion, or an invoke never
	// completed). Its appends happened all or not at all; its reads are unknown.
	Info
	// Fail: certainly did not commit; its appends must never be observed.
	Fail
)

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Info:
		return "info"
	case Fail:
		return "fail"
	}
	return "?"
}

// Kind says what a micro-operation does.
type Kind uint8

const (
	Append Kind = iota
	Read
)

// MicroOp is one micro-operation of a Txn, with interned key and value ids.
type MicroOp struct {
	Kind Kind
	// Known: the read's result is known. Every read of an :ok completion is (nil there is
	// the empty list); a cut history (a counterexample) may also drop what an :ok read
	// saw, and the writers leave such reads out, having no way to say "not known".
	Known bool
	Key   int32 // index into History.Keys
	Value int32 // Append: index into History.Values
	// Read: the list read is History.ReadValues[Start:End] (value ids).
	Start, End int32
}

// Txn is one transaction: an invoke paired with its completion.
type Txn struct {
	Status  Status
	Process int32 // index into History.Processes, -1 if the ops carry no :process
	// Invoke and Complete are positions in the history's sequence of client events
	// (0, 1, 2, ... in file order), used for real-time order. Invoke is -1 when the
	// history has no invoke for this transaction (it is then taken to start before
	// everything); Complete is -1 when the transaction never completed, and for :info.
	Invoke, Complete int32
	Index            int64 // :index of the completion (of the invoke if none), -1 if absent
	Line             int32 // file line of the completion (of the invoke if none), 1-based
	OpStart, OpEnd   int32 // the transaction's micro-ops are History.Ops[OpStart:OpEnd]
}

// History is a parsed list-append history, ready for checking.
type History struct {
	Source     string // file name, for messages
	Txns       []Txn  // in completion order (never-completed ones last, in invoke order)
	Ops        []MicroOp
	ReadValues []int32
	// Printed forms of interned ids, as they appear in EDN: 3, :x, "s".
	Keys      []string
	Values    []string
	Processes []string
	Events    int // client events (invokes and completions) seen, including non-:txn ones skipped
}

// MeanOKDuration is the mean duration of the :ok transactions with an invoke, in event
// positions (0 when there is none): the estimate of how long an :info one ran.
func (h *History) MeanOKDuration() int64 {
	var sum, cnt int64
	for i := range h.Txns {
		if tx := &h.Txns[i]; tx.Status == OK && tx.Invoke >= 0 && tx.Complete >= 0 {
			sum += int64(tx.Complete - tx.Invoke)
			cnt++
		}
	}
	if cnt == 0 {
		return 0
	}
	return sum / cnt
}

// Midpoint estimates when transaction t took effect, in event positions times two: the
// middle of its interval; without a completion (:info), after every completed one.
func (h *History) Midpoint(t int32) int64 {
	tx := &h.Txns[t]
	switch {
	case tx.Complete >= 0 && tx.Invoke >= 0:
		return int64(tx.Invoke) + int64(tx.Complete)
	case tx.Complete >= 0:
		return 2 * int64(tx.Complete)
	case tx.Invoke >= 0:
		return 2*int64(tx.Invoke) + 1<<40
	}
	return 1 << 41
}

// SortByProcess sorts transactions txns by process, then invocation, then index: the
// order of each process's transactions, which its process edges follow.
func (h *History) SortByProcess(txns []int32) {
	slices.SortFunc(txns, func(x, y int32) int {
		a, b := &h.Txns[x], &h.Txns[y]
		if a.Process != b.Process {
			return cmp.Compare(a.Process, b.Process)
		}
		if a.Invoke != b.Invoke {
			return cmp.Compare(a.Invoke, b.Invoke)
		}
		return cmp.Compare(x, y)
	})
}

// TxnOps returns the micro-ops of transaction t.
func (h *History) TxnOps(t int) []MicroOp {
	tx := &h.Txns[t]
	return h.Ops[tx.OpStart:tx.OpEnd]
}

// ReadList returns the values read by op (nil for an unknown read).
func (h *History) ReadList(op *MicroOp) []int32 {
	if op.Kind != Read || !op.Known {
		return nil
	}
	return h.ReadValues[op.Start:op.End]
}
