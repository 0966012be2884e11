package learn

func init() {
	register(Lesson{
		ID:    "redlock-validity",
		Order: 14,
		Title: "RedLock's validity time: a check, not a guarantee",
		Setup: "RedLock again, five independent masters and a 1 s lease. A client's acquire counts how long it took: the lock is granted only when a majority " +
			"answered and time is left (the validity time: the lease, minus the time the acquire took, minus an allowance for clock drift), and " +
			"before each access to the storage the client checks, by its own clock, that its validity time has not passed. " +
			"A holder is paused for 3 s right after its grant; its keys expire and another client takes a majority.",
		Question: "When the paused holder resumes, does its stale write reach the storage?",
		Choices: []string{
			"Yes: it still believes it holds the lock, as in lesson 2",
			"No: it checks its validity time before the access, finds it passed and refuses its own critical section; but two clients did believe they held the lock, and a pause between the check and the write would get through",
			"No: the masters refuse a client whose keys expired",
		},
		Answer: 1,
		Explanation: "The validity time is RedLock's own defence against time: a slow acquire (a network delay, a slow master) leaves less of the lease, " +
			"and one that took longer than the lease is not a grant at all; the client deletes what it set. " +
			"In the run, the paused holder's lock client refuses its critical section on resume (\"redlock validity of k0 passed 2.0 s ago\"), " +
			"so no write is lost, yet for two seconds two clients each believed they held the lock: the double holders the checkers report.\n\n" +
			"The check runs on the client, before the access, so it can only narrow the window: a pause, a long GC or a slow network after the check and before the write " +
			"lands the stale write anyway. This is Kleppmann's objection, and antirez's reply is that the check makes the window small. " +
			"RedLock hands out no fencing token, so no storage-side check can close it; where a write must not land twice, use a lock that gives one (lessons 4, 7 and 8).",
		Sources: []Source{srcRedisLock, srcKleppmann, srcAntirez},
		Cell:    Cell{Args: []string{"--scenario", "redlock-pause", "--workers", "3", "--think", "300ms", "--time", "10s"}, Seed: 1},
		Want:    "invalid",
		Shows:   "double-holder",
	})
}
