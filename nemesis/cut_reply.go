package nemesis

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	register(Kind{Name: "cut-reply", New: newLinkFault(cutReply), Ops: linkOps("cut-reply"),
		Summary: "cut off the replies of a worker just granted the lock (Toxiproxy limit_data on its links' downstream): " +
			"each connection passes the first 3 bytes of a reply and closes, so the client reads half a reply to a command that applied; stop after the fault duration"})
}

// cutReplyBytes is how much of the replies on one connection pass before
// it closes: "+OK" of Redis's "+OK\r\n", a fragment of anything longer.
const cutReplyBytes = 3

// cutReply is a reply cut in half: the command applied, the client reads
// a truncated reply and an end of stream.
var cutReply = linkSpec{
	kind:   "cut-reply",
	stream: clusters.Downstream,
	does:   "replies cut off after 3 bytes and the connection closed (commands apply)",
	toxics: fixed(clusters.Toxic{Type: clusters.ToxicLimitData, Stream: clusters.Downstream,
		Attributes: map[string]int64{"bytes": cutReplyBytes}}),
}
