package bugs

func init() {
	register(Bug{
		ID:    "etcd-22082",
		Order: 14,
		Title: "etcd: a stale `Mutex.Unlock` deletes the session's newer lock",
		Runs: []Run{
			{Report: "[etcd-io/etcd#22082](https://github.com/etcd-io/etcd/issues/22082): a retried `Mutex.Unlock` whose first reply was lost deletes a newer lock of the same session",
				Component: "etcd 3.4.23 (Debian), Go client 3.5.35, `etcd-mutex-unlock`",
				Args:      []string{"--scenario", "etcd-unlock-retry"},
				Invalid:   "10/10", FixedIn: "open ([etcd-io/etcd#22115](https://github.com/etcd-io/etcd/pull/22115) fences the delete on the create revision, as `etcd-mutex`'s release already does: valid)"},
			{Report: "the same, on later client releases",
				Component: "etcd 3.4.23 (Debian), Go client 3.6.16 linked with `--library-version`",
				Args:      []string{"--scenario", "etcd-unlock-retry", "--library-version", "3.6.16"},
				Invalid:   "10/10", FixedIn: "open: no release has the fix"},
			{Report: "the same",
				Component: "etcd 3.4.23 (Debian), Go client 3.7.3 (the newest the Go module proxy served on 2026-11-25)",
				Args:      []string{"--scenario", "etcd-unlock-retry", "--library-version", "3.7.3"},
				Invalid:   "9/10 (1 valid)", FixedIn: "open: no release has the fix"},
		},
		What: "`concurrency.Mutex.Unlock` deletes the lock key by its name, and the name is the session's lease: a later lock " +
			"on the same session has the same key. When the reply to an Unlock is lost (the delete committed), the mutex " +
			"keeps its key, and an application that retries the Unlock (`etcd-mutex-unlock` retries in the background about " +
			"every three seconds, jittered, while it goes on and locks again) deletes whatever lock of its session holds " +
			"that key by then. The scenario loses the replies to one client's Unlock for 100 ms, five times; each retry " +
			"that lands while that client holds the lock again frees it under the holder, and the other client is granted " +
			"it (the story quotes the background Unlock and the server's deletion; when the run stops within a second of " +
			"that deletion, the story calls it \"with its ended lease\": the etcd observer tells a client's delete from a " +
			"lease's end by asking etcd about the lease a second later, and by then the stopped workers have revoked their " +
			"leases, a limitation of the observer). The retry lands while the client waits instead about half the time: " +
			"then it deletes the waiting key and that acquire fails, which is no anomaly; with three lost replies a client " +
			"that was unlucky three times left a run valid (9/10), and five make that rare (10/10, and 10/10 with `check " +
			"repro --bug etcd-22082 --count 10 --seed 1`). The same scenario with `--fencing` is valid 10/10 with the danger " +
			"reached in all 10 (`server-released-first`): the newer lock's create revision is its token. The invalid runs' " +
			"first anomaly came at 8.6 s (median; measured 2026-11-29, two jobs; docs/data/etcd-unlock-retry-five-losses-2026-11-29.jsonl). lockcheck's own `etcd-mutex` releases with a transaction on " +
			"the key's create revision (the fix proposed in etcd-io/etcd#22115) and cannot delete a newer lock: with the " +
			"replies to its releases lost (`--lock etcd-mutex --nemesis reply-loss@release:300ms*3 --think 100ms --workers " +
			"2 --time 20s`), valid 10/10. The client's `Unlock` is the same in 3.6.16 and 3.7.3: linked with either " +
			"(`--library-version`), the scenario is invalid at seeds 1..10 (10/10 and 9/10; the valid run, seed 2 on 3.7.3, " +
			"is one where every retry landed while its client waited, so no newer lock was deleted: `server-released-first` " +
			"not reached), first anomaly 4.2 s and 4.1 s (median; measured 2026-11-29, two jobs). No fixed release exists " +
			"yet, so `check repro --bug etcd-22082` runs the broken version alone and says so.",
	})
}
