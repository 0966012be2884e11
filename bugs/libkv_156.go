package bugs

func init() {
	register(Bug{
		ID:    "libkv-156",
		Order: 22,
		Title: "libkv: the ZooKeeper store's lock never reports that it was lost",
		Runs: []Run{
			{Report: "[docker/libkv#156](https://github.com/docker/libkv/pull/156): the ZooKeeper `Locker`'s lost channel is never closed (open, unmerged)",
				Component: "ZooKeeper 3.8.0 (Debian), three servers; github.com/docker/libkv v0.2.1 (its last release, on samuel/go-zookeeper), `libkv-zk-lock`",
				Args:      []string{"--lock", "libkv-zk-lock", "--nemesis", "pause@grant+5ms:lease+1s*3", "--time", "15s"},
				Invalid:   "10/10", FixedIn: "open: libkv is archived; its successors (valkeyrie, kvtools) are other modules"},
		},
		What: "libkv's `Locker.Lock` returns a channel that, by the interface's contract, is closed when the lock is lost, and " +
			"users of libkv select on it to stop their work. The ZooKeeper store returns `make(chan struct{})` and never " +
			"closes it: nothing watches the session or the lock node. The worker asks the channel before each access, as " +
			"libkv's users do; the holder is paused 5 ms after its grant for a session timeout and a second, ZooKeeper " +
			"expires its session and grants the next waiter, and the first resumes, finds the channel open and writes: " +
			"invalid 10/10, with `holder-paused-past-lease` three times in every run (and the resumed holder's `Unlock`, on an expired session, failing). libkv hands out no fencing token, so there is no fenced run.",
	})
}
