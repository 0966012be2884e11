package scenarios

func init() {
	register(Scenario{
		Name: "pgbouncer-transaction-advisory",
		Summary: "PostgreSQL session advisory locks (pg-advisory) through PgBouncer in transaction pooling: each statement runs on " +
			"whichever server session is free, so a lock taken on one session is released on another (which did not hold it) " +
			"and the session left holding it grants it again to the next client's statement (re-entrant), with no fault at all " +
			"(PgBouncer's features page lists session advisory locks as unsupported in transaction pooling; goauthentik/authentik#23876)",
		Args:   []string{"--lock", "pg-advisory", "--service", "pgbouncer-transaction", "--nemesis", "none", "--workers", "5", "--time", "10s"},
		Expect: "invalid: two holders, the story naming the server sessions of the lock and its release (valid through --service pgbouncer-session)",
		Want:   "U", WantFenced: "S",
	})
}
