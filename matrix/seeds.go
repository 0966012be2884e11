package matrix

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// MaxSeeds bounds a seed list.
const MaxSeeds = 10000

// ParseSeeds reads a seed list: comma-separated seeds and ranges, as in
// "1..10", "1,3,5" or "1..3,7". A range includes both ends. Seeds are
// below 10^18, no seed appears twice, and a list holds at most MaxSeeds.
func ParseSeeds(s string) ([]uint64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--seeds: empty (want e.g. 1..10 or 1,3,5)")
	}
	var seeds []uint64
	seen := make(map[uint64]bool)
	add := func(v uint64) error {
		if seen[v] {
			return fmt.Errorf("--seeds %q: seed %d twice", s, v)
		}
		if len(seeds) >= MaxSeeds {
			return fmt.Errorf("--seeds %q: more than %d seeds", s, MaxSeeds)
		}
		seen[v] = true
		seeds = append(seeds, v)
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "..")
		a, err := parseSeed(lo)
		if err != nil {
			return nil, fmt.Errorf("--seeds %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = parseSeed(hi); err != nil {
				return nil, fmt.Errorf("--seeds %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("--seeds %q: range %s goes down", s, part)
			}
			if b-a >= MaxSeeds {
				return nil, fmt.Errorf("--seeds %q: more than %d seeds", s, MaxSeeds)
			}
		}
		for v := a; v <= b; v++ {
			if err := add(v); err != nil {
				return nil, err
			}
		}
	}
	return seeds, nil
}

func parseSeed(s string) (uint64, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || v >= 1e18 {
		return 0, fmt.Errorf("%q is not a seed (a whole number from 0 below 10^18)", s)
	}
	return v, nil
}

// FormatSeeds writes seeds back as a list, with runs of consecutive seeds
// as ranges: "1..10", "1,3,5".
func FormatSeeds(seeds []uint64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.FormatUint(seeds[i], 10))
		case j == i+1:
			parts = append(parts, strconv.FormatUint(seeds[i], 10), strconv.FormatUint(seeds[j], 10))
		default:
			parts = append(parts, fmt.Sprintf("%d..%d", seeds[i], seeds[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// ReproSeeds derives n distinct run seeds (below 10^6, like `check run`'s
// clock seeds) from base, the same every time for the same base, so a
// repro is itself repeatable.
func ReproSeeds(base uint64, n int) []uint64 {
	rng := rand.New(rand.NewPCG(base, 0x726570726f))
	seen := make(map[uint64]bool, n)
	seeds := make([]uint64, 0, n)
	for len(seeds) < n && len(seeds) < 1_000_000 {
		s := rng.Uint64N(1_000_000)
		if !seen[s] {
			seen[s] = true
			seeds = append(seeds, s)
		}
	}
	return seeds
}
