package bugs

func init() {
	register(Bug{
		ID:    "vault-11319",
		Order: 29,
		Title: "Vault on MariaDB: two active nodes when the GET_LOCK session ends",
		Runs: []Run{
			{Report: "[hashicorp/vault#11319](https://github.com/hashicorp/vault/issues/11319) (a MariaDB restart) and [#18582](https://github.com/hashicorp/vault/issues/18582) (`wait_timeout`): the lock's session ends, a standby takes the lock, and the old active node never steps down (PR [#20551](https://github.com/hashicorp/vault/pull/20551), open)",
				Component: "MariaDB 10.11 (Debian), `mysql-get-lock`",
				Args:      []string{"--lock", "mysql-get-lock", "--nemesis", "session-kill", "--time", "15s"},
				Invalid:   "10/10", FixedIn: "open: PR #20551 would check the lock on the session that holds it"},
		},
		What: "Vault's MySQL HA backend takes `GET_LOCK` on one pooled connection and checks every 5 s with `IS_USED_LOCK` " +
			"on whichever connection the pool gives it; when the lock's session has ended, the check answers NULL, which " +
			"Vault does not take as a loss, so the old active node goes on while a standby holds the lock. `mysql-get-lock` " +
			"asks nothing before its accesses either, which is what that check amounts to. The run ends the holder's " +
			"session with `KILL CONNECTION` while it works (`session-kill`, the end a restart or `wait_timeout` brings): " +
			"invalid 10/10. `--fencing` refuses the stale writes.",
	})
}
