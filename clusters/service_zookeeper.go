package clusters

func init() {
	registerService(Service{
		Name: "zookeeper", Packages: "zookeeper, default-jre-headless, libslf4j-java, redis-server (storage)",
		Summary:  "a ZooKeeper ensemble (--nodes 3 by default, 1 standalone), every client and peer link behind a proxy",
		Look:     LookAll(LookZooKeeper, LookRedis),
		External: &ExternalForm{Ensemble: true},
		New: func(cfg TopologyConfig) Topology {
			return NewZooKeeper(ZooKeeperConfig{Nodes: cfg.Nodes, Workers: cfg.Workers, LogDir: cfg.LogDir, ClockShim: cfg.ClockShim})
		},
	})
}
