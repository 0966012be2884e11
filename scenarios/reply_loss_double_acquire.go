package scenarios

func init() {
	register(Scenario{
		Name: "reply-loss-double-acquire",
		Summary: "the replies to a redsync holder vanish (its commands still reach Redis and apply): its release applies " +
			"unheard, and every later acquire from its worker slot runs redsync's retries under the fault, each try's " +
			"SET NX possibly applied unheard; redsync unlocks its value after each failed try, so no try's key outlives it " +
			"and no second holder is granted (a retried non-idempotent request: Jepsen's jetcd 0.8.2 analysis)",
		Args: []string{"--lock", "redsync", "--nemesis", "reply-loss@grant+5ms:3s*3", "--lease", "1s",
			"--workers", "5", "--time", "20s"},
		Expect: "valid: redsync's retried acquire is idempotent by its value and unlocks after each failed try, and an acquire left in doubt retires its process",
		Want:   "S",
	})
}
