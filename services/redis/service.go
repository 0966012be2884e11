package redis

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	clusters.RegisterStorage(clusters.StorageKind{
		Look: clusters.LookAll(LookRedis),
		New: func(dataDir, logDir string) clusters.StorageNode {
			return NewRedisServer(dataDir, logDir, clusters.StorageName, false)
		},
		Ping: Ping,
	})
	clusters.RegisterService(clusters.Service{
		Name: "redis", Packages: "redis-server (redis-sentinel for failover)",
		Summary:   "independent redis-server lock nodes (one, or five for RedLock) with fsync always; the Sentinel topology when a nemesis fails a single master over",
		Look:      clusters.LookAll(LookRedis),
		New:       newRedisTopology,
		External:  &clusters.ExternalForm{},
		Container: containerForm,
	})
	clusters.RegisterService(clusters.Service{
		Name: "redis-sentinel", Packages: "redis-server, redis-sentinel",
		Summary:  "one redis master, two replicas and three sentinels; workers find the master through the sentinels",
		Look:     clusters.LookAll(LookRedis, LookSentinel),
		External: sentinelExternal,
		New: func(cfg clusters.TopologyConfig) clusters.Topology {
			return NewSentinel(SentinelConfig{Workers: cfg.Workers, LogDir: cfg.LogDir, Persist: true, ClockShim: cfg.ClockShim})
		},
	})
	clusters.RegisterService(clusters.Service{
		Name: "redis-cluster", Packages: "redis-server",
		Summary: "Redis Cluster: six cluster-enabled redis-servers (three masters, three replicas), every client and " +
			"cluster-bus link through Toxiproxy; workers use go-redis's cluster client",
		Look:     clusters.LookAll(LookRedis),
		External: clusterExternal,
		New: func(cfg clusters.TopologyConfig) clusters.Topology {
			return NewRedisCluster(RedisClusterConfig{Workers: cfg.Workers, LogDir: cfg.LogDir, Persist: true,
				ClockShim: cfg.ClockShim})
		},
	})
}

// newRedisTopology builds plain redis lock nodes, or the Sentinel topology
// when a single master must be able to fail over (cfg.Replicated).
func newRedisTopology(cfg clusters.TopologyConfig) clusters.Topology {
	if cfg.Replicated && cfg.LockNodes == 1 {
		return NewSentinel(SentinelConfig{Workers: cfg.Workers, LogDir: cfg.LogDir, Persist: true, ClockShim: cfg.ClockShim})
	}
	return NewRedis(RedisConfig{LockNodes: cfg.LockNodes, Workers: cfg.Workers, LogDir: cfg.LogDir, Persist: true,
		ClockShim: cfg.ClockShim})
}
