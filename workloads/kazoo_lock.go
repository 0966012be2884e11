package workloads

func init() {
	register(Design{Name: "kazoo-lock", Service: "zookeeper", LockNodes: 3, Tokens: true, ZxidTokens: true,
		Worker: []string{"python3", "python/kazoo_lock.py"},
		Summary: "the library kazoo (Debian python3-kazoo), client.Lock(path).acquire(timeout), in a Python worker " +
			"(workers/python/kazoo_lock.py); SUSPENDED/LOST/CONNECTED as events; token = czxid of its node; --lease is the session timeout"})
}
