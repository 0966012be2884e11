// Package nemesis injects faults into a running test: pause (SIGSTOP of the
// lock holder's worker process), partition (the holder's links to the lock
// service drop everything), kill (SIGKILL and restart of a lock node),
// crash (SIGKILL of a worker, preferably one stopped at a failpoint), clock
// (a lock server's wall clock jumps, through the clock shim),
// clock-client (workers' client clocks run ahead) and session-kill (the
// database ends a lock holder's session).
// Each nemesis applies one fault per Invoke and undoes it with the matching
// end op; Heal undoes everything and is idempotent. Schedule runs them at
// seeded random times.
//
// nemesis may import history, clusters and the internal helpers (lookups,
// suggest); it must not import checker, workloads or runner. What it needs
// from the controller (who holds a lock, which process that is) comes
// through the Env interface.
package nemesis
