package runner

import (
	"context"
	"io"
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
			for seed := 1; seed <= seeds; seed++ {
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
				out, err := Run(context.Background(), tt, io.Discard)
				if err != nil {
					t.Fatal(err)
				}
				got := out.Result
				if c.want == checker.Valid && got.Valid == checker.Unknown && got.NotExercised != "" && seed < seeds {
					t.Logf("seed %d: not exercised (%s), trying the next seed", seed, got.NotExercised)
					continue
				}
				if c.want == checker.Valid {
					if got.Valid != checker.Valid {
						t.Fatalf("seed %d: verdict %v, anomalies %+v", seed, got.Valid, got.Anomalies)
					}
					if grants(t, out.Dir) == 0 {
						t.Fatalf("seed %d: no grant at all", seed)
					}
					t.Logf("seed %d: valid with %v (fenced)", seed, kinds(got, true))
					break
				}
				if got.Valid == checker.Invalid && kinds(got, false)[c.mustFind] > 0 {
					assertStory(t, got, "double-holder", "its etcd lease 0x")
					break
				}
				t.Logf("seed %d: verdict %v with %v: the fault missed, trying the next seed", seed, got.Valid, kinds(got, false))
				if seed == seeds {
					t.Fatalf("no seed of %d found a %s", seeds, c.mustFind)
				}
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
