package nemesis

import (
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

func init() {
	register(Kind{Name: latencyFault.kind, New: newLinkFault(latencyFault), Ops: linkOps(latencyFault.kind),
		Summary: "slow the links of a worker just granted the lock: every chunk each way waits lease/2 +/- lease/4 (Toxiproxy latency with jitter), " +
			"so its renewals and release arrive late (RedLock's drift term); take it off after the fault duration"})
}

// latencyFault delays the holder's requests and replies by half a lease,
// give or take a quarter: a round trip then takes from half a lease to a
// lease and a half, so a renewal sent at a third of the lease can arrive
// after the key expired, and a ZooKeeper client's reads time out (2/3 of
// its session timeout) while its session lives on.
var latencyFault = linkSpec{kind: "latency", stream: "both",
	does: "every chunk each way delayed (Toxiproxy latency with jitter)",
	toxics: func(lease time.Duration) []clusters.Toxic {
		delay := max(lease/2, time.Millisecond)
		return both(clusters.Toxic{Type: clusters.ToxicLatency, Attributes: map[string]int64{
			"latency": delay.Milliseconds(), "jitter": (delay / 2).Milliseconds()}})
	}}
