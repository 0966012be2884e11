package learn

func init() {
	register(Lesson{
		ID:    "client-clock-fast",
		Order: 9,
		Title: "A client clock that runs fast",
		Setup: "The old SETNX pattern of the Redis docs: the lock key holds an expiry time written by the holder's clock, and a waiter that finds that time " +
			"passed, by its own clock, takes the lock over with GETSET. The key has no TTL in Redis: the clients judge expiry. " +
			"The waiters' clocks run twice as fast as real time (a broken time source, a VM's clock), with no jump; the holders' clocks are right.",
		Question: "Can a waiter take the lock while its holder still works in it?",
		Choices: []string{
			"No: the holder wrote the expiry time with a correct clock",
			"Yes: a waiter's fast clock reaches the holder's expiry time early, so it judges a live lock expired and takes it over",
			"No: Redis compares the expiry time with its own clock",
		},
		Answer: 1,
		Explanation: "An expiry time is only as good as the clock that reads it, and here the reader is every waiter. " +
			"A waiter whose clock has gained more than what is left of the holder's lease sees the expiry time passed and takes the lock over, " +
			"while the holder, whose clock is right, still works. The release is a plain DEL, so each woken holder then deletes the next one's key, " +
			"and one fast clock becomes a chain of double holders and foreign releases.\n\n" +
			"Kleppmann's objection to RedLock was about timing assumptions like this one; this design makes the strongest of them, " +
			"that all clients' clocks agree. The cure is to let one clock judge the lease, the server's: SET key value NX PX lease, " +
			"whose TTL runs on the Redis server, does not care what time any client thinks it is.",
		Sources: []Source{srcSetnx, srcRedisSet, srcKleppmann},
		Cell:    Cell{Args: []string{"--lock", "redis-setnx-getset", "--nemesis", "clock-client-rate", "--workers", "3", "--think", "300ms", "--time", "10s"}, Seed: 1},
		Fix: Fix{Cell: Cell{Args: []string{"--lock", "redis-set-px", "--nemesis", "clock-client-rate", "--workers", "3", "--think", "300ms", "--time", "10s"}, Seed: 1},
			Want: "valid", Why: "The same fast clocks on SET NX PX: the key's TTL runs on the server's clock, so no waiter's clock can end a live lease."},
		Want:  "invalid",
		Shows: "double-holder",
		Also:  []string{"foreign-release"},
	})
}
