package bugs

func init() {
	register(Bug{
		ID:    "curator-206",
		Order: 7,
		Title: "ZooKeeper session expiry",
		Runs: []Run{
			{Report: "[apache/curator#727 (CURATOR-206)](https://github.com/apache/curator/issues/727)",
				Component: "ZooKeeper 3.8.0, an ephemeral-node lock",
				Args:      []string{"--scenario", "zk-session-expiry"},
				Invalid:   "10/10", FixedIn: "by design (session expiry ends the lock; the czxid is the token)"},
			{Report: "the same",
				Component: "Curator 5.4.0 InterProcessMutex (Debian)",
				Args:      []string{"--lock", "curator-mutex", "--nemesis", "pause", "--lease", "1s", "--nemesis-duration", "3s", "--nemesis-interval", "4s", "--workers", "5", "--time", "20s"},
				Invalid:   "10/10", FixedIn: "as above"},
		},
		What: "CURATOR-206: a Curator client cut off longer than its session still believes it holds the InterProcessMutex " +
			"after its ephemeral node is gone, and a second client acquires. Here the holder is paused for three session " +
			"timeouts; 7b runs Debian's Curator itself.",
	})
}
