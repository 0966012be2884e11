// Package suggest finds the known name a mistyped one most likely meant,
// for the "did you mean" of every registry lookup and flag: a lock design,
// a scenario, a nemesis, a service, a workload, a flag of a command.
//
// It imports nothing of lockcheck's; every registry may import it.
package suggest

import (
	"fmt"
	"strings"
)

// Closest returns the name of known that name most likely meant, or ""
// when none is close: one within an edit distance of a quarter of its
// length (at least 1, counting a swap of two neighbours as one edit), or
// the only known name that contains name or that name contains (the
// contained one of 3 letters or more), ignoring case, dashes and
// underscores. Ties go to the first in known.
func Closest(name string, known []string) string {
	if name == "" {
		return ""
	}
	best, bestD := "", -1
	n := fold(name)
	for _, k := range known {
		d := distance(n, fold(k))
		limit := max(1, len([]rune(k))/4)
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = k, d
		}
	}
	if best != "" {
		return best
	}
	var within []string
	for _, k := range known {
		fk := fold(k)
		if (len(n) >= 3 && strings.Contains(fk, n)) || (len(fk) >= 3 && strings.Contains(n, fk)) {
			within = append(within, k)
		}
	}
	if len(within) == 1 {
		return within[0]
	}
	return ""
}

// Unknown returns the error for a name no registry entry has: `unknown
// what "name"; did you mean "x"? (known: a, b, c)`, without the question
// when nothing is close.
func Unknown(what, name string, known []string) error {
	mean := ""
	if c := Closest(name, known); c != "" {
		mean = fmt.Sprintf("; did you mean %q?", c)
	}
	return fmt.Errorf("unknown %s %q%s (known: %s)", what, name, mean, strings.Join(known, ", "))
}

// fold lowercases s and drops dashes and underscores, so that redis_setpx
// and RedisSetPx are as close to redis-set-px as redis-setpx is.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// distance is the optimal string alignment distance of a and b: inserts,
// deletes, substitutions and swaps of neighbours, each one edit.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// rows i-2, i-1 and i of the table.
	prev2, prev, cur := make([]int, len(y)+1), make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
