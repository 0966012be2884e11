package runner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// BypassedProxies is a run in which some worker slots were granted locks
// while not one byte of their commands crossed their proxies to the lock
// nodes: their workers dialled around the addresses they were given (the
// servers' own ports, a cluster's advertised addresses instead of
// addr_map), so no partition could have cut them and the faults proved
// nothing.
type BypassedProxies struct {
	// Slots are the worker slots that did.
	Slots []int
	// Grants is how many locks they were granted.
	Grants int
}

func (e *BypassedProxies) Error() string {
	slots := make([]string, len(e.Slots))
	for i, s := range e.Slots {
		slots[i] = fmt.Sprint(s)
	}
	return fmt.Sprintf("worker slot %s: %d grants, but none of its commands crossed its proxies to the lock nodes: the worker dials around them (use the addresses in lock_addrs, addr_map and discovery_addrs as given), so no partition could cut it",
		strings.Join(slots, ", "), e.Grants)
}

// checkProxies returns a *BypassedProxies when a worker slot whose
// processes were granted a lock in the history sent nothing through any of its
// proxies. A slot none of whose addresses is a proxy (a topology without
// them) and a design that takes no lock are not judged. It must be called
// before the topology's proxies close.
func (r *run) checkProxies() error {
	if r.design.NoLock {
		return nil
	}
	grants := make(map[int]int) // slot -> grants
	r.rec.Each(func(op history.Op) bool {
		if op.F == history.FAcquire && op.Type == history.OK && op.Process >= 0 {
			grants[op.Process%r.test.Workers]++
		}
		return true
	})
	e := &BypassedProxies{}
	for slot, n := range grants {
		cfg := withLinks(r.test.workerConfig(slot, r.cluster.LockAddrs(slot), ""), r.cluster, slot)
		addrs := append(append([]string(nil), cfg.LockAddrs...), cfg.DiscoveryAddrs...)
		for _, a := range cfg.AddrMap {
			addrs = append(addrs, a)
		}
		var sent int64
		proxied := false
		for _, a := range addrs {
			b, ok := clusters.Traffic(a)
			sent += b
			proxied = proxied || ok
		}
		if proxied && sent == 0 {
			e.Slots = append(e.Slots, slot)
			e.Grants += n
		}
	}
	if len(e.Slots) == 0 {
		return nil
	}
	sort.Ints(e.Slots)
	return e
}
