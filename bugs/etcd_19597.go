package bugs

func init() {
	register(Bug{
		ID:    "etcd-19597",
		Order: 20,
		Title: "etcd: a waiter whose session expired keeps waiting until every holder before it is done",
		Runs: []Run{
			{Report: "[etcd-io/etcd#19597](https://github.com/etcd-io/etcd/issues/19597): `Mutex.Lock` does not return when its own session expires while it waits (open; PR [#22387](https://github.com/etcd-io/etcd/pull/22387))",
				Component: "etcd 3.4.23 (Debian), Go client 3.5.35, `etcd-mutex`",
				Args:      waiterExpiresInLine(),
				Invalid:   "0/10 (10 valid)", FixedIn: "open: no release stops the wait early (PR #22387 watches the waiter's own key too); not a safety bug: the late answer is `ErrSessionExpired`, never a grant"},
		},
		What: "The same run as `etcd-11429`, read for the other report: `Mutex.Lock` waits for the keys before its own to be " +
			"deleted and only then asks whether its own key still exists (a TODO in its code says so). A client paused past its " +
			"session's TTL while it waits in line learns on resuming that its lease expired (its own keepalive says so, and " +
			"lockcheck records the event), but its `Lock` goes on waiting for the holders before it. In the ten runs, 23 such waits ended before the run did; each `Lock` returned `ErrSessionExpired` 7.7 to 8.3 s (median 7.8 s) after the client's own keepalive had reported its lease expired: when the two locks before it were released. Nothing " +
			"is held twice, so the verdict is valid: the cost is a worker stuck in a wait that can only fail, for as long as " +
			"the locks before it are held (here two critical sections of 6 s).",
	})
}
