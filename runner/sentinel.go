package runner

import (
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/workloads"
)

// sentinelLinks is a topology whose workers find the master through
// Sentinels.
type sentinelLinks interface {
	SentinelLinks(slot int) clusters.SentinelLinks
}

// withLinks adds to a worker config what the topology says of how to reach
// its lock nodes beyond their addresses: the login of a database
// (clusters.LoginNeeder), the slot's Sentinel links when the topology has
// them, and its map of announced addresses when the topology announces its
// own (Redis Cluster, clusters.AddrMapper).
func withLinks(cfg workloads.Config, c topology, slot int) workloads.Config {
	if l, ok := c.(clusters.LoginNeeder); ok {
		login := l.Login()
		cfg.User, cfg.Password, cfg.Database = login.User, login.Password, login.Database
	}
	if s, ok := c.(sentinelLinks); ok {
		l := s.SentinelLinks(slot)
		cfg.SentinelAddrs, cfg.MasterName, cfg.AddrMap = l.Addrs, l.MasterName, l.AddrMap
	}
	if m, ok := c.(clusters.AddrMapper); ok {
		cfg.AddrMap = m.AddrMap(slot)
	}
	return cfg
}
