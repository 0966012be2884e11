package learn

func init() {
	register(Lesson{
		ID:    "ttl-pause",
		Order: 2,
		Title: "A TTL and a pause: two holders",
		Setup: "Now the lock is one atomic SET key owner NX PX 1000: it expires by itself after a lease of 1 s. " +
			"A holder is paused (SIGSTOP, as a long garbage-collection pause would) for 3 s in the middle of its critical section.",
		Question: "While the first client is paused, will a second client get the lock?",
		Choices: []string{
			"No: the first client still holds it, so the others wait",
			"Yes: the key expires after 1 s, the second client takes it, and the first one resumes believing it still holds the lock",
			"Yes, but the first client finds out before it touches the resource again",
		},
		Answer: 1,
		Explanation: "A lease protects against a dead holder by letting the lock go after a while, whether or not the holder is done. " +
			"The server cannot tell a dead client from a paused one. So when the pause outlasts the lease, the key expires, another client takes the lock, " +
			"and the paused one wakes up with no way of knowing time passed: it goes on and writes. For a while two clients believe they hold the lock (the red band).\n\n" +
			"Checking the time before writing does not close the gap: the pause can come between the check and the write. " +
			"This is the example of Kleppmann's 2016 article; antirez's reply agrees that a pause after the grant hits every lock that releases itself, not only Redis's, " +
			"and argues about what to do about it. Lesson 4 shows the fix Kleppmann proposes.",
		Sources: []Source{srcKleppmann, srcAntirez, srcRedisLock},
		Cell:    Cell{Args: []string{"--scenario", "redis-pause", "--time", "8s", "--think", "300ms", "--workers", "3"}, Seed: 1},
		Want:    "invalid",
		Shows:   "double-holder",
		Also:    []string{"lost-update"},
	})
}
