package learn

func init() {
	register(Lesson{
		ID:    "watchdog-starvation",
		Order: 10,
		Title: "A watchdog under CPU starvation",
		Setup: "A Redisson-style lock: SET NX PX with a 500 ms lease, and a watchdog in the client that renews the lease every third of it while the client holds the lock. " +
			"Right after its grant, a holder is starved of CPU for 3 s (held to 1% of one CPU, with busy loops beside it): it is not stopped, only very slow.",
		Question: "Does the watchdog keep the lock alive while its holder crawls?",
		Choices: []string{
			"Yes: it renews every 170 ms or so, well within the lease",
			"No: starved, the client runs only now and then, its renewals come late, the lease runs out between two of them, another client takes the lock, and the starved holder writes on its next turn",
			"Yes: Redis keeps a key alive while its client's connection is open",
		},
		Answer: 1,
		Explanation: "A watchdog is code in the holder's own process, so it is starved exactly when its holder is. " +
			"A renewal that should come every 170 ms comes a second late, the 500 ms lease runs out, Redis deletes the key, and a waiter is granted the lock. " +
			"The starved holder is still in its critical section; on its next turn it writes, and only afterwards does its watchdog learn that the renewal was refused. " +
			"A pause (lesson 2) stops a client outright; starvation is the common form, from a noisy neighbour, a throttled container or a garbage collector, " +
			"and Redisson's users have reported locks released early while the watchdog did not renew.\n\n" +
			"A longer lease makes it rarer, never impossible: no renewal scheme can promise to run in time on a starved machine. " +
			"The cure is the fencing token again: the resource refuses the starved holder's stale write.",
		Sources: []Source{srcRedisson5698, srcKleppmann},
		Cell:    Cell{Args: []string{"--scenario", "watchdog-cpu-starvation", "--workers", "3", "--time", "10s"}, Seed: 1},
		Fix: Fix{Cell: Cell{Args: []string{"--scenario", "watchdog-cpu-starvation", "--fencing", "--workers", "3", "--time", "10s"}, Seed: 1},
			Want: "valid", Why: "The same starvation with fencing tokens: the resource refuses the starved holder's write, whose token is older than the new holder's."},
		Want:  "invalid",
		Shows: "double-holder",
		Also:  []string{"lost-update"},
	})
}
