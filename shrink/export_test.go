package shrink

// RefuteOnlyAbove is refuteOnlyAbove, for the tests outside the package (which import
// workload, itself an importer of this package).
const RefuteOnlyAbove = refuteOnlyAbove
