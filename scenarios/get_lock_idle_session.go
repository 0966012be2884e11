package scenarios

func init() {
	register(Scenario{
		Name: "get-lock-idle-session",
		Summary: "a MariaDB GET_LOCK holder runs a critical section (3 s) longer than the server's wait_timeout (2 s, from the 1 s " +
			"lease), with no fault at all: the lock's session sends nothing while its holder works, MariaDB ends the idle session " +
			"and releases the named lock with it, another worker's GET_LOCK succeeds, and the first writes when its work is done " +
			"(Combodo/iTop N°3968, fixed by PR #209: iTop's mutex connection sees no command once locked)",
		Args:   []string{"--lock", "mysql-get-lock", "--nemesis", "none", "--lease", "1s", "--think", "3s", "--workers", "3", "--time", "20s"},
		Expect: "invalid: double holders, each story naming the session MariaDB ended and when the holder learned of it (valid with --lease 5s: a wait_timeout of 10 s outlasts the critical section, iTop's fix; valid with --fencing: the sequence value is the token)",
		Want:   "U", WantFenced: "S",
	})
}
