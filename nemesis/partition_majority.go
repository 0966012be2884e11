package nemesis

import "math/rand/v2"

func init() {
	registerPeerShape("partition-majority", 3, majorityShape, "cut a random minority of the lock servers (1 to (n-1)/2 of them) off from the majority: every link between the two sides, both ways (Jepsen's majority/minority split); clients still reach every server; heal after the fault duration")
}

// majorityShape cuts a random minority, 1 to (n-1)/2 servers, off from
// the rest.
func majorityShape(rng *rand.Rand, order []string) peerPlan {
	k := 1 + rng.IntN((len(order)-1)/2)
	return sides(order[:k], order[k:], " (the majority)")
}
