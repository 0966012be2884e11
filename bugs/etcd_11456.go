package bugs

func init() {
	register(Bug{
		ID:    "etcd-11456",
		Order: 1,
		Title: "etcd 3.4.3: a lock granted on an expired lease",
		Runs: []Run{
			{Report: "[etcd-io/etcd#11456](https://github.com/etcd-io/etcd/issues/11456), [Jepsen: etcd 3.4.3](https://jepsen.io/analyses/etcd-3.4.3)",
				Component: "etcd 3.4.23 (Debian), Go client 3.5.35",
				Args:      []string{"--scenario", "etcd-lease-expiry"},
				Invalid:   "10/10", FixedIn: "the waiter's lease is checked before the grant returns (Jepsen: \"fixed in master\", January 2020, after 3.4.3); a lease expiring under a paused holder is not fixable: use the token"},
			{Report: "the same",
				Component: "etcd 3.6.16 built from the Go module",
				Args:      []string{"--scenario", "etcd-lease-expiry", "--service-version", "3.6.16"},
				Invalid:   "10/10", FixedIn: "as above"},
		},
		What: "Jepsen found etcd's lock returning to a waiter whose lease had expired while it waited, and, more generally, " +
			"that etcd's locks cannot give mutual exclusion: a holder that stops longer than its lease (2 s here) loses it, " +
			"etcd deletes its key and grants the next waiter, and the first resumes and writes. The story names the pause, " +
			"the lease and its TTL, and when the holder's client reported the lease lost (after its write). Both etcd " +
			"versions here fail the same way: the server fix closed the waiter's window, not the paused holder's. " +
			"`--fencing` (the create revision as token) and `--lock etcd-mutex-guarded` are valid.",
	})
}
