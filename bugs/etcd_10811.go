package bugs

func init() {
	register(Bug{
		ID:    "etcd-10811",
		Order: 2,
		Title: "A partitioned etcd client keeps its lock",
		Runs: []Run{
			{Report: "[etcd-io/etcd#10811](https://github.com/etcd-io/etcd/issues/10811)",
				Component: "etcd 3.4.23",
				Args:      []string{"--scenario", "blackhole-slow-detection"},
				Invalid:   "10/10", FixedIn: "not a bug to etcd (closed as a question): the client learns of the lost lease only by its own keepalive deadline"},
		},
		What: "The report: client A holds the lock, its network to etcd breaks, the lease expires, B is granted, and A still " +
			"writes. Here the holder's links are blackholed (no reset) through a critical section longer than the TTL; its " +
			"client notices only at its own keepalive deadline, about when etcd expires the lease, so both write.",
	})
}
