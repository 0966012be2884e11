package bugs

func init() {
	register(Bug{
		ID:    "jetcd-retry",
		Order: 10,
		Title: "A retried request that took effect unheard",
		Runs: []Run{
			{Report: "[Jepsen: jetcd 0.8.2](https://jepsen.io/analyses/jetcd-0.8.2), [etcd-io/etcd#18424](https://github.com/etcd-io/etcd/issues/18424) (a retried non-idempotent request)",
				Component: "redsync v4.18.1, one redis-server",
				Args:      []string{"--scenario", "reply-loss-double-acquire"},
				Invalid:   "0/10 (10 valid, exit 0)", FixedIn: "a control: redsync's retries are idempotent, so valid is expected"},
		},
		What: "Jepsen's jetcd analysis found client retries of non-idempotent requests applying twice. lockcheck loses every " +
			"reply to a redsync holder; redsync's acquire is idempotent by its value and it unlocks after a failed try, so " +
			"this row is expected valid (exit 0), a contrast with the others.",
	})
}
