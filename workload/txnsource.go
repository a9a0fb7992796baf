package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"doppel/history"
)

// Limits that keep a workload's precomputed tables (one float64 per key or value) in memory.
const (
	maxKeys      = 10_000_000
	maxValDomain = 10_000_000
	maxOps       = 1_000_000
	maxSessions  = 1_000_000
)

// Validate reports the first bad parameter of s, in words a user can act on.
func (s Spec) Validate() error {
	switch {
	case s.Sessions < 1 || s.Sessions > maxSessions:
		return fmt.Errorf("sessions must be between 1 and %d, got %d", maxSessions, s.Sessions)
	case s.Txns < 0:
		return fmt.Errorf("txns must be >= 0, got %d", s.Txns)
	case s.Ops < 1 || s.Ops > maxOps:
		return fmt.Errorf("ops must be between 1 and %d, got %d", maxOps, s.Ops)
	case s.Keys < 1 || s.Keys > maxKeys:
		return fmt.Errorf("keys must be between 1 and %d, got %d", maxKeys, s.Keys)
	case !(s.Reads >= 0 && s.Reads <= 1):
		return fmt.Errorf("reads must be a fraction in [0, 1], got %v", s.Reads)
	case s.KeyDist != "uniform" && s.KeyDist != "zipf" && s.KeyDist != "hotspot":
		return fmt.Errorf("key-dist must be uniform, zipf or hotspot, got %q", s.KeyDist)
	case !(s.KeyZipf >= 0) || math.IsInf(s.KeyZipf, 0):
		return fmt.Errorf("key-zipf must be a finite θ >= 0, got %v", s.KeyZipf)
	case !(s.DupKeys >= 0 && s.DupKeys <= 1):
		return fmt.Errorf("dup-keys must be a fraction in [0, 1], got %v", s.DupKeys)
	case !(s.ValZipf >= 0) || math.IsInf(s.ValZipf, 0):
		return fmt.Errorf("val-zipf must be a finite θ >= 0, got %v", s.ValZipf)
	case s.ValDomain < 1 || s.ValDomain > maxValDomain:
		return fmt.Errorf("val-domain must be between 1 and %d, got %d", maxValDomain, s.ValDomain)
	case s.KeyRotate < 0:
		return fmt.Errorf("key-rotate must be >= 0 (0: never), got %d", s.KeyRotate)
	}
	return nil
}

// keyModel is the part of a workload shared by all its sessions: the key and value
// distributions and which keys allow duplicate values. It is immutable once built, so
// sessions (and goroutines) share one.
type keyModel struct {
	keys    int
	dist    string
	keyCum  []float64 // zipf: cumulative unnormalised weights of keys 0..keys-1
	hotKeys int       // hotspot: keys 0..hotKeys-1 get hotShare of the accesses
	dup     []bool    // dup[k]: appends to key k draw values from 1..ValDomain
	valCum  []float64 // cumulative unnormalised zipf weights of values 1..ValDomain
}

// hotShare is the hotspot distribution's share of accesses that go to the hot 20% of keys.
const (
	hotShare    = 0.8
	hotFraction = 0.2
)

// zipfCum returns the cumulative weights of ranks 1..n under zipf θ: weight(r) = r^-θ.
// Unlike math/rand's Zipf this allows any θ >= 0 (θ = 0 is uniform).
func zipfCum(n int, theta float64) []float64 {
	cum := make([]float64, n)
	sum := 0.0
	for i := range cum {
		sum += math.Pow(float64(i+1), -theta)
		cum[i] = sum
	}
	return cum
}

// sampleCum draws an index i with probability proportional to cum[i]-cum[i-1].
func sampleCum(cum []float64, rng *rand.Rand) int {
	u := rng.Float64() * cum[len(cum)-1]
	lo, hi := 0, len(cum)-1
	for lo < hi { // first i with cum[i] > u
		mid := int(uint(lo+hi) >> 1)
		if cum[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func newKeyModel(s Spec) *keyModel {
	m := &keyModel{keys: s.Keys, dist: s.KeyDist}
	switch s.KeyDist {
	case "zipf":
		m.keyCum = zipfCum(s.Keys, s.KeyZipf)
	case "hotspot":
		m.hotKeys = max(1, int(math.Round(hotFraction*float64(s.Keys))))
	}
	// The duplicate keys are the first round(DupKeys*Keys) keys of a shuffle seeded by
	// the workload seed alone, so every session agrees on them.
	m.dup = make([]bool, s.Keys)
	nDup := int(math.Round(s.DupKeys * float64(s.Keys)))
	if nDup > 0 {
		perm := rand.New(rand.NewPCG(uint64(s.Seed), 0x6475706b657973)).Perm(s.Keys)
		for _, k := range perm[:nDup] {
			m.dup[k] = true
		}
		m.valCum = zipfCum(s.ValDomain, s.ValZipf)
	}
	return m
}

func (m *keyModel) key(rng *rand.Rand) int {
	switch m.dist {
	case "zipf":
		return sampleCum(m.keyCum, rng)
	case "hotspot":
		if m.hotKeys < m.keys && rng.Float64() >= hotShare {
			return m.hotKeys + rng.IntN(m.keys-m.hotKeys)
		}
		return rng.IntN(m.hotKeys)
	}
	return rng.IntN(m.keys)
}

// The last model built is cached: a simulator or runner creates one TxnSource per
// session of the same Spec, and the tables can be large.
var (
	modelMu        sync.Mutex
	modelSpec      Spec
	modelCached    *keyModel
	modelCachedSet bool
)

func sharedKeyModel(s Spec) *keyModel {
	key := s
	key.Sessions, key.Txns, key.Ops, key.Reads = 0, 0, 0, 0 // not used by the model
	modelMu.Lock()
	defer modelMu.Unlock()
	if !modelCachedSet || modelSpec != key {
		modelCached, modelSpec, modelCachedSet = newKeyModel(s), key, true
	}
	return modelCached
}

// TxnSource produces the micro-ops of each transaction of one session of a workload
// (reads carry Read == nil). Keys are 0..Keys-1; under zipf key 0 is the most frequent,
// under hotspot 80% of accesses go uniformly to keys 0..round(0.2*Keys)-1. Values are
// positive: on duplicate keys zipf-distributed over 1..ValDomain (1 most frequent);
// elsewhere c*Sessions + session + 1 for a per-session counter c, so unique across all
// keys and sessions without coordination. A TxnSource is not safe for concurrent use.
type TxnSource struct {
	spec    Spec
	model   *keyModel
	rng     *rand.Rand
	session int64
	counter int64 // unique values handed out by this session so far
	txns    int64 // transactions generated so far, for key rotation
}

// NewTxnSource returns the transaction source of session (0 <= session < spec.Sessions;
// other sessions may produce values that collide). It is deterministic in
// (spec.Seed, session). spec must be valid (see Validate); an invalid spec gives a
// source whose Next returns nil.
func NewTxnSource(spec Spec, session int) *TxnSource {
	g := &TxnSource{
		spec:    spec,
		rng:     rand.New(rand.NewPCG(uint64(spec.Seed), uint64(session)+0x7478)),
		session: int64(session),
	}
	if spec.Validate() == nil {
		g.model = sharedKeyModel(spec)
	}
	return g
}

// Next returns the micro-ops of the session's next transaction, in a new slice.
func (g *TxnSource) Next() []history.Op {
	if g.model == nil {
		return nil
	}
	ops := make([]history.Op, g.spec.Ops)
	var generation int64
	if g.spec.KeyRotate > 0 {
		generation = g.txns / int64(g.spec.KeyRotate)
	}
	g.txns++
	for i := range ops {
		op := &ops[i]
		read := g.rng.Float64() < g.spec.Reads
		k := g.model.key(g.rng)
		op.Key = int64(k) + generation*int64(g.spec.Keys)
		if read {
			continue
		}
		op.Append = true
		if g.model.dup[k] {
			op.Value = int64(sampleCum(g.model.valCum, g.rng)) + 1
		} else {
			op.Value = g.counter*int64(g.spec.Sessions) + g.session + 1
			g.counter++
		}
	}
	return ops
}

// IsDupKey reports whether appends to key k may repeat values.
func (g *TxnSource) IsDupKey(k int64) bool {
	if g.model == nil || k < 0 {
		return false
	}
	return g.model.dup[k%int64(len(g.model.dup))]
}
