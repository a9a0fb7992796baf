package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"doppel/history"
)

// Anomalies the simulator can inject, once each, into an otherwise serializable run.
// Each is a pair of concurrent :ok transactions on keys that allow duplicate values,
// appending values that already occur on the key, so that no unique value gives the
// anomaly away.
const (
	// T1 = [r x, r y, append y v], T2 = [r x, r y, append x w]: both read x and y from
	// the same state, then both commit (allowed by snapshot isolation).
	InjectWriteSkew = "write-skew"
	// T1 = [r x, append x v], T2 = [r x, append x w]: both read x at the same length;
	// T2 writes back what it read plus w, so T1's append is lost.
	InjectLostUpdate = "lost-update"
	// T1 = [r x, r y], T2 = [r x, r y, append x v, append y w]: T1 reads x after T2 and
	// y before T2 (read skew). T2's reads pin its appends to the positions right after
	// what it read: without them, the duplicate values could be attributed so that T2's
	// append to y is an earlier one T1 saw, and the history would be valid.
	InjectGSingle = "g-single"
)

// AllInjections lists the anomalies --inject knows.
var AllInjections = []string{InjectWriteSkew, InjectLostUpdate, InjectGSingle}

// ErrCannotInject: the run ended before every requested anomaly could be injected.
var ErrCannotInject = errors.New("could not inject")

// DefaultInjectAt is the fraction of the run at which anomalies are injected by default.
const DefaultInjectAt = 0.5

// Injection is one injected anomaly: its kind and the :index of the invoke events of
// its two transactions, T1 then T2 (T1 is invoked first).
type Injection struct {
	Kind    string
	Invokes [2]int64
}

func (in Injection) String() string {
	return fmt.Sprintf("injected %s: invoke indexes %d, %d", in.Kind, in.Invokes[0], in.Invokes[1])
}

// validateInject reports the first bad injection option.
func (o SimOptions) validateInject() error {
	if len(o.Inject) == 0 {
		return nil
	}
	if o.Behaviour != "" && o.Behaviour != SimSerializable {
		return fmt.Errorf("anomalies can be injected only into the serializable behaviour, got %q", o.Behaviour)
	}
	if !(o.InjectAt >= 0 && o.InjectAt <= 1) {
		return fmt.Errorf("inject-at must be a fraction in [0, 1], got %v", o.InjectAt)
	}
	for i, kind := range o.Inject {
		if !slices.Contains(AllInjections, kind) {
			return fmt.Errorf("unknown anomaly to inject %q (known: %v)", kind, AllInjections)
		}
		if slices.Contains(o.Inject[:i], kind) {
			return fmt.Errorf("anomaly %q to inject listed twice", kind)
		}
	}
	return nil
}

// Roles of a session's open transaction in an injection.
const (
	injectNone   uint8 = iota
	injectFirst        // T1: invoked first; takes effect with T2, or alone if no T2 comes
	injectSecond       // T2: its effect point executes both transactions
)

// injector carries out SimOptions.Inject: when the run reaches the injection point,
// the next transaction invoked becomes T1 of the next anomaly, and the next one invoked
// by another session while T1 is still open becomes T2. Both then take effect together,
// at T2's effect point (inside both intervals), so that, to every other transaction,
// the pair looks like one atomic step of a serializable database.
type injector struct {
	pending []string // anomalies still to inject, in order
	at      int      // inject once this many transactions have been invoked
	rng     *rand.Rand
	first   int // session of T1 of the open injection, -1 none
	second  int // session of T2, -1 none yet
	x, y    int64
	done    []Injection
}

func newInjector(spec Spec, opt SimOptions) *injector {
	return &injector{
		pending: slices.Clone(opt.Inject),
		at:      int(opt.InjectAt * float64(spec.Txns)),
		// Its own stream, so that injecting leaves the schedule's random draws alone.
		rng:    rand.New(rand.NewPCG(uint64(spec.Seed), 0x696e6a656374)),
		first:  -1,
		second: -1,
	}
}

// candidateKeys returns the keys that allow duplicate values and already hold a value.
func (sim *simulator) candidateKeys() []int64 {
	src := sim.sessions[0].src
	var keys []int64
	for k, list := range sim.db.lists {
		if len(list) > 0 && src.IsDupKey(int64(k)) {
			keys = append(keys, int64(k))
		}
	}
	return keys
}

// existingValue returns a value already on key k's list (at a random position, so
// frequent values are favoured, as the workload favours them).
func (sim *simulator) existingValue(k int64) int64 {
	list := sim.db.lists[k]
	return list[sim.inject.rng.IntN(len(list))]
}

// injectInvoke is called when session si invokes a transaction at time t, before the
// invoke is emitted: it may replace the transaction's micro-ops by those of an
// injected anomaly. It reports whether it did.
func (sim *simulator) injectInvoke(si int, t int64) bool {
	inj := sim.inject
	if inj == nil || len(inj.pending) == 0 || sim.started < inj.at {
		return false
	}
	s := &sim.sessions[si]
	read := func(k int64) history.Op { return history.Op{Key: k} }
	appendOp := func(k int64) history.Op {
		return history.Op{Key: k, Append: true, Value: sim.existingValue(k)}
	}
	kind := inj.pending[0]
	if inj.first < 0 {
		keys := sim.candidateKeys()
		need := 2
		if kind == InjectLostUpdate {
			need = 1
		}
		if len(keys) < need {
			return false // too early: try again at the next invoke
		}
		i := inj.rng.IntN(len(keys))
		inj.x = keys[i]
		if need == 2 {
			j := inj.rng.IntN(len(keys) - 1)
			if j >= i {
				j++
			}
			inj.y = keys[j]
		}
		switch kind {
		case InjectWriteSkew:
			s.ops = []history.Op{read(inj.x), read(inj.y), appendOp(inj.y)}
		case InjectLostUpdate:
			s.ops = []history.Op{read(inj.x), appendOp(inj.x)}
		case InjectGSingle:
			s.ops = []history.Op{read(inj.x), read(inj.y)}
		}
		inj.first, s.inject = si, injectFirst
		return true
	}
	// T1 is open. Pair with it only if the joint effect at t+1 falls strictly inside
	// T1's interval, before T1's own effect point (end-1, see invoke).
	if inj.second >= 0 || sim.sessions[inj.first].end-1 <= t+1 {
		return false
	}
	switch kind {
	case InjectWriteSkew:
		s.ops = []history.Op{read(inj.x), read(inj.y), appendOp(inj.x)}
	case InjectLostUpdate:
		s.ops = []history.Op{read(inj.x), appendOp(inj.x)}
	case InjectGSingle:
		s.ops = []history.Op{read(inj.x), read(inj.y), appendOp(inj.x), appendOp(inj.y)}
	}
	inj.second, s.inject = si, injectSecond
	return true
}

// injectEffect runs the effect point of s, which has an injection role, at time t.
// It reports whether it handled the effect; if not, s takes effect as usual.
func (sim *simulator) injectEffect(s *simSession, t int64) bool {
	inj := sim.inject
	if s.inject == injectFirst {
		if s.merged {
			return true // already executed together with T2
		}
		// No T2 came in time: T1 runs alone (it is then an ordinary serializable
		// transaction) and the anomaly is tried again with later transactions.
		inj.first = -1
		s.inject = injectNone
		return false
	}
	t1, t2 := &sim.sessions[inj.first], s
	db := sim.db
	readNow := func(op *history.Op) { op.Read = db.readPrefix(op.Key, len(db.lists[op.Key])) }
	t1.result, t2.result = slices.Clone(t1.ops), slices.Clone(t2.ops)
	kind := inj.pending[0]
	switch kind {
	case InjectWriteSkew:
		// Both read x and y from the same state, then each appends to the key the
		// other one read.
		for _, r := range [][]history.Op{t1.result, t2.result} {
			readNow(&r[0])
			readNow(&r[1])
		}
		db.appendValue(inj.y, t1.ops[2].Value, t1.invoke, t)
		db.appendValue(inj.x, t2.ops[2].Value, t2.invoke, t)
	case InjectLostUpdate:
		// Both read x at the same length; T1 writes its read plus its value, then T2
		// overwrites x with its own stale read plus its value.
		readNow(&t1.result[0])
		readNow(&t2.result[0])
		db.appendValue(inj.x, t2.ops[1].Value, t2.invoke, t)
	case InjectGSingle:
		// T1 reads y before T2 and x after it.
		readNow(&t1.result[1])
		readNow(&t2.result[0])
		readNow(&t2.result[1])
		db.appendValue(inj.x, t2.ops[2].Value, t2.invoke, t)
		db.appendValue(inj.y, t2.ops[3].Value, t2.invoke, t)
		readNow(&t1.result[0])
	}
	t1.merged, t2.merged = true, true
	inj.done = append(inj.done, Injection{Kind: kind, Invokes: [2]int64{t1.invoke, t2.invoke}})
	inj.pending = inj.pending[1:]
	inj.first, inj.second = -1, -1
	if sim.hooks.commit != nil {
		for _, x := range []*simSession{t1, t2} {
			sim.hooks.commit(simCommit{invoke: x.invoke, time: t, ops: x.result, outcome: x.outcome})
		}
	}
	return true
}
