package scenarios

func init() {
	register(Scenario{
		Name: "etcd-lease-expiry",
		Summary: "an etcd concurrency.Mutex holder is paused (SIGSTOP) 5 ms after its grant for 3 session TTLs (TTL 2 s): the client cannot keep its " +
			"lease alive, etcd expires the lease and deletes the lock key, the next waiter holds the lock, and the first " +
			"resumes and writes before its session reports the lease gone (Jepsen, etcd 3.4.3; mechanism M1)",
		Args: []string{"--lock", "etcd-mutex", "--nemesis", "pause@grant+5ms:3xlease*2", "--lease", "2s", "--think", "200ms",
			"--workers", "5", "--time", "25s"},
		Expect: "invalid (valid with --fencing: the create revision is the token; valid with --lock etcd-mutex-guarded: etcd refuses the stale write)",
		Want:   "U", WantFenced: "S",
	})
}
