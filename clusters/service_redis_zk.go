package clusters

func init() {
	registerService(Service{
		Name: "redis-zk", Packages: "redis-server, zookeeper, default-jre-headless, libslf4j-java",
		Summary: "the seed's combined lock: one redis-server lock node (fsync always) and a ZooKeeper ensemble (--nodes, 3 by default) side by side, every worker and peer link behind a proxy; LockAddrs lists the Redis node first",
		Look:    LookAll(LookRedis, LookZooKeeper),
		New: func(cfg TopologyConfig) Topology {
			return NewRedisZK(RedisZKConfig{Nodes: cfg.Nodes, Workers: cfg.Workers, LogDir: cfg.LogDir, ClockShim: cfg.ClockShim})
		},
	})
}
