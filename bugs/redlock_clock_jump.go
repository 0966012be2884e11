package bugs

func init() {
	register(Bug{
		ID:    "redlock-clock-jump",
		Order: 4,
		Title: "RedLock and a clock jump",
		Runs: []Run{
			{Report: "the same (RedLock under a clock jump)",
				Component: "redis-server 7.0.15, five masters",
				Args:      []string{"--scenario", "redlock-clock-jump"},
				Invalid:   "10/10", FixedIn: "by design (RedLock trusts wall clocks)"},
		},
		What: "Kleppmann's timeline on five masters: one master's wall clock jumps forward and expires the key early, and a " +
			"second client gets a majority while the first still works.",
	})
}
