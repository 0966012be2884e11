package clusters

func init() {
	registerService(Service{
		Name: "etcd", Packages: "etcd-server, redis-server (storage)",
		Summary:  "etcd members (three, or --nodes), every client link and every member-to-member link behind its own proxy",
		Look:     LookAll(LookEtcd, LookRedis),
		Version:  EtcdVersion,
		Versions: EtcdVersions,
		External: &ExternalForm{Ensemble: true},
		New: func(cfg TopologyConfig) Topology {
			return NewEtcd(EtcdConfig{Members: cfg.Nodes, Workers: cfg.Workers, LogDir: cfg.LogDir, Server: cfg.Server})
		},
	})
}
