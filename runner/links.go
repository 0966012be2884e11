package runner

import (
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/workloads"
)

// withLinks adds to a worker config what the topology says of how to reach
// its lock nodes beyond their addresses (clusters.LinksOf): the login of a
// database, the slot's Sentinel links, and its map of announced addresses.
func withLinks(cfg workloads.Config, c topology, slot int) workloads.Config {
	l := clusters.LinksOf(c, slot)
	cfg.User, cfg.Password, cfg.Database, cfg.Pooled = l.Login.User, l.Login.Password, l.Login.Database, l.Login.Pooled
	cfg.DiscoveryAddrs, cfg.MasterName, cfg.AddrMap = l.DiscoveryAddrs, l.MasterName, l.AddrMap
	return cfg
}
