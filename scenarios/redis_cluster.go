package scenarios

func init() {
	register(Scenario{
		Name: "redis-cluster-failover-lock-loss",
		Summary: "the Redis Cluster master of the lock key's slot is cut off from every other node 5 ms after a grant, while the lock holder " +
			"and half the workers still reach it; its replica takes the slots over (CLUSTER FAILOVER TAKEOVER) without " +
			"the old master's later grants, and both masters grant the same lock until the old one rejoins as a replica " +
			"and its grants are lost",
		Args: []string{"--lock", "redis-cluster", "--nemesis", "failover@grant+5ms*2", "--lease", "1s",
			"--nemesis-duration", "6s", "--workers", "10", "--time", "15s",
			// As for Sentinel: the workers left with the old master must
			// ride out fsync stalls around the takeover. The others need
			// that op timeout and a fresh cluster client (2-3 s) before
			// they reach the new master, hence a 6 s fault: with 3 s, two
			// of three seeds saw no double holder.
			"--op-timeout", "2s"},
		Expect: "invalid (the story names the promotion)",
		// Each master counts its own tokens ({key}:token lives in the
		// key's slot), so --fencing does not save it.
		Want: "U", WantFenced: "U",
	})
}
