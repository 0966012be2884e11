package scenarios

func init() {
	register(Scenario{
		Name: "watchdog-cpu-starvation",
		Summary: "a Redisson-style watchdog lock holder is starved of CPU 5 ms after its grant, in its critical section (its worker held to 1% of one CPU, " +
			"two busy loops in its cgroup, for 3 s): its goroutines run once a second, so the watchdog's renewals come " +
			"late, the 500 ms lease runs out between them, another worker takes the lock, and the starved holder writes " +
			"on its next turn (redisson/redisson#5698, #2665; mechanisms M1, M7)",
		Args: []string{"--lock", "redis-watchdog", "--nemesis", "starve@grant+5ms:3s*3", "--lease", "500ms", "--think", "200ms",
			"--workers", "5", "--time", "20s"},
		Expect: "invalid (valid with --fencing)",
		Want:   "U", WantFenced: "S",
	})
}
