package bugs

func init() {
	register(Bug{
		ID:    "curator-604",
		Order: 30,
		Title: "Curator: an acquire that counts the expired session's node as its own (not reproduced here)",
		Runs: []Run{
			{Report: "[apache/curator#1121 (CURATOR-604)](https://github.com/apache/curator/issues/1121): after a session expired and the client reconnected with a new one, two clients held an InterProcessMutex (open)",
				Component: "ZooKeeper 3.8.0 (Debian), three servers; Curator 5.4.0 (Debian), `curator-mutex`",
				Args:      holderBlackholed("curator-mutex"),
				Invalid:   "0/10 (10 valid)", FixedIn: "open; `StandardLockInternalsDriver.getsTheLock` checks no node's session"},
		},
		What: "The report: a client whose session expired reconnected with a new session and asked for the lock again, and " +
			"Curator's acquire found its old node among the children (visible for a moment before the server deleted it) " +
			"and took it for its own. The window is the moment between the new session and the deletion of the old " +
			"session's nodes, on the server the client reconnects to. The run (the control run of `curator-460`) " +
			"blackholes a holder's links past its session timeout at three grants a run; each time the client reconnects " +
			"with a new session and asks again: in the ten runs, the expired clients reconnected with new sessions and were granted the lock again after their LOST (three times a run), and every run was valid. Not reproduced: a reconnection that meets the old node needs " +
			"a server that lags in applying the expiry, and no run here met one.",
	})
}
