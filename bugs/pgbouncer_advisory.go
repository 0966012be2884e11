package bugs

func init() {
	register(Bug{
		ID:    "pgbouncer-advisory",
		Order: 11,
		Title: "Session advisory locks through transaction pooling",
		Runs: []Run{
			{Report: "Session advisory locks through PgBouncer's transaction pooling: the unlock runs on another server session, and the lock is granted twice ([PgBouncer: features, \"session-level advisory locks\" not supported in transaction mode](https://www.pgbouncer.org/features.html), [goauthentik/authentik#23876](https://github.com/goauthentik/authentik/issues/23876), [pgbouncer/pgbouncer#617](https://github.com/pgbouncer/pgbouncer/issues/617))",
				Component: "PgBouncer 1.18.0 (Debian) in front of PostgreSQL 15, `pg-advisory`",
				Args:      []string{"--scenario", "pgbouncer-transaction-advisory"},
				Invalid:   "10/10", FixedIn: "not a bug to PgBouncer (documented); use session pooling (`--service pgbouncer-session`: valid 3/3) or `pg-advisory-xact` (valid through transaction pooling)"},
		},
		What: "PgBouncer in transaction mode hands each statement to whichever server session is free, so " +
			"`pg_advisory_unlock` runs on another session than the lock (which then stays behind, held for nobody), and a " +
			"later client whose statement lands on the first session is granted the lock again: a session lock is " +
			"re-entrant within its session. The worker records the server session (`pg_backend_pid()`) of each lock and " +
			"release, and the story names both. Valid through session pooling, and with `pg-advisory-xact` (a transaction " +
			"lock) through transaction pooling.",
	})
}
