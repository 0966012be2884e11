package learn

func init() {
	register(Lesson{
		ID:    "pgbouncer-transaction",
		Order: 13,
		Title: "PgBouncer's transaction pooling and a session lock",
		Setup: "The lock is a PostgreSQL session advisory lock: pg_try_advisory_lock to take it, pg_advisory_unlock to give it back. " +
			"The clients reach PostgreSQL through PgBouncer in transaction pooling mode, as many deployments run it. No fault is injected at all.",
		Question: "Can two clients hold the lock at once?",
		Choices: []string{
			"No: PostgreSQL grants a session advisory lock to one session at a time",
			"Yes: PgBouncer runs each statement on whichever server session is free, so the lock stays behind on a server session that then serves other clients, and PostgreSQL grants it again to that session",
			"No: PgBouncer refuses advisory locks in transaction pooling mode",
		},
		Answer: 1,
		Explanation: "A session advisory lock belongs to the server session that took it, and it is re-entrant there: the same session asking again is granted again. " +
			"In transaction pooling, PgBouncer lends a server session to a client for one transaction (here, one statement) and then to anyone else. " +
			"So a client's pg_advisory_unlock usually runs on another server session, which holds nothing (it returns false), and the lock stays behind " +
			"on the first session; the next client whose statement lands on that session is granted the lock while its holder still works. " +
			"The stories name the server sessions of each grant and release.\n\n" +
			"PgBouncer's features page says so: session-level advisory locks are not supported in transaction pooling. " +
			"The cure is session pooling (each client keeps its server session until it disconnects), or a lock that lives in one transaction " +
			"(pg_advisory_xact_lock inside BEGIN ... COMMIT), which transaction pooling keeps on one server session.",
		Sources: []Source{srcPgbFeat, srcPgAdvis, srcAuthentik},
		Cell:    Cell{Args: []string{"--scenario", "pgbouncer-transaction-advisory", "--workers", "3", "--time", "8s", "--think", "300ms"}, Seed: 1},
		Fix: Fix{Cell: Cell{Args: []string{"--scenario", "pgbouncer-transaction-advisory", "--service", "pgbouncer-session", "--workers", "3", "--time", "8s", "--think", "300ms"}, Seed: 1},
			Want: "valid", Why: "The same lock through PgBouncer in session pooling: a client keeps its server session, so its unlock runs where its lock is."},
		Want:  "invalid",
		Shows: "double-holder",
	})
}
