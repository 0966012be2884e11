package bugs

func init() {
	register(Bug{
		ID:    "chainlink-5632",
		Order: 27,
		Title: "A PostgreSQL advisory lock let go when the server closes its connection, while its holder runs on",
		Runs: []Run{
			{Report: "[smartcontractkit/chainlink#5632](https://github.com/smartcontractkit/chainlink/pull/5632): \"if the remote conn is closed the advisory lock will be released but the application will keep on running. For this reason we recommend using the lease lock\"",
				Component: "PostgreSQL 15 (Debian), `pg-advisory` (a session advisory lock)",
				Args:      []string{"--lock", "pg-advisory", "--nemesis", "session-kill", "--time", "15s"},
				Invalid:   "10/10", FixedIn: "by design; Chainlink moved to a lease lock (a row with an expiry on the database's clock: next row)"},
			{Report: "the same",
				Component: "a lease row on the database's clock (`pg-unique-row`), the lock Chainlink recommends",
				Args:      []string{"--lock", "pg-unique-row", "--nemesis", "session-kill", "--time", "15s"},
				Invalid:   "0/10 (10 valid)", FixedIn: "the lease lock", Fixed: true},
		},
		What: "A session advisory lock lives as long as the database session: when the server closes the connection (a " +
			"restart, a failover, an idle or keepalive timeout, an administrator's `pg_terminate_backend`), the lock is " +
			"free at once, and nothing tells the application, which learns only when it next uses that connection. The run " +
			"ends the holder's session with `pg_terminate_backend` while it works (`session-kill`): the next worker is " +
			"granted the lock and both write: invalid 10/10. A lease row survives the session: the holder's row stays until its " +
			"expiry on the database's clock, so ending the session frees nothing early: valid 10/10.",
	})
}
