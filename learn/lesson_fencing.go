package learn

func init() {
	register(Lesson{
		ID:    "fencing",
		Order: 4,
		Title: "Fencing tokens save the storage",
		Setup: "Lesson 2 again, with one change: every grant comes with a number that grows with each grant (a fencing token), " +
			"the client sends it with each write, and the storage refuses a write whose token is lower than one it has already seen.",
		Question: "The paused client still wakes up believing it holds the lock. Does its stale write reach the storage?",
		Choices: []string{
			"Yes: nothing changed in the lock, so the update is lost again",
			"No: the storage has seen a higher token from the new holder and refuses the write",
			"No: the lock server refuses to let the paused client resume",
		},
		Answer: 1,
		Explanation: "Fencing does not stop two clients from believing they hold the lock: the red band is still there. " +
			"It moves the decision to the one place that sees every write, the storage. The new holder's token is higher; " +
			"once the storage has seen it, the old holder's write with its lower token is refused, and no update is lost. The checkers judge the run valid, " +
			"and the story names the refused write.\n\n" +
			"This is Kleppmann's fix; it needs a storage that can check tokens and a lock service that hands out increasing ones " +
			"(ZooKeeper's zxid, etcd's revision; a Redis lock needs a counter such as INCR, and RedLock has none). " +
			"antirez's reply argues that a storage able to refuse stale writes could do without the lock, and that a unique random token with a check-and-set serves as well; either way, the check happens where the write lands.",
		Sources: []Source{srcKleppmann, srcAntirez, srcEtcdNotes},
		Cell:    Cell{Args: []string{"--scenario", "redis-pause", "--fencing", "--time", "8s", "--think", "300ms", "--workers", "3"}, Seed: 1},
		Want:    "valid",
		Shows:   "stale-write-rejected",
		Also:    []string{"double-holder"},
	})
}
