package clusters

func init() {
	registerService(Service{
		Name: "redis", Packages: "redis-server (redis-sentinel for failover)",
		Summary:  "independent redis-server lock nodes (one, or five for RedLock) with fsync always; the Sentinel topology when a nemesis fails a single master over",
		Look:     LookAll(LookRedis),
		New:      newRedisTopology,
		External: &ExternalForm{},
	})
	registerService(Service{
		Name: "redis-sentinel", Packages: "redis-server, redis-sentinel",
		Summary: "one redis master, two replicas and three sentinels; workers find the master through the sentinels",
		Look:    LookAll(LookRedis, LookSentinel),
		New: func(cfg TopologyConfig) Topology {
			return NewSentinel(SentinelConfig{Workers: cfg.Workers, LogDir: cfg.LogDir, Persist: true, ClockShim: cfg.ClockShim})
		},
	})
}

// newRedisTopology builds plain redis lock nodes, or the Sentinel topology
// when a single master must be able to fail over (cfg.Replicated).
func newRedisTopology(cfg TopologyConfig) Topology {
	if cfg.Replicated && cfg.LockNodes == 1 {
		return NewSentinel(SentinelConfig{Workers: cfg.Workers, LogDir: cfg.LogDir, Persist: true, ClockShim: cfg.ClockShim})
	}
	return NewRedis(RedisConfig{LockNodes: cfg.LockNodes, Workers: cfg.Workers, LogDir: cfg.LogDir, Persist: true,
		ClockShim: cfg.ClockShim})
}
