package nemesis

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	register(Kind{Name: "refuse", New: newLinkFault(refuse),
		Summary: "refuse the links of a worker just granted the lock: its proxies close their listeners and connections, " +
			"so every dial is refused at once (a connection accepted anyway is reset); accept again after the fault duration",
		Ops: linkOps("refuse")})
}

// refuse is the loud link failure, blackhole's counterpart: the client
// learns at once that it cannot reach the lock service.
var refuse = linkSpec{kind: "refuse", stream: "both", does: "connections closed and dials refused",
	toxics: fixed(clusters.Toxic{Type: clusters.ToxicRefuse})}
