package bugs

func init() {
	register(Bug{
		ID:         "etcd-11429",
		Order:      16,
		Title:      "etcd: a waiter whose session expired while it waited is told it holds the lock",
		Regression: true,
		Runs: []Run{
			{Report: "[etcd-io/etcd#11429](https://github.com/etcd-io/etcd/issues/11429): two holders with a 1 s TTL after the holder crashed",
				Component: "etcd 3.4.23 (Debian), Go client 3.5.35, `etcd-mutex`",
				Args:      waiterExpiresInLine(),
				Invalid:   "0/10 (10 valid)", FixedIn: "client v3.5.0, the first release of the `go.etcd.io/etcd/client/v3` module ([etcd-io/etcd#11408](https://github.com/etcd-io/etcd/pull/11408): `Mutex.Lock` reads its own key back and returns `ErrSessionExpired` when it is gone); never backported to the 3.4 client"},
		},
		What: "The reporter's five clients locked one mutex on sessions with a 1 s TTL (the server makes it 2 s); the holder " +
			"died, and two waiters both returned from `Mutex.Lock` 24 ms apart: one of them had lost its session while it " +
			"waited, its key was gone, and the 3.4 client's `Lock` returned nil once the keys before its own were deleted, " +
			"without asking whether its own key still existed. Every release of the client/v3 module lockcheck can link " +
			"(`--library-version`: 3.5.0 and later) has the fix, so this row is a regression check on the fixed client: " +
			"the run pauses one client 300 ms after it asked again for the lock, waiting in line behind the two others, for a lease " +
			"and two seconds, so its session ends while it waits, and the holders release after it resumed (each holds 6 s; its " +
			"acquire may wait 20 s). The danger is reached in every run " +
			"(`waiter-stopped-past-lease`): valid 10/10, the paused client's `Lock` returning `ErrSessionExpired` each time once the locks before it were released (23 times in the ten runs), never a grant, and `waiter-stopped-past-lease` reached in all ten. lockcheck's `etcd-mutex` also reads the key back after the " +
			"grant (for its token), which would turn the old client's false grant into an `ErrSessionExpired` too: the row " +
			"checks the library and the wrapper together, as users run them.",
	})
}

// waiterExpiresInLine is the run of etcd-11429 and etcd-19597: one client
// paused 300 ms after it asked again for the lock, waiting in line behind
// the two others, for its session's TTL and two seconds; each holds 6 s
// and an acquire may wait 20 s.
func waiterExpiresInLine() []string {
	return []string{"--lock", "etcd-mutex", "--lease", "2s", "--nemesis", "pause@acquire/p0#2+300ms:lease+2s*3", "--think", "6s",
		"--workers", "3", "--acquire-timeout", "20s", "--time", "40s"}
}
