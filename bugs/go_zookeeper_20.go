package bugs

func init() {
	register(Bug{
		ID:    "go-zookeeper-20",
		Order: 18,
		Title: "go-zookeeper: the lock recipe never tells its holder the lock is gone",
		Runs: []Run{
			{Report: "[samuel/go-zookeeper#20](https://github.com/samuel/go-zookeeper/issues/20): no way to learn that a held lock was lost (open; PR [#190](https://github.com/samuel/go-zookeeper/pull/190), a `Lock.Done()`, closed unmerged)",
				Component: "ZooKeeper 3.8.0 (Debian), three servers; github.com/go-zookeeper/zk v1.0.4 (the maintained fork), `go-zookeeper-lock`",
				Args:      []string{"--lock", "go-zookeeper-lock", "--nemesis", "pause@grant+5ms:lease+1s*3", "--time", "15s"},
				Invalid:   "10/10", FixedIn: "open in both samuel/go-zookeeper (unmaintained since 2020) and go-zookeeper/zk v1.0.4: `Lock` has no loss signal; fence with the lock node's czxid (`--fencing`: valid 10/10 in [findings.md](findings.md))"},
		},
		What: "`zk.Lock` creates an ephemeral sequential node and returns once it is the lowest; after that it offers no channel, " +
			"callback or check that says the session, and with it the node, is gone. The holder is paused 5 ms after its grant " +
			"for a session timeout and a second, ZooKeeper expires the session and deletes the node, the next waiter is granted, " +
			"and the first resumes and writes: `wrote-after-lock-lost` in every run, invalid 10/10, with `holder-paused-past-lease` and `server-released-first` three times in every run. The user can only watch " +
			"the connection's session events themselves (the zk.Conn's event channel, which lockcheck reports as events), and " +
			"even that cannot stop a write already on its way; the lock node's czxid as a fencing token makes the same " +
			"runs valid (the hunt's row in findings.md).",
	})
}
