package runner

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

// TestRunReentrantWatchdogNoFault holds redis-reentrant locks for longer than
// their lease: without the watchdog's renewals every critical section would
// outlive its lock and the run would find double holders. With them and no
// fault it is valid, every grant entered the lock twice, and renewals were
// made.
func TestRunReentrantWatchdogNoFault(t *testing.T) {
	tt := quick(t, "redis-reentrant", "none", false)
	// Each critical section outlives the lease by half; the watchdog renews
	// every lease/3. The lease is long enough that a watchdog kept from a
	// core by a loaded machine still renews in time.
	tt.Lease, tt.Think = 2*time.Second, 3*time.Second
	tt.Time, tt.Until = patient, untilGrants(5)
	_, h := runValid(t, tt)
	grants, renewed := 0, 0
	for _, op := range h {
		switch {
		case op.F == history.FAcquire && op.Type == history.OK:
			grants++
			if op.Value == nil || op.Value.Ext().Detail != "depth 2" {
				t.Errorf("grant without depth 2: %s", op)
			}
		case op.F == history.FRelease && op.Type == history.OK:
			if op.Value == nil || !strings.HasPrefix(op.Value.Ext().Detail, "released from depth 2; ") {
				t.Errorf("release not from depth 2: %s", op)
			} else if !strings.HasSuffix(op.Value.Ext().Detail, " 0 times") {
				renewed++
			}
		}
	}
	if grants < 5 || renewed < grants/2 {
		t.Errorf("%d grants, %d of them renewed: want at least 5, most renewed", grants, renewed)
	}
	assertNoChildren(t)
}

// TestRunSetNXExpireCrash is the setnx-expire-crash scenario, short: the
// crash nemesis kills a worker stopped between SETNX and PEXPIRE, the key
// keeps no TTL, --stop-on-anomaly stops the workload once the lock has been
// stuck for the bound, and the liveness checker finds the stuck lock and
// tells why.
func TestRunSetNXExpireCrash(t *testing.T) {
	tt := quick(t, "redis-setnx-expire", "crash", false)
	tt.Failpoint, tt.StuckBound = workloads.FailpointSetNXExpire, 1500*time.Millisecond
	// A lease far longer than a loaded machine's scheduling delays: with
	// quick's 300 ms, a worker held off the CPU between its grant and its
	// write (make test-under-load) made a real double holder first, and
	// --stop-on-anomaly stopped there, before the stuck lock this test is
	// about. The stuck key has no TTL, so the lease does not change it.
	tt.Lease = 3 * time.Second
	// The first crash comes 1–3 s in, after some grants (a crash before any
	// grant would leave a no-grants run instead).
	tt.NemesisInterval, tt.NemesisDuration = 2*time.Second, 200*time.Millisecond
	tt.Time, tt.StopOnAnomaly = patient, true
	out, err := Run(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Stopped {
		t.Errorf("the stuck lock did not stop the workload before its %v", tt.Time)
	}
	var story string
	for _, a := range out.Result.Anomalies {
		if a.Kind == "stuck-lock" {
			story = a.Explanation
		}
	}
	if out.Result.Valid != checker.Invalid || story == "" {
		t.Fatalf("verdict %v, anomalies %v: want invalid with a stuck lock", out.Result.Valid, kinds(out.Result, false))
	}
	for _, want := range []string{"killed by the crash nemesis", "failpoint setnx-expire", "has no TTL"} {
		if !strings.Contains(story, want) {
			t.Errorf("stuck-lock story lacks %q: %s", want, story)
		}
	}
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// The killed worker's acquire is info and its process is retired.
	for _, f := range h.Faults() {
		if f.F != history.FKillWorker || len(f.Targets) != 1 {
			continue
		}
		p, acqInfo, retired := f.Targets[0], false, false
		for _, op := range h[f.Ops[0]:] {
			if op.Process == p && op.Type == history.Info {
				acqInfo = acqInfo || op.F == history.FAcquire
				retired = retired || op.F == history.FCrash
			}
		}
		if !acqInfo || !retired {
			t.Errorf("killed process %d: acquire info %v, retired %v", p, acqInfo, retired)
		}
		break
	}
	assertNoChildren(t)
}

// TestValidateFailpoint: an unknown failpoint, or one in another design's
// client, is bad input (one line, before any server starts).
func TestValidateFailpoint(t *testing.T) {
	for _, tt := range []struct{ lock, fp, want string }{
		{"redis-setnx-expire", "setnx-expire", ""},
		{"redis-setnx-expire", "nope", `unknown failpoint "nope"`},
		{"redis-set-px", "setnx-expire", "is in the redis-setnx-expire client"},
	} {
		test := Test{Lock: tt.lock, Failpoint: tt.fp}
		test.Defaults()
		err := test.Validate()
		if (err == nil) != (tt.want == "") || (err != nil && (!strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n"))) {
			t.Errorf("%s with --failpoint %s: %v, want %q", tt.lock, tt.fp, err, tt.want)
		}
	}
}
