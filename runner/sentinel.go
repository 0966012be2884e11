package runner

import (
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/workloads"
)

// useSentinel reports whether a test runs on the Sentinel topology: the
// redis-sentinel design always does, and every single-master Redis design
// does when the nemesis includes a failover (a master needs replicas and
// sentinels to fail over to).
func useSentinel(d workloads.Design, t Test) bool {
	if d.Service == "redis-sentinel" {
		return true
	}
	if d.Service != "redis" || d.LockNodes != 1 {
		return false
	}
	return needs(t, func(k nemesis.Kind) bool { return k.Replicated })
}

// sentinelLinks is a topology whose workers find the master through
// Sentinels.
type sentinelLinks interface {
	SentinelLinks(slot int) clusters.SentinelLinks
}

// withSentinel adds the slot's Sentinel links to a worker config when the
// topology has them.
func withSentinel(cfg workloads.Config, c topology, slot int) workloads.Config {
	if s, ok := c.(sentinelLinks); ok {
		l := s.SentinelLinks(slot)
		cfg.SentinelAddrs, cfg.MasterName, cfg.AddrMap = l.Addrs, l.MasterName, l.AddrMap
	}
	return cfg
}
