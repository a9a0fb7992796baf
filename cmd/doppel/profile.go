package main

import (
	"fmt"
	"runtime"

	"github.com/pkg/profile"
)

// startProfile starts the --profile switch's profiler ("" for none) and returns its stop.
func startProfile(kind string) (func(), error) {
	switch kind {
	case "":
		return func() {}, nil
	case "cpu":
		return profile.Start(profile.CPUProfile, profile.ProfilePath("."), profile.Quiet).Stop, nil
	case "mem":
		stop := profile.Start(profile.MemProfile, profile.ProfilePath("."), profile.Quiet).Stop
		// A heap profile shows the allocations as of the last collection: without one
		// here, everything allocated since (often all but the parse of a big history)
		// would be missing.
		return func() { runtime.GC(); stop() }, nil
	}
	return nil, fmt.Errorf("--profile must be cpu or mem, not %q", kind)
}
