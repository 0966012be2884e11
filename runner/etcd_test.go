package runner

import (
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// TestRunEtcdDesigns runs etcd-mutex with a pause longer than the session
// TTL (invalid: a double holder whose story names the expired lease), and
// etcd-mutex-guarded under the same pause (valid: etcd's guarded
// transaction refuses the stale access). Both designs' runs with no fault
// are TestRunNoNemesisIsValid's. A fault that missed gets the next seed, up
// to three; an error is never accepted.
func TestRunEtcdDesigns(t *testing.T) {
	cases := []struct {
		lock, nemesis string
		want          checker.Validity
		mustFind      string
	}{
		{"etcd-mutex", "pause", checker.Invalid, "double-holder"},
		{"etcd-mutex-guarded", "pause", checker.Valid, ""},
	}
	for _, c := range cases {
		t.Run(c.lock+"/"+c.nemesis, func(t *testing.T) {
			needService(t, c.lock)
			seeds := 1
			if c.nemesis != "none" {
				seeds = 3 // a fault that missed (not exercised) gets the next seed
			}
			got := seekVerdict(t, seeds, c.want, c.mustFind, func(seed int) Test {
				tt := quick(t, c.lock, c.nemesis, false)
				// The etcd service's shortest TTL is 2 s: paused for 5.
				tt.Seed, tt.Lease, tt.Think = uint64(seed), 2*time.Second, 100*time.Millisecond
				tt.NemesisDuration, tt.NemesisInterval, tt.Time = 5*time.Second, 4*time.Second, 14*time.Second
				if c.nemesis == "none" {
					tt.Time = 3 * time.Second
				}
				// An unsafe cell ends at its first double holder, what it
				// asserts; a safe one runs its whole time.
				tt.StopOnAnomaly = c.want == checker.Invalid
				return tt
			})
			if c.want == checker.Invalid {
				assertStory(t, got, "double-holder", "its etcd lease 0x")
			} else {
				t.Logf("valid with %v (fenced)", kinds(got, true))
			}
			assertNoChildren(t)
		})
	}
}

// TestRunEtcdInterrupted interrupts an etcd run once it has granted a lock
// and checks that no member, proxy user or worker is left.
func TestRunEtcdInterrupted(t *testing.T) {
	needService(t, "etcd-mutex")
	tt := quick(t, "etcd-mutex", "kill", false)
	tt.Lease, tt.Time = 2*time.Second, time.Minute
	runInterruptedAtGrant(t, tt)
	assertNoChildren(t)
}
