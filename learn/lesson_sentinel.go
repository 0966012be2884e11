package learn

func init() {
	register(Lesson{
		ID:    "sentinel-failover",
		Order: 5,
		Title: "Sentinel failover loses the key",
		Setup: "The lock lives on a Redis master with two replicas, watched by three Sentinels. " +
			"The master is cut off from its replicas and Sentinels, while two clients can still reach it and only it; " +
			"the Sentinels promote a replica, and the other clients follow them there.",
		Question: "Can two clients hold the lock at once, though every grant was a correct SET NX on some master?",
		Choices: []string{
			"No: a replica has a copy of the key, so the new master refuses it",
			"Yes: replication is asynchronous, the promoted replica never saw the latest grants, and both masters grant the lock until the old one is demoted",
			"No: the Sentinels wait for the old master's lease to run out before promoting",
		},
		Answer: 1,
		Explanation: "Redis replicates asynchronously: a master acknowledges a SET before any replica has it. " +
			"When the Sentinels promote a replica, the lock keys the old master granted since the cut are not there, and the old master, still reached by some clients, " +
			"goes on granting the same lock. Two masters, two holders (the red bands), and when the old master rejoins as a replica its grants vanish.\n\n" +
			"The Sentinel docs say it plainly: acknowledged writes can be lost in a failover. That is why antirez designed RedLock over independent masters rather than a replicated one, " +
			"and Jepsen's 2013 Redis analysis showed a Sentinel-managed Redis losing acknowledged writes in a partition. " +
			"Fencing tokens do not save this design either: the token counter lives on the failed-over master too, so it goes back; " +
			"the fencing checker's token-order anomalies show it, a grant handing out a lower token than one granted before it.",
		Sources: []Source{srcSentinel, srcJepRedis, srcRedisLock, srcKleppmann},
		Cell:    Cell{Args: []string{"--scenario", "sentinel-failover-lock-loss", "--time", "10s", "--think", "200ms", "--workers", "4"}, Seed: 1},
		Want:    "invalid",
		Shows:   "double-holder",
		Also:    []string{"token-order"},
	})
}
