package scenarios

// The RedLock scenarios: the two timelines of Kleppmann's "How to do
// distributed locking" (2016) against the redlock design (five independent
// masters).
//
// redlock-pause uses the pause nemesis, which SIGSTOPs a worker right after
// its grant (a holder) for 3 s, three leases. Kleppmann's text pauses client
// 1 while the grant replies are in flight; antirez answered that the client
// measures the elapsed time after the replies arrive, and the redlock client
// does: a pause before that point makes the round take longer than the lease,
// so it is not granted (workloads' TestRedlock shows it with a fast client
// clock). A pause right after the grant, as here, is the case nothing in the
// algorithm can catch: the keys expire on all five masters, another client
// locks a majority, and for the rest of the pause both clients hold a grant,
// which the mutex and overlap checkers report as a double holder naming the
// pause. The redlock client re-checks its validity time before each access
// (Valid), as the redis.io page asks ("use the lock only within the validity
// time"), so after resuming it usually refuses the stale write instead of
// writing: the resource stays consistent, the lock did not. A client that
// checks only once, right after acquiring (as redsync's Lock returns and the
// application works), or a pause that lands between its last check and its
// write, writes stale data; no fencing token exists to refuse it.
//
// redlock-clock-jump uses the redlock-clock-jump nemesis (the whole
// timeline: some clients cut off from lock3 and lock4, lock2's wall clock
// jumped once one of them holds lock0..lock2) with two workers, one on each
// side, and a critical section of 1.2 s (60 % of the 2 s lease, within the
// validity time), so client 1 is still working when client 2, whose rounds
// wait out the per-node timeout on the nodes it cannot reach, locks
// lock2..lock4. Client 1's clock is right, so its validity check passes and
// it writes: a lost update. The timeline starts at the run's first grant
// (redlock-clock-jump@grant) and again after each one ends, not at a
// random time; its own wait for a cut-off holder follows the lock's events. More workers make the scenario weaker, not
// stronger: every worker on client 1's side holds lock2 for a whole round
// (its requests to lock3 and lock4 hang until the node timeout), so client 2
// seldom finds it free.
func init() {
	register(Scenario{
		Name: "redlock-pause",
		Summary: "a RedLock holder is paused 5 ms after its grant for three leases: its keys expire on all five masters, " +
			"another worker locks a majority, and the first resumes believing it holds the lock (its validity check then refuses the write)",
		Args: []string{"--lock", "redlock", "--nemesis", "pause@grant+5ms:3xlease*3", "--lease", "1s",
			"--workers", "5", "--time", "20s"},
		Expect: "invalid (a double holder; RedLock has no fencing token, so --fencing is refused)",
		Want:   "U",
	})
	register(Scenario{
		Name: "redlock-clock-jump",
		Summary: "Kleppmann's timeline: client 1 locks lock0..lock2 while lock3 and lock4 are unreachable for it, lock2's wall clock " +
			"jumps forward and expires its key, client 2 locks lock2..lock4 while client 1 still works and writes (needs the clock shim)",
		Args: []string{"--lock", "redlock", "--nemesis", "redlock-clock-jump@grant:5s*3", "--lease", "2s", "--think", "1200ms",
			"--workers", "2", "--time", "40s"},
		Expect: "invalid (a double holder and a lost update)",
		Want:   "U",
	})
}
