package main

import (
	"fmt"

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
		return profile.Start(profile.MemProfile, profile.ProfilePath("."), profile.Quiet).Stop, nil
	}
	return nil, fmt.Errorf("--profile must be cpu or mem, not %q", kind)
}
