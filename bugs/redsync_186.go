package bugs

func init() {
	register(Bug{
		ID:    "redsync-186",
		Order: 5,
		Title: "RedLock on a bare quorum loses a master's key",
		Runs: []Run{
			{Report: "[go-redsync/redsync#186](https://github.com/go-redsync/redsync/issues/186)",
				Component: "lockcheck's RedLock, redis-server 7.0.15",
				Args:      []string{"--scenario", "redlock-restart-without-fsync"},
				Invalid:   "9/10", FixedIn: "open"},
			{Report: "the same",
				Component: "redsync v4.18.1 (RedLock mode)",
				Args:      []string{"--scenario", "redlock-restart-without-fsync", "--lock", "redsync-redlock"},
				Invalid:   "6/10", FixedIn: "open"},
		},
		What: "redsync#186: the holder has three of five masters; one of them restarts without its data (no fsync) and a " +
			"rival takes it and the two the holder lacked. The story names the restarted master and the key it lost. 5b " +
			"runs the library itself (redsync's RedLock mode) under the same fault.",
	})
}
