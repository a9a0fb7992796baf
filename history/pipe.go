package history

import (
	"errors"
	"sync/atomic"
)

// A parse runs in two goroutines: the parser reads operations into batches, and the
// Builder takes the batches, in order, in a goroutine of its own. Reading and
// interning each take about half the time of a parse, so on two free cores a parse
// takes less time (1M transactions, 1.1 GB of EDN: 3.7 s instead of 5 s).
//
// The Builder gets the operations in file order, as in a parse in one goroutine, so
// the History is the same. So are errors: all operations before a syntax error reach
// the Builder before the parse returns, and an error of the Builder, which comes from
// an operation before the parser's current one, takes precedence.

// Limits of a batch: small enough to stay in the processors' caches.
const (
	batchOps   = 256
	batchMops  = 4096
	batchReads = 1 << 14
	batchText  = 1 << 16
	batches    = 3 // in all: one filling, up to two waiting or being built
)

// batch is a run of operations on their way from the parser to the Builder.
type batch struct {
	ops   []batchOp
	mops  []rawMicro
	reads []scalar
	text  []byte // the printed forms of the scalars that are not integers
}

// batchOp is one operation of a batch.
type batchOp struct {
	rec    opRecord // but for its mops, reads and text (see Builder.consume)
	ms, me int32    // its micro-ops are batch.mops[ms:me]
	rs, re int32    // its reads batch.reads[rs:re] (rawMicro.rs and re count from rs)
	done   int64    // input bytes read after it, for progress.done
	skip   bool     // not a :txn operation: Builder.Skip
}

// errBuilderFailed stops the parser when the Builder has failed (with its own error).
var errBuilderFailed = errors.New("history: the Builder failed")

// pipe connects the parser and the Builder.
type pipe struct {
	cur    *batch      // the batch being filled
	full   chan *batch // batches for the Builder
	free   chan *batch // batches back from it
	failed atomic.Bool // the Builder failed: stop reading
	result chan error  // the Builder's error, nil if none, once it has all batches
}

func (p *parser) startPipe() {
	p.pipe = pipe{cur: new(batch), full: make(chan *batch, batches-1), free: make(chan *batch, batches), result: make(chan error, 1)}
	for i := 1; i < batches; i++ {
		p.pipe.free <- new(batch)
	}
	go func(b *Builder, q *pipe) { q.result <- b.consume(q) }(p.b, &p.pipe)
}

// closePipe sends the last batch and waits for the Builder to build everything; it
// returns the Builder's error.
func (p *parser) closePipe() error {
	q := &p.pipe
	if len(q.cur.ops) > 0 {
		q.full <- q.cur
	}
	q.cur = nil
	close(q.full)
	return <-q.result
}

// consume builds the batches of q, in order, until q.full is closed.
func (b *Builder) consume(q *pipe) error {
	var err error
	for bt := range q.full {
		for i := 0; i < len(bt.ops) && err == nil; i++ {
			o := &bt.ops[i]
			if o.skip {
				b.Skip()
				continue
			}
			r := o.rec
			r.mops, r.reads, r.text = bt.mops[o.ms:o.me], bt.reads[o.rs:o.re], bt.text
			b.prog.done = o.done
			if err = b.add(&r); err != nil {
				q.failed.Store(true)
			}
		}
		q.free <- bt
	}
	return err
}

// push adds an operation, whose micro-ops and reads are already at the end of the
// current batch (from ms and rs on) and whose scalars that are not integers are
// printed in text, to the batch; it sends the batch on if it is full.
func (p *parser) push(r *opRecord, ms, rs int, text []byte, hasText bool, done int64) error {
	bt := p.pipe.cur
	o := batchOp{rec: *r, ms: int32(ms), me: int32(len(bt.mops)), rs: int32(rs), re: int32(len(bt.reads)), done: done}
	o.rec.mops, o.rec.reads, o.rec.text = nil, nil, nil
	if hasText {
		// Copy the printed forms into the batch.
		move := func(sc *scalar) {
			if sc.te != 0 {
				n := len(bt.text)
				bt.text = append(bt.text, text[sc.ts:sc.te]...)
				sc.ts, sc.te = int32(n), int32(len(bt.text))
			}
		}
		if o.rec.hasProcess {
			move(&o.rec.process)
		}
		for i := ms; i < len(bt.mops); i++ {
			move(&bt.mops[i].key)
			move(&bt.mops[i].value)
		}
		for i := rs; i < len(bt.reads); i++ {
			move(&bt.reads[i])
		}
	}
	bt.ops = append(bt.ops, o)
	return p.sendIfFull()
}

// emit adds the operation in r, micro-ops and reads included, to the current batch.
func (p *parser) emit(r *opRecord, done int64) error {
	bt := p.pipe.cur
	ms, rs := len(bt.mops), len(bt.reads)
	bt.mops = append(bt.mops, r.mops...)
	bt.reads = append(bt.reads, r.reads...)
	return p.push(r, ms, rs, r.text, true, done)
}

// skip adds an operation that is not a transaction.
func (p *parser) skip() error {
	bt := p.pipe.cur
	bt.ops = append(bt.ops, batchOp{skip: true})
	return p.sendIfFull()
}

func (p *parser) sendIfFull() error {
	q := &p.pipe
	bt := q.cur
	if len(bt.ops) < batchOps && len(bt.mops) < batchMops && len(bt.reads) < batchReads && len(bt.text) < batchText {
		return nil
	}
	if q.failed.Load() {
		return errBuilderFailed
	}
	// Once per batch (a few hundred operations): cheap beside reading them.
	if p.stop != nil && p.askStop() {
		return p.stopped()
	}
	q.full <- bt
	bt = <-q.free
	bt.ops, bt.mops, bt.reads, bt.text = bt.ops[:0], bt.mops[:0], bt.reads[:0], bt.text[:0]
	q.cur = bt
	return nil
}

// askStop asks the stop hook, and remembers it did.
func (p *parser) askStop() bool {
	p.asked = true
	return p.stop()
}
