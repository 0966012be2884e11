package nemesis

import "math/rand/v2"

func init() {
	registerPeerShape("partition-bridge", 3, bridgeShape, "split the lock servers into two halves that cannot reach each other and one server that reaches both (Jepsen's bridge), so that (with an odd number of servers) each half with the bridge is a majority; clients still reach every server; heal after the fault duration")
}

// bridgeShape splits the servers into two halves and a bridge between
// them, as Jepsen's does: every link between the halves is cut, the bridge
// keeps all of its own.
func bridgeShape(_ *rand.Rand, order []string) peerPlan {
	h := len(order) / 2
	return sides(order[:h], order[h+1:], "; "+order[h]+" reaches both sides (a bridge)")
}
