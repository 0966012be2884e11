package nemesis

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	register(Kind{Name: "one-way-in", New: newLinkFault(oneWayIn),
		Summary: "lose every request of a worker just granted the lock (Toxiproxy timeout toxic on its links' upstream only): " +
			"nothing it sends reaches the lock nodes, replies to what went before still arrive; restore after the fault duration",
		Ops: linkOps("one-way-in")})
}

// oneWayIn is the other half of a one-way cut: requests vanish on their
// way in, so none applies, and the client hangs on each.
var oneWayIn = linkSpec{kind: "one-way-in", stream: clusters.Upstream, does: "requests vanish (none reaches the server)",
	toxics: fixed(clusters.Toxic{Type: clusters.ToxicTimeout, Stream: clusters.Upstream})}
