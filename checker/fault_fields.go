package checker

import (
	"strings"

	"github.com/lockcheck/lockcheck/history"
)

// What the checkers read of a fault comes from its start op's Hit. A history
// recorded before faults carried those fields has only the nemesis's words
// (Detail), which these functions fall back to, so that an old stored run
// is judged and told as it was.

// strobes reports whether a clock fault kept moving the clock back and
// forth (clock-back) rather than forward.
func strobes(f history.Fault) bool {
	if f.Hit != nil && (f.Hit.Offset != 0 || f.Hit.Strobe) {
		return f.Hit.Strobe
	}
	return strings.Contains(f.Detail, " back")
}

// jumpAmount returns how far a forward clock fault moved the clock, as
// "2 s " (with its trailing space), or "" when unknown.
func jumpAmount(f history.Fault) string {
	if f.Hit != nil && f.Hit.Offset > 0 {
		return secsShort(f.Hit.Offset) + " "
	}
	if _, rest, ok := strings.Cut(f.Detail, "jumped "); ok {
		if a, _, ok := strings.Cut(rest, " forward"); ok {
			return a + " "
		}
	}
	return ""
}

// takeover reports whether a failover's replica took its master's slots
// over (Redis Cluster) rather than being promoted by Sentinels.
func takeover(f history.Fault) bool {
	if f.Hit != nil && f.Hit.Promoted {
		return f.Hit.Takeover
	}
	return strings.Contains(f.Detail, "TAKEOVER")
}
