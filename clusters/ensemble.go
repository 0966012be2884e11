package clusters

import (
	"context"
)

// memberLinks is how a replicated service of numbered members (ZooKeeper,
// etcd) reaches its proxies: one proxy from every worker slot to every
// member, and proxies for the links between each ordered pair of members.
// Cutting a worker off (Partition, Heal) and cutting a member off from its
// peers (Isolate, Rejoin) are the same for every such service; each gives
// its proxy names and finds its members by name. A service embeds it, and
// its proxies field is the service's proxies.
type memberLinks struct {
	proxies *Proxies
	// workers is the number of worker slots.
	workers int
	// memberIDs returns the members' ids, in member order.
	memberIDs func() []int
	// idOf returns the id of the member named name.
	idOf func(name string) (int, error)
	// client names the proxy from worker slot to member id.
	client func(slot, id int) string
	// peer names the proxies that carry member from's traffic to member to.
	peer func(from, to int) []string
}

// Partition cuts every link of a worker slot to the members.
func (l *memberLinks) Partition(ctx context.Context, slot int) error {
	return l.proxies.CutAll(l.slotLinks(slot))
}

// Heal restores every link of a worker slot.
func (l *memberLinks) Heal(ctx context.Context, slot int) error {
	return l.proxies.RestoreAll(ctx, l.slotLinks(slot))
}

// slotLinks names the proxies of one worker slot, one per member.
func (l *memberLinks) slotLinks(slot int) []string {
	ids := l.memberIDs()
	return LinkNames(len(ids), func(i int) string { return l.client(slot, ids[i]) })
}

// clientLinks names the proxies of every worker slot to member id.
func (l *memberLinks) clientLinks(id int) []string {
	return LinkNames(l.workers, func(slot int) string { return l.client(slot, id) })
}

// peerLinks names the proxies of every link between the member named name
// and its peers, both ways.
func (l *memberLinks) peerLinks(name string) ([]string, error) {
	id, err := l.idOf(name)
	if err != nil {
		return nil, err
	}
	var links []string
	for _, p := range l.memberIDs() {
		if p != id {
			links = append(links, l.peer(id, p)...)
			links = append(links, l.peer(p, id)...)
		}
	}
	return links, nil
}

// Isolate cuts a member off from its peers, both ways; clients still reach
// it. Peer links are cut by stopping their proxies: open connections close
// and new ones are refused, as when the SYN never arrives (see ZooKeeper for
// why a timeout toxic would not do).
func (l *memberLinks) Isolate(ctx context.Context, name string) error {
	links, err := l.peerLinks(name)
	if err != nil {
		return err
	}
	return l.proxies.DisableAll(links)
}

// Rejoin restores the links Isolate cut.
func (l *memberLinks) Rejoin(ctx context.Context, name string) error {
	links, err := l.peerLinks(name)
	if err != nil {
		return err
	}
	return l.proxies.EnableAll(links)
}
