package clusters

import "fmt"

// PeerLinkAddrs returns where the proxies that carry server from's
// connections to server to listen (etcd: one; ZooKeeper: quorum and
// election), so that the external tests can send real traffic over one
// peer link.
func PeerLinkAddrs(c Cluster, from, to string) ([]string, error) {
	var e *Ensemble
	switch c := c.(type) {
	case *Etcd:
		e = &c.Ensemble
	case *ZooKeeper:
		e = &c.Ensemble
	default:
		return nil, fmt.Errorf("no peer links in %T", c)
	}
	i, err := e.set.Index(from)
	if err != nil {
		return nil, err
	}
	j, err := e.set.Index(to)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, name := range e.peer(e.servers[i].ID, e.servers[j].ID) {
		p, err := e.Proxies.get(name)
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, p.Listen)
	}
	return addrs, nil
}
