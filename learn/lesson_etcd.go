package learn

func init() {
	register(Lesson{
		ID:    "etcd-lease-expiry",
		Order: 8,
		Title: "etcd: the lease expires",
		Setup: "The lock is etcd's concurrency.Mutex: a key attached to a lease of 2 s that the client keeps alive in the background. " +
			"etcd is linearizable and decides everything by Raft. A holder is paused for 6 s.",
		Question: "Does the paused client learn that it lost the lock before it writes again?",
		Choices: []string{
			"Yes: etcd's keepalive fails, so the client cannot write",
			"No: its lease expires, etcd deletes the lock key, the next waiter is granted the lock, and the paused client resumes and writes before its session reports the lease gone",
			"Yes: etcd refuses every request from a client whose lease expired",
		},
		Answer: 1,
		Explanation: "etcd expires a lease that is not kept alive, and deletes its keys: the next waiter's key becomes the oldest and it holds the lock, correctly. " +
			"The paused client's keepalive goroutine was paused with it; when the process resumes, its code goes on where it stopped, into the write, " +
			"and only then does its session report the lease expired. Jepsen's etcd 3.4.3 analysis showed exactly this, and etcd's docs now say it: " +
			"a lock built on a lease cannot guarantee mutual exclusion.\n\n" +
			"etcd's fixes: pass the lock key's create revision to the storage as a fencing token, or keep the protected data in etcd and write it only in a transaction " +
			"that checks the lock key is still there with that revision (lockcheck's etcd-mutex-guarded design).",
		Sources: []Source{srcJepEtcd, srcEtcdNotes, srcEtcdLock, srcKleppmann},
		Cell: Cell{Args: []string{"--scenario", "etcd-lease-expiry", "--time", "16s", "--nemesis-interval", "4s", "--think", "300ms", "--workers", "3"},
			Seed: 2},
		Want:  "invalid",
		Shows: "double-holder",
		Also:  []string{"lost-update"},
	})
}
