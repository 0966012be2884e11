package learn

func init() {
	register(Lesson{
		ID:    "setnx-no-ttl",
		Order: 1,
		Title: "SETNX without a TTL: the stuck lock",
		Setup: "A client takes the lock with SETNX and gives the key a TTL with a second command, PEXPIRE. " +
			"One client is killed between the two commands: its key exists, with no TTL, and nobody is left to delete it. " +
			"On the timeline, a red band is a lock held for a client that is dead.",
		Question: "After the crash, will another client ever get the lock?",
		Choices: []string{
			"Yes, as soon as the crashed client's lease runs out",
			"Yes, Redis notices the client died and deletes its key",
			"No: the key has no TTL, so the lock stays taken for ever",
		},
		Answer: 2,
		Explanation: "SETNX and PEXPIRE are two commands, so a client can die after the first and before the second. " +
			"The key then has no time to live: Redis keeps it until someone deletes it, and the only one who would is dead. " +
			"Redis knows nothing of the clients behind a key, so it cannot give the lock back when its owner dies.\n\n" +
			"In the run, the crash nemesis kills a client stopped between SETNX and PEXPIRE; from then on every acquire fails until the run ends, " +
			"and the liveness checker reports a stuck lock. The fix is one atomic command, SET key value NX PX lease, which the Redis docs have recommended since 2.6.12; " +
			"a lease is what lets a lock outlive its holder's death. The next lessons show what a lease costs.",
		Sources: []Source{srcSetnx, srcRedisSet, srcRedisLock},
		Cell:    Cell{Args: []string{"--scenario", "setnx-expire-crash", "--time", "8s", "--think", "300ms", "--workers", "3"}, Seed: 1},
		Want:    "invalid",
		Shows:   "stuck-lock",
	})
}
