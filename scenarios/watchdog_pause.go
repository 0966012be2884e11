package scenarios

func init() {
	register(Scenario{
		Name: "watchdog-pause",
		Summary: "a Redisson-style watchdog lock holder is paused (SIGSTOP) in its critical section for 3 leases: " +
			"the renewal goroutine is frozen with it, the lease runs out, another worker takes the lock, and the first " +
			"resumes, writes, and only then learns its renewal was refused (mechanisms M1, M7)",
		Args: []string{"--lock", "redis-watchdog", "--nemesis", "pause", "--lease", "1s", "--think", "200ms",
			"--nemesis-duration", "3s", "--nemesis-interval", "4s", "--workers", "5", "--time", "20s"},
		Expect: "invalid (valid with --fencing)",
		Want:   "U", WantFenced: "S",
	})
}
