package nemesis

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	register(Kind{Name: "reply-loss", New: newLinkFault(replyLoss), Ops: linkOps("reply-loss"),
		Summary: "lose every reply to a worker just granted the lock (Toxiproxy timeout toxic on its links' downstream only): " +
			"its commands reach the lock nodes and apply, it hears nothing back; restore after the fault duration"})
}

// replyLoss is the ambiguous failure: the server applied the command and
// the client cannot know it. A client that retries a command that is not
// idempotent (Jepsen's jetcd 0.8.2 lost updates) or gives up on an acquire
// that in fact took the lock shows it.
var replyLoss = linkSpec{kind: "reply-loss", stream: clusters.Downstream,
	does:   "replies vanish (commands still reach the server and apply)",
	toxics: fixed(clusters.Toxic{Type: clusters.ToxicTimeout, Stream: clusters.Downstream})}
