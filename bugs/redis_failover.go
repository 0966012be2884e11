package bugs

func init() {
	register(Bug{
		ID:    "redis-failover",
		Order: 8,
		Title: "Failover loses a granted lock",
		Runs: []Run{
			{Report: "[Redis: distributed locks, \"failover-based implementations are not enough\"](https://redis.io/docs/latest/develop/use/patterns/distributed-locks/)",
				Component: "Redis Sentinel, redis-server 7.0.15",
				Args:      []string{"--scenario", "sentinel-failover-lock-loss"},
				Invalid:   "10/10", FixedIn: "by design (asynchronous replication)"},
			{Report: "the same; [sewenew/redis-plus-plus#44](https://github.com/sewenew/redis-plus-plus/pull/44)",
				Component: "Redis Cluster, redis-server 7.0.15",
				Args:      []string{"--scenario", "redis-cluster-failover-lock-loss"},
				Invalid:   "10/10", FixedIn: "by design"},
		},
		What: "Redis replicates asynchronously: a master cut off from its replicas keeps granting while a replica is promoted " +
			"without those grants, and both grant the same lock until the old master is demoted.",
	})
}
