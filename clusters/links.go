package clusters

// WorkerLinks is what a worker of one slot needs to reach a topology's lock
// nodes beyond their addresses (Topology.LockAddrs): the login of a
// database, the Sentinels that name the master, and the map of every
// address the service announces to the slot's own proxy for it. The
// controller of a run and `check conformance` send the same fields in the
// worker protocol's open request.
type WorkerLinks struct {
	// Login is the database login, zero for a service with none.
	Login Login
	// SentinelAddrs and MasterName: the slot's links to the Sentinels and
	// the master's name, for a topology whose workers find the master
	// through them.
	SentinelAddrs []string
	MasterName    string
	// AddrMap maps every address the service announces to the slot's own
	// proxy for it (Sentinel, Redis Cluster); nil for a service that
	// announces none.
	AddrMap map[string]string
}

// sentinelLinker is a topology whose workers find the master through
// Sentinels.
type sentinelLinker interface {
	SentinelLinks(slot int) SentinelLinks
}

// LinksOf returns what a worker of slot needs to reach c's lock nodes
// beyond their addresses.
func LinksOf(c Cluster, slot int) WorkerLinks {
	var l WorkerLinks
	if n, ok := c.(LoginNeeder); ok {
		l.Login = n.Login()
	}
	if s, ok := c.(sentinelLinker); ok {
		sl := s.SentinelLinks(slot)
		l.SentinelAddrs, l.MasterName, l.AddrMap = sl.Addrs, sl.MasterName, sl.AddrMap
	}
	if m, ok := c.(AddrMapper); ok {
		l.AddrMap = m.AddrMap(slot)
	}
	return l
}
