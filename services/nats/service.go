package nats

import "github.com/lockcheck/lockcheck/clusters"

func init() {
	clusters.RegisterService(clusters.Service{
		Name: "nats", Packages: "nats-server, redis-server (storage)", Server: "NATS",
		Summary:  "nats-server with JetStream: one server for a design on one lock node, else a JetStream cluster of --nodes servers (three by default), every client link and every route between two servers behind its own proxy",
		Look:     clusters.LookAll(Look),
		Version:  Version,
		Versions: Versions,
		External: &clusters.ExternalForm{Ensemble: true},
		New: func(cfg clusters.TopologyConfig) clusters.Topology {
			members := cfg.Nodes
			if cfg.LockNodes == 1 {
				members = 1 // the design asks for one server (nats-kv)
			}
			return New(Config{Members: members, Workers: cfg.Workers, LogDir: cfg.LogDir, Server: cfg.Server})
		},
	})
}
