// Package workload describes list-append workloads, generates their transactions, and
// runs them against simulated or real databases.
package workload

import "flag"

// Spec is a list-append workload: what `doppel gen` and `doppel run` both take, so that
// a workload means the same thing in both (the paper's appendix C parameters).
type Spec struct {
	Sessions  int     `json:"sessions"`   // concurrent sessions (client processes)
	Txns      int     `json:"txns"`       // transactions in total
	Ops       int     `json:"ops"`        // micro-ops per transaction
	Keys      int     `json:"keys"`       // number of keys
	Reads     float64 `json:"reads"`      // fraction of micro-ops that are reads
	KeyDist   string  `json:"key_dist"`   // uniform | zipf | hotspot
	KeyZipf   float64 `json:"key_zipf"`   // θ for --key-dist zipf
	DupKeys   float64 `json:"dup_keys"`   // fraction of keys whose appended values may repeat
	ValZipf   float64 `json:"val_zipf"`   // θ of the value distribution on duplicate keys
	ValDomain int     `json:"val_domain"` // N: values on duplicate keys are drawn from 1..N
	Seed      int64   `json:"seed"`
	// KeyRotate: every KeyRotate transactions, a session moves to fresh keys (key +
	// Keys × generation), as Jepsen retires keys, so that lists — which every read
	// returns whole — stay short in long runs. 0 never rotates.
	KeyRotate int `json:"key_rotate"`
}

// DefaultSpec is a small, contended, duplicate-heavy workload.
func DefaultSpec() Spec {
	return Spec{
		Sessions: 8, Txns: 2000, Ops: 4, Keys: 10, Reads: 0.5,
		KeyDist: "uniform", KeyZipf: 1.0, DupKeys: 0.5, ValZipf: 1.0, ValDomain: 10, Seed: 1,
	}
}

// RegisterFlags adds the workload flags to fs, with defaults from s.
func (s *Spec) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&s.Sessions, "sessions", s.Sessions, "concurrent sessions")
	fs.IntVar(&s.Txns, "txns", s.Txns, "transactions in total")
	fs.IntVar(&s.Ops, "ops", s.Ops, "micro-ops per transaction")
	fs.IntVar(&s.Keys, "keys", s.Keys, "number of keys")
	fs.Float64Var(&s.Reads, "reads", s.Reads, "fraction of micro-ops that are reads")
	fs.StringVar(&s.KeyDist, "key-dist", s.KeyDist, "key distribution: uniform, zipf or hotspot")
	fs.Float64Var(&s.KeyZipf, "key-zipf", s.KeyZipf, "zipf θ of the key distribution")
	fs.Float64Var(&s.DupKeys, "dup-keys", s.DupKeys, "fraction of keys that allow duplicate values")
	fs.Float64Var(&s.ValZipf, "val-zipf", s.ValZipf, "zipf θ of values on duplicate keys")
	fs.IntVar(&s.ValDomain, "val-domain", s.ValDomain, "values on duplicate keys come from 1..N")
	fs.Int64Var(&s.Seed, "seed", s.Seed, "random seed")
	fs.IntVar(&s.KeyRotate, "key-rotate", s.KeyRotate, "every N transactions of a session, move to fresh keys (keeps lists short in long runs); 0 never")
}
