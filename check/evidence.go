package check

// CountsFor reports whether anomaly a counts against model m: m forbids its type, and
// it holds in every attribution or was proved under a model whose graph lies within
// m's.
func CountsFor(a *Anomaly, m string) bool {
	return forbids(m, a.Type) && (a.Model == "" || graphWithin(a.Model, m))
}
