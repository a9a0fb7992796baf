package main

import "testing"

func TestParseBytes(t *testing.T) {
	good := map[string]int64{"0": 0, "512MiB": 512 << 20, "4GiB": 4 << 30, "2GB": 2e9, "1.5gib": 3 << 29, "100": 100, "7k": 7 << 10}
	for s, want := range good {
		if got, err := parseBytes(s); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "GiB", "-1GiB", "4 parsecs", "1..2G"} {
		if _, err := parseBytes(s); err == nil {
			t.Errorf("parseBytes(%q) accepted", s)
		}
	}
	if _, err := parseBytes(defaultMaxMemory()); err != nil {
		t.Errorf("the default %q does not parse: %v", defaultMaxMemory(), err)
	}
}
