package nemesis

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

func init() {
	registerPeerShape("partition-ring", 4, ringShape, "put the lock servers on a random ring and cut every link but those to their nearest neighbours, so that each server reaches a majority and no two reach the same one (Jepsen's majorities-ring; needs 4 servers or more); clients still reach every server; heal after the fault duration")
}

// ringShape puts the servers on a ring in random order and keeps only the
// links of each to the r nearest on either side, r the fewest for which a
// server and its neighbours are a majority: each server's majority is
// centred on itself, so no two are the same.
func ringShape(_ *rand.Rand, order []string) peerPlan {
	n := len(order)
	r := ringReach(n)
	var cuts [][2]string
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if min(j-i, n-(j-i)) > r {
				cuts = append(cuts, [2]string{order[i], order[j]})
			}
		}
	}
	return peerPlan{Cuts: cuts,
		Detail: fmt.Sprintf("ring %s: each server reaches only the %d nearest on either side", strings.Join(order, "-"), r)}
}

// ringReach is how many neighbours on either side a server of a ring of n
// keeps: with itself, at least a majority (n/2 + 1). Below 4 servers that
// is every other server, and nothing is cut.
func ringReach(n int) int { return (n/2 + 1) / 2 }
