package bugs

func init() {
	register(Bug{
		ID:    "itop-3968",
		Order: 15,
		Title: "A GET_LOCK released by wait_timeout while its holder works",
		Runs: []Run{
			{Report: "[Combodo/iTop#209](https://github.com/Combodo/iTop/pull/209) (iTop N°3968: \"mutex being silently released after wait_timeout seconds\")",
				Component: "MariaDB 10.11.19 (Debian), `mysql-get-lock`",
				Args:      []string{"--scenario", "get-lock-idle-session"},
				Invalid:   "10/10", FixedIn: "in iTop by PR #209 (merged), which sets the mutex connection's wait_timeout to at least a day; the server does what its documentation says"},
			{Report: "the same",
				Component: "the same, with a wait_timeout (10 s) longer than the critical section, as PR #209 sets it",
				Args:      []string{"--scenario", "get-lock-idle-session", "--lease", "5s"},
				Invalid:   "0/10 (10 valid)", FixedIn: "iTop's fix", Fixed: true},
		},
		What: "A named lock (`GET_LOCK`) lives as long as the session that took it, and MariaDB (as MySQL) ends a session " +
			"that sends nothing for `wait_timeout` seconds. iTop's mutex took its lock on a connection of its own and sent " +
			"nothing more on it while the work went on, so a job that ran longer than `wait_timeout` lost its lock halfway, " +
			"silently. Here the holder's critical section (3 s) outlasts a `wait_timeout` of 2 s (lockcheck sets it to twice " +
			"the lease), with no fault at all: MariaDB ends the idle session, another worker's `GET_LOCK` succeeds, and the " +
			"first writes when its work is done. The story names the session the server ended and when the holder learned " +
			"of it (its next statement found a new session). With a `wait_timeout` longer than the critical section, the fix, " +
			"every run is valid; with `--fencing` the stale writes are refused.",
	})
}
