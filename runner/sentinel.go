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

// withSentinel adds the slot's Sentinel links to a worker config when the
// topology has them, and its map of announced addresses when the topology
// announces its own (Redis Cluster, clusters.AddrMapper).
func withSentinel(cfg workloads.Config, c topology, slot int) workloads.Config {
	if s, ok := c.(sentinelLinks); ok {
		l := s.SentinelLinks(slot)
		cfg.SentinelAddrs, cfg.MasterName, cfg.AddrMap = l.Addrs, l.MasterName, l.AddrMap
	}
	if m, ok := c.(clusters.AddrMapper); ok {
		cfg.AddrMap = m.AddrMap(slot)
	}
	return cfg
}
