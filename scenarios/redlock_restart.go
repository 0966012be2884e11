package scenarios

// redlock-restart-without-fsync is antirez's own caveat on RedLock ("delayed
// restarts", in the redis.io distributed-locks page) and
// go-redsync/redsync#186: a master that crashes and comes back without
// having fsynced has lost the keys it granted. When the holder's grant
// rests on exactly a majority of the masters, losing one of them leaves
// the key on a minority: a rival then locks the restarted master and the
// masters the holder never had, a majority of its own, while the holder
// still works.
//
// The restart-lose nemesis crashes a master under the holder's key and
// starts it again at once with its append-only file deleted (the worst
// case of appendfsync no, or of no AOF: nothing was on the disk). It waits
// for a grant on a bare majority of the five masters (three of five):
// ten workers contending for one key make such grants common, since two
// rounds that overlap split the masters between them and the loser
// releases its keys. The critical section (500 ms, a
// quarter of the 2 s lease) gives a rival's retries time to land while the
// holder still works: the mutex and overlap checkers report a double
// holder, whose story names the restarted master, the key it lost and the
// masters the key was left on, and the resource a lost update. RedLock
// always runs five masters (--nodes sizes ZooKeeper ensembles only), so
// this is the redsync#186 case at five nodes and quorum 3. The fault is
// fired by the first grant on just three masters
// (restart-lose@majority-grant) and strikes under that holder's key. A
// restart
// delayed by more than the lease (antirez's remedy), or `kill` with the
// AOF fsynced on every write (how every Redis lock node runs), keeps the
// lock safe.
func init() {
	register(Scenario{
		Name: "redlock-restart-without-fsync",
		Summary: "a RedLock master under a grant on a bare majority (three of five) is SIGKILLed and restarted at once with its " +
			"data gone (no fsync), so it has lost the holder's key: a rival locks it and the two masters the holder lacked while " +
			"the holder still works (antirez's \"delayed restarts\" caveat, redsync#186)",
		Args: []string{"--lock", "redlock", "--nemesis", "restart-lose@majority-grant:2s*3", "--lease", "2s", "--think", "500ms",
			"--workers", "10", "--time", "30s"},
		Expect: "invalid (a double holder and a lost update; the story names the restarted master and the key it lost)",
		Want:   "U",
	})
}
