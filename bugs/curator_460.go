package bugs

func init() {
	register(Bug{
		ID:    "curator-460",
		Order: 21,
		Title: "Curator: LOST comes a session timeout after SUSPENDED, after the server already expired the session",
		Runs: []Run{
			{Report: "[apache/curator#980 (CURATOR-460)](https://github.com/apache/curator/issues/980): a leader keeps its leadership after its session expired, with `SessionConnectionStateErrorPolicy`",
				Component: "ZooKeeper 3.8.0 (Debian), three servers; Curator 5.4.0 (Debian), `curator-mutex-lost-only`",
				Args:      holderBlackholed("curator-mutex-lost-only"),
				Invalid:   "10/10", FixedIn: "Curator 4.1.0 ([apache/curator#262](https://github.com/apache/curator/pull/262)) lets `sessionExpirationPercent` shorten the wait for LOST; its default, 100, keeps the gap. Stop at SUSPENDED instead (next row)"},
			{Report: "the same",
				Component: "the same Curator, the holder stopping at SUSPENDED as Curator's tech notes ask (`curator-mutex`)",
				Args:      holderBlackholed("curator-mutex"),
				Invalid:   "0/10 (10 valid)", FixedIn: "the documented handling", Fixed: true},
		},
		What: "Curator's `ConnectionStateManager` reports SUSPENDED when its connection goes quiet (two thirds of the session " +
			"timeout) and LOST only after a further session timeout has passed without a reconnection, counted from SUSPENDED. " +
			"The server counts its timeout from the last time it heard the client, earlier, so it has expired the session, " +
			"deleted the lock node and granted the next waiter about two thirds of a session timeout before the client hears " +
			"LOST. A holder that, like the leader recipes under `SessionConnectionStateErrorPolicy`, ends its lock only at LOST " +
			"(`curator-mutex-lost-only`) goes on working in that gap. The run blackholes the holder's links (no reset: the " +
			"connection goes silent) 5 ms after three grants, for 3 s with a 2 s session, while it runs 30 critical sections " +
			"of 100 ms: invalid 10/10, with `server-released-first` and `wrote-after-lock-lost` three times in every run: the server ended the session about 2 s into the blackhole, and LOST came 1.3 s or so after that, by which time another worker held the lock. The same runs with the holder stopping at SUSPENDED (`curator-mutex`) " +
			"were valid 10/10 (`holder-cut-off` three times in each): the holder refused its accesses from SUSPENDED on, before the server let the session go.",
	})
}

// holderBlackholed is the run of curator-460 and curator-604 with lock:
// the holder's links blackholed for 3 s (a 2 s session) 5 ms after three
// grants, while it runs 30 critical sections of 100 ms.
func holderBlackholed(lock string) []string {
	return []string{"--lock", lock, "--nemesis", "blackhole@grant+5ms:3s*3", "--lease", "2s", "--think", "100ms",
		"--sections", "30", "--time", "30s"}
}
