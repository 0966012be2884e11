package bugs

func init() {
	register(Bug{
		ID:    "etcd-15247",
		Order: 23,
		Title: "etcd: a leader stuck writing its log keeps leases alive that its successor lets expire",
		Runs: []Run{
			{Report: "[etcd-io/etcd#15247](https://github.com/etcd-io/etcd/issues/15247): all leases revoked, and keepalives answered by a stuck old leader, when the leader is stuck handling raft Ready (a slow fdatasync)",
				Component: "etcd 3.4.23 (Debian), three members; Go client 3.5.35, `etcd-mutex`",
				Args:      leaderLogStall(),
				Invalid:   "4/10 (6 valid)", FixedIn: "3.4.31, 3.5.13 and 3.6.0 ([etcd-io/etcd#16822](https://github.com/etcd-io/etcd/pull/16822): a member confirms it still leads, with a linearizable read, before it renews, revokes or checkpoints a lease)"},
			{Report: "the same, on a fixed version",
				Component: "etcd 3.6.16 built from the Go module, three members",
				Args:      leaderLogStall("--service-version", "3.6.16"),
				Invalid:   "0/10 (10 valid)", FixedIn: "fixed", Fixed: true},
		},
		What: "The reporter's leader hung in fdatasync when its storage was rebooted. Its raft loop stopped, the others elected a " +
			"new leader, but the old member's lessor was never demoted (that happens in the stopped loop): it went on answering " +
			"the keepalives of the clients connected to it, while the new leader, hearing none, let their leases expire and " +
			"deleted their keys. The `stall-log` fault holds the fsyncs of the leader's write-ahead log only (strace's syscall " +
			"delay on its WAL files), for 12 s, 5 ms after a grant, three times: the raft loop stops, the database and the gRPC " +
			"service go on. A holder whose keepalive stream is on the stalled member keeps a session its client believes alive, " +
			"the new leader grants its lock to a waiter connected elsewhere, and both work: invalid 4 of 10 at seeds 1..10 (seeds 5, 6, 8 and 10), and `wrote-after-lock-lost` reached in 5 of the 10. At seed 5 the next waiter was granted 6 s into a stall while the holder's session stayed alive; at seeds 6 and 8 the holder's lease ended as the stall did, the old leader's revocations (etcd-12528's effect). The danger needs " +
			"the holder's stream on the stalled member and a waiter's on another: the Go client opens its streams in the same " +
			"order in every worker, so the workers mostly share one member, and most stalls either strike a member nobody's " +
			"keepalives use or stop holder and waiters alike (then the holder writes after its lease ended, " +
			"`wrote-after-lock-lost`, with nobody granted in between). `check repro --bug etcd-12528 --count 10 --seed 596944` (ten other seeds) gave 1/10 on 3.4.23 and 0/10 on 3.6.16: 5 of 20 and 0 of 20 in all. " +
			"On 3.6.16 the stalled member refuses to renew " +
			"(it cannot confirm it leads), the holder's client sees its lease end, and it stops: valid 10/10, with `wrote-after-lock-lost` and `server-released-first` reached in none.",
	})
}

// leaderLogStall is the run of etcd-15247 and etcd-12528, with extra
// flags: the leader's write-ahead log stalled for 12 s at three grants,
// three workers each holding the lock for 100 critical sections.
func leaderLogStall(extra ...string) []string {
	return append([]string{"--lock", "etcd-mutex", "--lease", "2s", "--think", "100ms", "--sections", "100", "--workers", "3",
		"--nemesis", "stall-log@grant+5ms:12s*3", "--time", "60s"}, extra...)
}
