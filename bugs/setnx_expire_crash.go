package bugs

func init() {
	register(Bug{
		ID:    "setnx-expire-crash",
		Order: 9,
		Title: "SETNX then EXPIRE, and a crash between them",
		Runs: []Run{
			{Report: "[gzigzigzeo/sidekiq-grouping#23](https://github.com/gzigzigzeo/sidekiq-grouping/pull/23), [lukas-krecan/ShedLock#65](https://github.com/lukas-krecan/ShedLock/issues/65), [laravel/horizon#1738](https://github.com/laravel/horizon/issues/1738)",
				Component: "SETNX then PEXPIRE, redis-server 7.0.15",
				Args:      []string{"--scenario", "setnx-expire-crash"},
				Invalid:   "10/10", FixedIn: "each library moved to one `SET NX PX`"},
		},
		What: "The key is left with no TTL and every later acquire fails forever (a stuck lock, found by the liveness " +
			"checker): sidekiq-grouping saw it twice in three months in production.",
	})
}
