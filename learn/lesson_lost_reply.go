package learn

func init() {
	register(Lesson{
		ID:    "lost-reply-retry",
		Order: 12,
		Title: "A lost reply and the retry that follows",
		Setup: "An etcd lock (concurrency.Mutex on a session) released with Mutex.Unlock, as etcd's examples release it. " +
			"One client's Unlock reaches etcd and deletes its lock key, but the reply is lost, so the application retries the Unlock " +
			"in the background about three seconds later. Meanwhile the same client has taken the lock again on the same session, " +
			"and a session's lock key is named by its lease: the new key has the old one's name.",
		Question: "What does the late retry of the Unlock delete?",
		Choices: []string{
			"Nothing: the key it meant was deleted by the first Unlock",
			"The client's new lock: it has the same key name, so the retry frees the lock while the client still works in it, and another client is granted it",
			"Nothing: etcd refuses an Unlock from a Mutex that does not hold the lock now",
		},
		Answer: 1,
		Explanation: "Mutex.Unlock deletes the lock key by its name, the lock's prefix and the session's lease ID. " +
			"The first Unlock applied; only its reply was lost, so the application cannot tell whether it did. Retrying is the natural answer, and it is safe " +
			"only when the request means the same thing the second time. It does not here: by the time the retry runs, the same session holds the lock again " +
			"under the same key name, and the retry deletes that newer lock. The lock is free while its holder is in its critical section, " +
			"and the next waiter walks in. In the run, process 0's lock client reports that its background Unlock succeeded just before etcd deletes " +
			"the key of the hold process 0 is in, and process 1 is granted the lock a moment later.\n\n" +
			"This is etcd-io/etcd#22082, still open, and an instance of the pattern Jepsen keeps finding: a retried request that is not idempotent. " +
			"The cure is a release that names the hold, not the key: delete the key only if its create revision is still the one the grant returned " +
			"(a transaction comparing CreateRevision), as lockcheck's etcd-mutex design does; or fencing by that revision, so a stale holder's write is refused.",
		Sources: []Source{srcEtcd22082, srcJepJetcd, srcEtcdNotes, srcKleppmann},
		Cell:    Cell{Args: []string{"--scenario", "etcd-unlock-retry"}, Seed: 1},
		Fix: Fix{Cell: Cell{Args: []string{"--scenario", "etcd-unlock-retry", "--lock", "etcd-mutex"}, Seed: 1}, Want: "valid",
			Why: "The same lost replies on etcd-mutex, whose release deletes the key only while its create revision is the grant's: a late delete finds a newer lock and leaves it."},
		Want:  "invalid",
		Shows: "double-holder",
		Also:  []string{"lost-update"},
	})
}
