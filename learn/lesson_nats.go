package learn

func init() {
	register(Lesson{
		ID:    "nats-kv-pause",
		Order: 11,
		Title: "A NATS KV lease under a pause",
		Setup: "The lock is a key in a NATS JetStream key/value bucket whose TTL is 1 s: Create takes it (only if the key does not exist), " +
			"and the holder's client renews it every third of a second with Update, which succeeds only if the key still has the holder's revision. " +
			"A holder is paused (SIGSTOP) for 3 s right after its grant.",
		Question: "The client renews its key three times a second. Is the lock still its own when it resumes and writes?",
		Choices: []string{
			"Yes: the renewals keep the key alive",
			"No: the paused client sends no renewal, the server removes the key once its last revision is a TTL old, another client creates it, and the first resumes and writes before its next renewal is refused",
			"Yes: NATS keeps a key while its client's connection is open",
		},
		Answer: 1,
		Explanation: "A renewal is sent by the client's own code, so it stops when the client stops. The bucket's TTL is the age of the key's last revision: " +
			"a second after the last renewal, the server removes the key, and a waiter's Create succeeds. " +
			"When the paused client resumes, it goes on with its critical section; it learns the lock is lost only when its next Update is refused " +
			"(the key no longer has its revision), and its lock client reports that after the write.\n\n" +
			"This is the lesson of the pause again, on a newer store: any lease, renewed by heartbeats, keepalives or Updates, fails the same way. " +
			"The cure is the same too: the Create's revision grows with every grant, so it is a fencing token the storage can check.",
		Sources: []Source{srcNatsKV, srcKleppmann},
		Cell:    Cell{Args: []string{"--scenario", "nats-kv-pause", "--workers", "3", "--think", "300ms", "--time", "10s"}, Seed: 1},
		Fix: Fix{Cell: Cell{Args: []string{"--scenario", "nats-kv-pause", "--fencing", "--workers", "3", "--think", "300ms", "--time", "10s"}, Seed: 1},
			Want: "valid", Why: "The same pause with the Create revision passed to the storage as a fencing token: the resumed holder's stale write is refused."},
		Want:  "invalid",
		Shows: "double-holder",
		Also:  []string{"lost-update"},
	})
}
