package zookeeper

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	clusters.RegisterService(clusters.Service{
		Name: "zookeeper", Server: "ZooKeeper", Packages: "zookeeper, default-jre-headless, libslf4j-java, redis-server (storage)",
		Summary:   "a ZooKeeper ensemble (--nodes 3 by default, 1 standalone), every client and peer link behind a proxy",
		Look:      clusters.LookAll(Look),
		External:  &clusters.ExternalForm{Ensemble: true},
		Container: containerForm,
		New: func(cfg clusters.TopologyConfig) clusters.Topology {
			return New(Config{Nodes: cfg.Nodes, Workers: cfg.Workers, LogDir: cfg.LogDir, ClockShim: cfg.ClockShim})
		},
	})
}
