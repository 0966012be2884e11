package nemesis

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	register(Kind{
		Name:    "reset",
		Summary: "reset the connections of a worker just granted the lock mid-command (Toxiproxy reset_peer on its links' replies): each command reaches the lock node and applies, and the connection is closed (RST) instead of the reply; stop after the fault duration",
		New:     newLinkFault(resetFault),
		Ops:     linkOps("reset"),
	})
}

// resetFault closes each connection as its reply comes back: the command
// applied, and the client sees a reset at once instead of a timeout. A
// connection opened while the fault is on closes with a TCP RST; one open
// before it with a FIN (Toxiproxy sets linger 0 when a link starts).
var resetFault = linkSpec{kind: "reset", stream: clusters.Downstream, does: "connections reset as a reply comes back (commands apply)",
	toxics: fixed(clusters.Toxic{Type: clusters.ToxicResetPeer, Stream: clusters.Downstream})}
