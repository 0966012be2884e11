package scenarios

func init() {
	register(Scenario{
		Name: "oversell",
		Summary: "the inventory workload on a Redis SET NX PX lock: a holder that read the stock is paused 5 ms after its grant, " +
			"past its lease, others sell on, and it resumes and writes its stale stock-1: sales exceed the stock",
		// A small stock and a long think keep the stock from running out
		// before the pauses (each 2 s, twice the lease, 5 ms into a hold),
		// and make most of a hold the gap between read and write.
		Args: []string{"--lock", "redis-set-px", "--nemesis", "pause@grant+5ms:2xlease*3", "--workload", "inventory", "--stock", "20",
			"--think", "100ms", "--lease", "1s", "--time", "10s"},
		Expect: "invalid: oversold items (valid with --fencing: the stale sale is refused)",
		Want:   "U", WantFenced: "S",
	})
}
