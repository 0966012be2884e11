package scenarios

func init() {
	register(Scenario{
		Name: "blackhole-slow-detection",
		Summary: "an etcd concurrency.Mutex holder's links are blackholed (packets dropped both ways, no TCP reset) 5 ms after its grant, as it starts a " +
			"critical section longer than its lease's TTL (2 s): its client learns the lease is gone only when its own keepalive " +
			"deadline (TTL after the last answered keepalive, checked every 500 ms) passes, about when etcd expires the lease, so " +
			"the next waiter can hold the lock before the first notices, and the first writes (consul#18271's silent link; " +
			"a ZooKeeper client suspects its session at 2/3 of the timeout, before the server expires it)",
		Args: []string{"--lock", "etcd-mutex", "--nemesis", "blackhole@grant+5ms:3xlease*2", "--lease", "2s", "--think", "2500ms",
			"--workers", "5", "--time", "25s"},
		Expect: "invalid: a double holder, the story naming when the holder's client reported the lease lost (valid with --fencing: the create revision is the token)",
		Want:   "U", WantFenced: "S",
	})
}
