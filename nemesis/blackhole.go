package nemesis

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	register(Kind{Name: "blackhole", New: newLinkFault(blackhole),
		Ops: linkOps("blackhole"),
		Summary: "blackhole the links of a worker just granted the lock (Toxiproxy timeout toxic both ways, no TCP reset): " +
			"connections stay open and silent, the client has to notice by its own timeouts (consul#18271); restore after the fault duration"})
}

// blackhole is the silent link: unlike refuse, nothing tells the client
// its link is dead, so how long it takes to notice is its own timeouts'
// business. It is partition's cut, as a toxic of its own, so that it
// composes with a partition and is told apart from one in the history.
var blackhole = linkSpec{kind: "blackhole", stream: "both", does: "every packet dropped both ways, no reset",
	toxics: fixed(both(clusters.Toxic{Type: clusters.ToxicTimeout})...)}
