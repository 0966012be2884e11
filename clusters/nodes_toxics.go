package clusters

import (
	"context"
	"fmt"
)

// LinkToxicker is a cluster whose worker slots' links to the lock nodes can
// carry Toxiproxy toxics (a slow, lossy, one-way or refusing link) on
// behalf of a fault, which sets and clears only its own: several faults
// may poison one slot at once, and a partition (Partitioner) composes with
// them.
type LinkToxicker interface {
	// SetLinkToxics puts ts on every link of worker slot to the lock
	// nodes on behalf of fault; with ts nil it takes fault's toxics off
	// them again (a link that carries none is left as it is).
	SetLinkToxics(ctx context.Context, slot int, fault string, ts []Toxic) error
}

var (
	_ LinkToxicker = Faults{}
)

// SetLinkToxics puts ts on every link of worker slot to the nodes on
// behalf of fault (Proxies.AddToxics), or with ts nil takes fault's off
// (Proxies.RemoveToxics).
func (s *NodeSet) SetLinkToxics(ctx context.Context, slot int, fault string, ts []Toxic) error {
	if slot < 0 || slot >= len(s.slotAddr) {
		return fmt.Errorf("toxics on the links of slot %d: no such worker slot", slot)
	}
	return each(s.SlotLinks(slot), func(n string) error {
		if ts == nil {
			return s.proxies.RemoveToxics(ctx, n, fault)
		}
		return s.proxies.AddToxics(n, fault, ts)
	})
}

// SetLinkToxics sets fault's toxics on a worker slot's links (every
// topology of a NodeSet: ZooKeeper, etcd, the databases, the containers).
func (f Faults) SetLinkToxics(ctx context.Context, slot int, fault string, ts []Toxic) error {
	return f.of.SetLinkToxics(ctx, slot, fault, ts)
}
