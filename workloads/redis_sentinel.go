package workloads

import (
	"fmt"
	"math/rand/v2"
)

func init() {
	register(Design{Name: "redis-sentinel", Service: "redis-sentinel", LockNodes: 3, Tokens: true, New: newSentinelLock,
		Summary: "SET NX PX (+ INCR token) and Lua compare-and-delete on the master that Redis Sentinel names " +
			"(one master, two asynchronous replicas, three sentinels; go-redis failover client)"})
}

// newSentinelLock is redis-set-px on the master the Sentinels name: the
// same scripts, a failover client.
func newSentinelLock(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	if len(cfg.DiscoveryAddrs) == 0 {
		return nil, fmt.Errorf("redis-sentinel needs Sentinel addresses (the Sentinel topology)")
	}
	return newSetPX(cfg, rng, events)
}
