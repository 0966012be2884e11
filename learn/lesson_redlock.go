package learn

func init() {
	register(Lesson{
		ID:    "redlock-clock-jump",
		Order: 6,
		Title: "RedLock and a clock jump",
		Setup: "RedLock takes the lock on a majority (3 of 5) of independent Redis masters, each key with a 2 s lease. " +
			"Client 1 locks lock0, lock1 and lock2 (it cannot reach lock3 and lock4); then lock2's wall clock jumps forward, so its key expires at once. " +
			"Client 2 cannot reach lock0 and lock1, and tries lock2, lock3 and lock4. " +
			"(The clients are numbered as in Kleppmann's account; the run numbers its processes from 0, so client 1 is process 0 and client 2 is process 1.)",
		Question: "Can client 2 get a majority while client 1 still holds its majority?",
		Choices: []string{
			"No: a majority of five can be held by only one client at a time",
			"Yes: lock2 forgot client 1's key when its clock jumped, so it counts towards client 2's majority too",
			"No: RedLock's validity time (lease minus the time the acquire took) catches the jump",
		},
		Answer: 1,
		Explanation: "Two majorities of five always share a node; RedLock's safety rests on that shared node refusing the second client. " +
			"Here the shared node is lock2, and its key expired early because its wall clock jumped (an NTP step, an administrator). " +
			"lock2 then grants the lock again, client 2 has lock2, lock3 and lock4, a majority, and client 1 still believes it holds lock0, lock1 and lock2. " +
			"Watch the lanes per master: lock2's band for process 0 (client 1) ends early, then starts again for process 1 (client 2).\n\n" +
			"This is the timeline of Kleppmann's 2016 article. antirez replied that RedLock assumes clocks that advance at about the right rate, " +
			"and that operators must slew server clocks, never step them; Kleppmann's point is that a lock's safety should not depend on timing at all. " +
			"RedLock hands out no fencing token, so there is no fix at the storage either.",
		Sources: []Source{srcKleppmann, srcAntirez, srcRedisLock},
		Cell:    Cell{Args: []string{"--scenario", "redlock-clock-jump", "--time", "20s"}, Seed: 1},
		Want:    "invalid",
		Shows:   "double-holder",
		Also:    []string{"lost-update"},
	})
}
