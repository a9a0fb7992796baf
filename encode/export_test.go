package encode

// SegmentAndReference returns key k's plan by segment and by segmentReference, each
// with a fresh scratch, within win (nil: none).
func SegmentAndReference(in *Inference, k int32, win *Windows, useCuts, usePins bool) (got, want Plan) {
	sc, ref := newScratch(in, false), newScratch(in, false)
	sc.win, ref.win = win, win
	return sc.segment(k, useCuts, usePins), ref.segmentReference(k, useCuts, usePins)
}

// SamePlan is samePlan for tests outside the package.
var SamePlan = samePlan

// RandomWindows is randomWindows for tests outside the package.
var RandomWindows = randomWindows

// CompareSegmentable is compareSegmentable for tests outside the package.
var CompareSegmentable = compareSegmentable
