package etcd

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	clusters.RegisterService(clusters.Service{
		Name: "etcd", Packages: "etcd-server, redis-server (storage)",
		Summary:  "etcd members (three, or --nodes), every client link and every member-to-member link behind its own proxy",
		Look:     clusters.LookAll(Look),
		Version:  Version,
		Versions: Versions,
		External: &clusters.ExternalForm{Ensemble: true},
		New: func(cfg clusters.TopologyConfig) clusters.Topology {
			return New(Config{Members: cfg.Nodes, Workers: cfg.Workers, LogDir: cfg.LogDir, Server: cfg.Server})
		},
	})
}
