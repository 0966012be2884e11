package rediszk

import (
	"github.com/lockcheck/lockcheck/clusters"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
	"github.com/lockcheck/lockcheck/services/zookeeper"
)

func init() {
	clusters.RegisterService(clusters.Service{
		Name: "redis-zk", Server: "ZooKeeper", Packages: "redis-server, zookeeper, default-jre-headless, libslf4j-java",
		Summary:  "the seed's combined lock: one redis-server lock node (fsync always) and a ZooKeeper ensemble (--nodes, 3 by default) side by side, every worker and peer link behind a proxy; LockAddrs lists the Redis node first",
		Look:     clusters.LookAll(redisnode.LookRedis, zookeeper.Look),
		External: externalForm,
		New: func(cfg clusters.TopologyConfig) clusters.Topology {
			return New(Config{Nodes: cfg.Nodes, Workers: cfg.Workers, LogDir: cfg.LogDir, ClockShim: cfg.ClockShim})
		},
	})
}
