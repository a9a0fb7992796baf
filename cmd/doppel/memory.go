package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// defaultMaxMemory is --max-memory's default: 3/4 of the machine's memory (MemTotal in
// /proc/meminfo), so that a check which would outgrow the machine ends with "unknown"
// and a message rather than being killed; "0" (no limit) where that cannot be read.
func defaultMaxMemory() string {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return "0"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb <= 0 {
				return "0"
			}
			return fmt.Sprintf("%dMiB", kb*3/4/1024)
		}
	}
	return "0"
}

// parseBytes reads a size: a number with an optional unit (B, KB, MB, GB, TB as powers
// of 1000; KiB, MiB, GiB, TiB as powers of 1024; case does not matter). 0 means none.
func parseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (a number with an optional unit: 512MiB, 4GiB, 2GB; 0 for no limit)", s)
	}
	mult := map[string]float64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("%q: unknown unit %q (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", s, t[i:])
	}
	return int64(v * mult), nil
}
