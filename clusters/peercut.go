package clusters

import (
	"context"
	"fmt"
)

// PeerCutter is a cluster whose servers' links to one another can be cut
// pair by pair, so that a fault can give them any shape (a minority cut
// from the majority, a bridge, a ring, links cut one at a time), where an
// Isolator only cuts one server off from all the others.
type PeerCutter interface {
	// PeerNodes names the servers that talk to one another, in order.
	PeerNodes() []string
	// CutPeers cuts, on behalf of by (a fault's name), the links between
	// each named pair of servers, both ways: their connections to each
	// other close and new ones are refused; clients still reach both.
	CutPeers(ctx context.Context, by string, pairs [][2]string) error
	// HealPeers lets go of by's cuts of the named pairs, or of every cut
	// by made when pairs is nil; a link is restored once no fault holds
	// it cut. Healing what is not cut is a no-op.
	HealPeers(ctx context.Context, by string, pairs [][2]string) error
}

// PeerLinkAddrs returns where the proxies that carry member from's
// connections to member to listen (etcd: one; ZooKeeper: quorum and
// election), so that a test can send real traffic over one peer link.
func (e *Ensemble) PeerLinkAddrs(from, to string) ([]string, error) {
	i, err := e.NodeSet.Index(from)
	if err != nil {
		return nil, err
	}
	j, err := e.NodeSet.Index(to)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, name := range e.peer(e.servers[i].ID, e.servers[j].ID) {
		addr, err := e.Proxies.ListenAddr(name)
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, addr)
	}
	return addrs, nil
}

// PeerNodes names the members, in member order.
func (e *Ensemble) PeerNodes() []string {
	names := make([]string, len(e.servers))
	for i, m := range e.servers {
		names[i] = m.Name
	}
	return names
}

// pairLinks names the proxies of the links between each pair of members,
// both ways.
func (e *Ensemble) pairLinks(pairs [][2]string) ([]string, error) {
	var links []string
	for _, p := range pairs {
		i, err := e.NodeSet.Index(p[0])
		if err != nil {
			return nil, err
		}
		j, err := e.NodeSet.Index(p[1])
		if err != nil {
			return nil, err
		}
		if i == j {
			return nil, fmt.Errorf("cut %s from itself: a pair needs two members", p[0])
		}
		a, b := e.servers[i].ID, e.servers[j].ID
		links = append(append(links, e.peer(a, b)...), e.peer(b, a)...)
	}
	return links, nil
}

// CutPeers stops the proxies of the links between each pair, both ways
// (see Isolate for why a stopped proxy rather than a timeout toxic).
func (e *Ensemble) CutPeers(ctx context.Context, by string, pairs [][2]string) error {
	links, err := e.pairLinks(pairs)
	if err != nil {
		return err
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Proxies.DisableAll(e.heldLinks().Hold(by, links))
}

// HealPeers starts again the proxies CutPeers stopped for by that no
// other fault holds stopped.
func (e *Ensemble) HealPeers(ctx context.Context, by string, pairs [][2]string) error {
	var links []string
	if pairs != nil {
		var err error
		if links, err = e.pairLinks(pairs); err != nil {
			return err
		}
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return e.Proxies.EnableAll(e.heldLinks().Drop(by, links))
}

// heldLinks returns the faults that hold the peer proxies stopped (under
// mu).
func (e *Ensemble) heldLinks() HeldCuts {
	if e.held == nil {
		e.held = make(HeldCuts)
	}
	return e.held
}
