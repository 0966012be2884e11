package bugs

func init() {
	register(Bug{
		ID:    "prairielearn-4913",
		Order: 25,
		Title: "A row lock rolled back by idle_in_transaction_session_timeout while its job runs",
		Runs: []Run{
			{Report: "[PrairieLearn/PrairieLearn#4913](https://github.com/PrairieLearn/PrairieLearn/issues/4913): \"Cron job named locks can time-out while cron query still runs\"",
				Component: "PostgreSQL 15 (Debian), `pg-for-update`; `idle_in_transaction_session_timeout` 2 s (twice the lease), critical section 3 s",
				Args:      []string{"--lock", "pg-for-update", "--lease", "1s", "--think", "3s", "--workers", "3", "--time", "20s"},
				Invalid:   "10/10", FixedIn: "in PrairieLearn by [#14260](https://github.com/PrairieLearn/PrairieLearn/pull/14260) (merged 2026-02-28): the lock's connection sends keepalive queries, so the server never finds it idle (next row: a timeout longer than the work)"},
			{Report: "the same",
				Component: "the same, with the timeout (10 s) longer than the critical section, which the fix's keepalives amount to",
				Args:      []string{"--lock", "pg-for-update", "--lease", "5s", "--think", "3s", "--workers", "3", "--time", "20s"},
				Invalid:   "0/10 (10 valid)", FixedIn: "PrairieLearn's fix", Fixed: true},
		},
		What: "PrairieLearn guarded its cron jobs with a named lock: a transaction holding `SELECT ... FOR UPDATE` on the lock's row, " +
			"left `idle in transaction` while the job ran on another connection. PostgreSQL's `idle_in_transaction_session_timeout` " +
			"(10 minutes there) ended that session, its transaction rolled back and the row lock went with it, while the job " +
			"went on, and the next cron run took the lock beside it. Here the holder's transaction idles through a 3 s " +
			"critical section against a 2 s timeout (lockcheck sets the server's idle timeouts to twice the lease), with no " +
			"fault at all: the server ends the session, the next worker locks the row, and the first writes when its work is " +
			"done; the story names the session the server ended. invalid 10/10, with `server-released-first` and `wrote-after-lock-lost` reached about ten times in every run (nearly every grant), and valid 10/10 with the 10 s timeout.",
	})
}
