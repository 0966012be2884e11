package runner

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
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

// TestRunEtcdUnlockRetry reproduces etcd-io/etcd#22082 on real etcd: the
// replies to a holder's Mutex.Unlock are lost (the delete commits), the
// application retries the Unlock a second later, by then holding the lock
// again on the same session, and the retry deletes the newer lock: the
// other client is granted it while the first still works. The story
// names the background Unlock.
func TestRunEtcdUnlockRetry(t *testing.T) {
	needService(t, "etcd-mutex-unlock")
	// The etcd-unlock-retry scenario's faults, for longer: the releases of
	// worker slot 0's processes, eight apart (a process whose next
	// acquire fails on the broken connection is retired: its successor
	// takes over). Each background retry lands while its client holds
	// the lock again only about half the time, so the test offers many
	// (twelve a process, until the first double holder ends the run):
	// with three, one CI run in about eight found none.
	var faults []string
	for p := 0; p < 20; p += 2 {
		for i := range 12 {
			faults = append(faults, fmt.Sprintf("reply-loss@release/p%d#%d:100ms", p, 1+8*i))
		}
	}
	tt := quick(t, "etcd-mutex-unlock", strings.Join(faults, ","), false)
	tt.Lease, tt.Think, tt.Workers = 2*time.Second, 300*time.Millisecond, 2
	tt.Time, tt.Until = patient, untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder", "background Unlock of")
	out, err := Run(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Valid != checker.Invalid || kinds(out.Result, false)["double-holder"] == 0 {
		h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
		unheard, retried := 0, 0
		for _, op := range h {
			if op.F == history.FRelease && op.Type == history.OK && op.Value.Ext().Unheard {
				unheard++
			}
			if op.F == history.FEvent && strings.Contains(op.Value.Ext().Detail, "background Unlock") {
				retried++
			}
		}
		t.Fatalf("verdict %v with %v, want a double holder (%d releases unheard, %d retried in the background; %v)",
			out.Result.Valid, kinds(out.Result, false), unheard, retried, err)
	}
	assertStory(t, out.Result, "double-holder", "background Unlock of")
	assertNoChildren(t)
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
