package scenarios

import (
	"fmt"
	"strings"
)

func init() {
	register(Scenario{
		Name: "etcd-unlock-retry",
		Summary: "the replies to one client's etcd Mutex.Unlock are lost for 100 ms (its delete commits), at its 1st, 9th, 17th, 25th and 33rd release (and so for the next client of its worker slot, when the first is retired): the application retries the Unlock in the background about three seconds later, by then often holding the lock " +
			"again on the same session, whose key has the same name; the retry deletes the newer lock and the other client is " +
			"granted it while the first still works (etcd-io/etcd#22082, open)",
		Args: []string{"--lock", "etcd-mutex-unlock", "--nemesis", unlockRetryFaults(5), "--think", "300ms",
			"--workers", "2", "--time", "40s"},
		Expect: "invalid (valid with --fencing: the create revision of the newer lock is the token; etcd-mutex, whose release " +
			"deletes the key only while its create revision is the grant's, never deletes a newer lock)",
		Want: "U", WantFenced: "S",
	})
}

// unlockRetryFaults is n reply losses of 100 ms at the releases of the
// first worker slot's process, eight of its releases apart: its background
// retry, about three seconds after each, lands while it holds the lock again about
// half the time, and each fault is over before the next retry (a fault on
// every release would keep the retries, and the other client's releases,
// failing). Removing the toxic breaks the gRPC connection (the bytes it
// dropped were mid-stream), so the acquire right after a lost Unlock
// often fails too and retires the process: each of the slot's next
// processes (2, 4, 6, 8 with two workers) gets n more.
func unlockRetryFaults(n int) string {
	var faults []string
	for _, p := range []int{0, 2, 4, 6, 8} {
		for i := range n {
			faults = append(faults, fmt.Sprintf("reply-loss@release/p%d#%d:100ms", p, 1+8*i))
		}
	}
	return strings.Join(faults, ",")
}
