package scenarios

func init() {
	register(Scenario{
		Name: "sentinel-failover-lock-loss",
		Summary: "a Redis Sentinel master is cut off from its replicas and sentinels 5 ms after a grant, while the lock holder and half the " +
			"workers still reach it: the sentinels promote a replica that never saw the old master's later grants, " +
			"and both masters grant the same lock (split brain) until the old one is demoted and its grants are lost",
		Args: []string{"--lock", "redis-sentinel", "--nemesis", "failover@grant+5ms*3", "--lease", "1s",
			"--nemesis-duration", "3s", "--workers", "10", "--time", "15s",
			// The workers left with the old master must ride out a stall of
			// its fsync-always disk around the promotion, or they are
			// retired and the split brain has no one on that side.
			"--op-timeout", "2s"},
		Expect: "invalid (the story names the promotion)",
		// Each master counts its own tokens, so --fencing does not save it.
		Want: "U", WantFenced: "U",
	})
}
