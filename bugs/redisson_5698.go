package bugs

func init() {
	register(Bug{
		ID:    "redisson-5698",
		Order: 6,
		Title: "A renewal watchdog that does not run",
		Runs: []Run{
			{Report: "[redisson/redisson#5698](https://github.com/redisson/redisson/issues/5698), [#2665](https://github.com/redisson/redisson/issues/2665)",
				Component: "a Redisson-style watchdog lock, redis-server 7.0.15",
				Args:      []string{"--scenario", "watchdog-cpu-starvation"},
				Invalid:   "9/10", FixedIn: "by design (a starved watchdog renews late)"},
			{Report: "the same (a stop-the-world pause)",
				Component: "the same",
				Args:      []string{"--scenario", "watchdog-pause"},
				Invalid:   "10/10", FixedIn: "by design"},
		},
		What: "Redisson's watchdog renews the lease from a timer thread; reports #5698 and #2665 saw the lock expire under a " +
			"holder whose machine was at 100 % CPU or whose JVM stalled. Here the holder's worker is held to 1 % of a CPU " +
			"(6) or stopped (6b) for longer than the lease.",
	})
}
