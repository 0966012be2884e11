package scenarios

// The crash is fired by the second report of a worker stopped at the
// failpoint (crash@failpoint#2; the first one's grant shows the workload
// got going) and kills that worker: the lock client's own event, not a
// random time, chooses the moment. The stuck-lock bound is two leases: a key with its
// TTL is free at most one lease after its holder dies.
func init() {
	register(Scenario{
		Name: "setnx-expire-crash",
		Summary: "a redis-setnx-expire worker is killed (crash nemesis) while stopped at the setnx-expire failpoint, " +
			"after SETNX took the key and before PEXPIRE gave it a TTL: the key never expires, no live process holds it, " +
			"and every later acquire fails (mechanism M6)",
		Args: []string{"--lock", "redis-setnx-expire", "--nemesis", "crash@failpoint#2:500ms", "--failpoint", "setnx-expire",
			"--lease", "1s", "--stuck-bound", "2s", "--workers", "5", "--time", "15s"},
		Expect: "invalid: a stuck-lock anomaly (liveness) naming the crash at the failpoint and the key without TTL",
		// Fencing guards the resource, not the lock: the key still never
		// expires.
		Want: "L", WantFenced: "L",
	})
}
