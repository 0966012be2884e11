package learn

func init() {
	register(Lesson{
		ID:    "unlock-no-owner",
		Order: 3,
		Title: "Unlock without an owner check",
		Setup: "The same SET NX PX lock, but released with a plain DEL key, without checking whose key it is. " +
			"Again a holder is paused past its lease.",
		Question: "When the paused client wakes up and releases the lock, whose lock does it delete?",
		Choices: []string{
			"Its own: DEL fails because its key already expired",
			"The current holder's: DEL deletes whatever key is there, so anyone can take the lock while its holder still works in it",
			"Nobody's: Redis refuses a DEL from a client whose lease ran out",
		},
		Answer: 1,
		Explanation: "DEL does not know who set the key. After the pause the key belongs to another client, and the woken client's DEL deletes it: " +
			"the lock is free while its rightful holder is still in its critical section, and the next client walks in " +
			"(in this run, the woken client itself: it deletes the holder's key, asks again at once and is granted the lock). " +
			"One lost lease becomes a chain of double holders, each release freeing someone else's lock (the checker names them foreign releases).\n\n" +
			"This is why the Redis docs release with a script that deletes the key only when it still holds the client's own random value " +
			"(if GET key == my value then DEL key). The owner check does not prevent the first double holder of lesson 2; it stops one lost lease from breaking the lock again and again.",
		Sources: []Source{srcRedisSet, srcRedisLock, srcKleppmann},
		Cell:    Cell{Args: []string{"--lock", "redis-set-px-del", "--nemesis", "pause", "--lease", "1s", "--time", "8s", "--think", "300ms", "--workers", "3"}, Seed: 1},
		Want:    "invalid",
		Shows:   "foreign-release",
	})
}
