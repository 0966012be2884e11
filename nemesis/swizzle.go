package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

func init() {
	registerPeerShape("swizzle", 2, swizzleShape, "FoundationDB's swizzle between the lock servers: cut the links between pairs of servers one at a time, in random order, then restore them one at a time in another random order, the steps spread evenly over 3 x the lease, the default fault duration (at most 12 links); clients still reach every server")
}

// maxSwizzleLinks bounds how many links one swizzle cuts, and so its steps.
const maxSwizzleLinks = 12

// swizzleShape cuts up to maxSwizzleLinks links between the servers in a
// random order and restores them in another.
func swizzleShape(rng *rand.Rand, order []string) peerPlan {
	var all [][2]string
	for i, a := range order {
		for _, b := range order[i+1:] {
			all = append(all, [2]string{a, b})
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	cuts := all[:min(len(all), maxSwizzleLinks)]
	restores := slices.Clone(cuts)
	rng.Shuffle(len(restores), func(i, j int) { restores[i], restores[j] = restores[j], restores[i] })
	if slices.Equal(restores, cuts) {
		slices.Reverse(restores) // another order, whenever there are two links
	}
	return peerPlan{Cuts: cuts, Restores: restores,
		Detail: fmt.Sprintf("%d links between the servers cut one at a time (%s-%s first), then restored in another order (%s-%s first)",
			len(cuts), cuts[0][0], cuts[0][1], restores[0][0], restores[0][1])}
}
