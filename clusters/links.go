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

// Linker is a topology whose workers need more than the lock nodes'
// addresses and a login to reach them (the Sentinels that name the master,
// the map of every address the service announces).
type Linker interface {
	// WorkerLinks returns what a worker of slot needs beyond the lock
	// nodes' addresses; its Login is not used (LoginNeeder gives it).
	WorkerLinks(slot int) WorkerLinks
}

// LinksOf returns what a worker of slot needs to reach c's lock nodes
// beyond their addresses.
func LinksOf(c Cluster, slot int) WorkerLinks {
	var l WorkerLinks
	if k, ok := c.(Linker); ok {
		l = k.WorkerLinks(slot)
	}
	l.Login = Login{}
	if n, ok := c.(LoginNeeder); ok {
		l.Login = n.Login()
	}
	return l
}
