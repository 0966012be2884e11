package learn

func init() {
	register(Lesson{
		ID:    "zk-session-expiry",
		Order: 7,
		Title: "ZooKeeper: the session expires",
		Setup: "The lock is a ZooKeeper ephemeral node: it lives as long as its client's session, with a session timeout of 1 s. " +
			"ZooKeeper is a consensus system, with no lease written by hand. A holder is paused for 3 s.",
		Question: "Does ZooKeeper's consensus keep a second client out while the first is paused?",
		Choices: []string{
			"Yes: the node exists until its owner deletes it",
			"No: the session times out, ZooKeeper deletes the ephemeral node, a waiter takes the lock, and the paused client resumes and writes",
			"Yes: the paused client's session stays alive as long as its TCP connection is open",
		},
		Answer: 1,
		Explanation: "An ephemeral node is a lease under another name: the session must be kept alive by heartbeats, and a paused client sends none. " +
			"When the session times out, ZooKeeper deletes the node and the next waiter is granted the lock, correctly by ZooKeeper's rules. " +
			"The paused client learns its session is gone only after it resumes (its client reports the disconnection, then the expiry), " +
			"and by then it may already have written.\n\n" +
			"Consensus makes the lock service agree with itself; it cannot stop a client that does not know it lost the lock. " +
			"Curator's docs tell lock users to treat SUSPENDED as the lock possibly lost and LOST as lost; the fix for the write is again a fencing token: " +
			"the lock node's czxid (creation zxid) grows with every grant.",
		Sources: []Source{srcZKGuide, srcZKRecipes, srcCurator, srcCuratorTN, srcJepZK, srcKleppmann},
		Cell:    Cell{Args: []string{"--scenario", "zk-session-expiry", "--time", "10s", "--think", "300ms", "--workers", "3"}, Seed: 1},
		Want:    "invalid",
		Shows:   "double-holder",
		Also:    []string{"lost-update"},
	})
}
