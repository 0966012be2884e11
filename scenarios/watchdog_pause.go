package scenarios

func init() {
	register(Scenario{
		Name: "watchdog-pause",
		Summary: "a Redisson-style watchdog lock holder is paused (SIGSTOP) 5 ms after its grant, in its critical section, for 3 leases: " +
			"the renewal goroutine is frozen with it, the lease runs out, another worker takes the lock, and the first " +
			"resumes, writes, and only then learns its renewal was refused (mechanisms M1, M7)",
		Args: []string{"--lock", "redis-watchdog", "--nemesis", "pause@grant+5ms:3xlease*3", "--lease", "1s", "--think", "200ms",
			"--workers", "5", "--time", "20s"},
		Expect: "invalid (valid with --fencing)",
		Want:   "U", WantFenced: "S",
	})
}
