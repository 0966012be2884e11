package scenarios

func init() {
	register(Scenario{
		Name: "oversell",
		Summary: "the inventory workload on a Redis SET NX PX lock: a holder that read the stock is paused " +
			"past its lease, others sell on, and it resumes and writes its stale stock-1: sales exceed the stock",
		// A small stock and a long think keep the stock from running out
		// before the first pauses (one every 0.5 s to 1.5 s, each 2 s, twice
		// the lease), and make most of a hold the gap between read and write.
		Args: []string{"--lock", "redis-set-px", "--nemesis", "pause", "--workload", "inventory", "--stock", "20",
			"--think", "100ms", "--lease", "1s", "--nemesis-interval", "1s", "--nemesis-duration", "2s", "--time", "10s"},
		Expect: "invalid: oversold items (valid with --fencing: the stale sale is refused)",
		Want:   "U", WantFenced: "S",
	})
}
