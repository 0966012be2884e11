package bugs

func init() {
	register(Bug{
		ID:    "etcd-17470",
		Order: 17,
		Title: "etcd: a crashed client's session keeps its lock (reported; it does not)",
		Runs: []Run{
			{Report: "[etcd-io/etcd#17470](https://github.com/etcd-io/etcd/issues/17470): a session's lease kept alive after its client exits, so nobody else can lock",
				Component: "etcd 3.4.23 (Debian), Go client 3.5.35, `etcd-mutex`",
				Args: []string{"--lock", "etcd-mutex", "--lease", "2s", "--nemesis", "crash@grant+5ms*3", "--think", "100ms",
					"--workers", "3", "--time", "30s", "--stuck-bound", "10s"},
				Invalid: "0/10 (10 valid)", FixedIn: "nothing to fix for a process that exits: its keepalives stop, and etcd ends the lease after its TTL; the report was closed without a change"},
		},
		What: "The report quotes the session's documentation (\"lease kept alive for the lifetime of a client\") and says that " +
			"when the session's client exits unexpectedly the lease is renewed forever. A client process that dies sends no " +
			"more keepalives, so its lease ends one TTL later and etcd deletes its lock key: the run kills the holder's " +
			"worker (SIGKILL of its process group) 5 ms after three grants, with a liveness bound of 10 s (`--stuck-bound`), " +
			"and the next waiter is granted each time (`holder-crashed` reached in every run): valid 10/10, with `holder-crashed` reached three times in every run: each killed holder's lease ended one TTL after its last keepalive and the next waiter was granted, and no acquire waited near the 10 s bound. What does keep a lock " +
			"forever is a process that lives on with a dead goroutine: its client still renews the session. That is the " +
			"application's bug, and no fault lockcheck injects can show it.",
	})
}
