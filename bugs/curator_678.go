package bugs

func init() {
	register(Bug{
		ID:    "curator-678",
		Order: 19,
		Title: "Curator: a release whose reply was lost (reported to leave the lock stuck)",
		Runs: []Run{
			{Report: "[apache/curator#1193 (CURATOR-678)](https://github.com/apache/curator/issues/1193): `InterProcessMutex.release()` hit by a connection loss forgets the lock, and later acquires fail",
				Component: "ZooKeeper 3.8.0 (Debian), three servers; Curator 5.4.0 (Debian), `curator-mutex`",
				Args: []string{"--lock", "curator-mutex", "--lease", "3s", "--nemesis", "reply-loss@release:2500ms*3", "--think", "100ms",
					"--workers", "2", "--time", "30s", "--stuck-bound", "10s"},
				Invalid: "0/10 (10 not exercised)", FixedIn: "open upstream; `LockInternals` deletes its node with `delete().guaranteed()`, which retries in the background, so the lock comes free"},
		},
		What: "The report: `release()` removes the thread's lock data in a `finally` block even when deleting the lock node " +
			"failed on a connection loss, so the node could stay behind and block every later acquire. Curator deletes the " +
			"node with a guaranteed delete, retried in the background until it succeeds, so a node left by a lost reply " +
			"should come free. The run loses the replies to three releases for 2.5 s each, longer than the client's read timeout (two thirds of " +
			"the 3 s session) and shorter than the session, with two workers and a liveness bound of 10 s (`--stuck-bound`): all ten runs were not exercised (exit 2), and rightly: each of the 30 releases whose replies were lost returned ok 2.6 to 3.5 s later, once Curator's connection had gone SUSPENDED and RECONNECTED on the same session and its retried delete was answered, so the application never saw a failed release and no lock stuck (liveness valid in all ten). The report's exception needs Curator's retries to give up while the session lives on, which a loss shorter than the session (as here) does not bring.",
	})
}
