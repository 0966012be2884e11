package runner

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/workloads"
)

// libCell is one run of a lock library's design: a control run that must be
// valid, or an unsafe cell that must be invalid with a double holder.
type libCell struct {
	lock, nemesis string
	want          checker.Validity
}

// libTest returns the short test of a library cell. Designs with their own
// worker (another language) run it; the others run this test binary as
// `check worker`. The unsafe cells pause a holder for three leases (the
// zk-session-expiry story for the ZooKeeper libraries, with a 50 ms
// critical section so the pause lands inside it).
func libTest(t *testing.T, c libCell) Test {
	tt := quick(t, c.lock, c.nemesis, false)
	d, err := workloads.FindDesign(c.lock)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Worker) > 0 {
		tt.WorkerCmd, tt.WorkerEnv = nil, nil
	}
	if d.Service == "zookeeper" {
		tt.Time, tt.Lease, tt.Think = 12*time.Second, time.Second, 50*time.Millisecond
		tt.NemesisInterval, tt.NemesisDuration = 1500*time.Millisecond, 3*time.Second
	}
	if c.nemesis == "none" {
		// A control run ends once 20 grants are in (patient is only its
		// bound): what it shows is that the library grants and stays valid.
		tt.Time, tt.Until = patient, untilGrants(20)
		return tt
	}
	// A pause run ends at its first double holder, the verdict the cell
	// asserts; the time is only its bound. JVMs may take 10-15 s to
	// connect on a loaded machine: the pauses get time to find a holder.
	tt.StopOnAnomaly = true
	if len(d.Worker) > 0 && d.Worker[0] == "java" {
		tt.Time = 30 * time.Second
	}
	return tt
}

// TestRunLibraries runs every lock library lockcheck ships, with no fault
// (valid) and paused past its lease (invalid: a double holder). The verdict
// is asserted, never a grant count.
func TestRunLibraries(t *testing.T) {
	var cells []libCell
	for _, lock := range []string{"redsync", "redsync-redlock", "redislock", "go-zookeeper-lock", "redis-py-lock", "kazoo-lock", "curator-mutex"} {
		cells = append(cells, libCell{lock, "none", checker.Valid}, libCell{lock, "pause", checker.Invalid})
	}
	for _, c := range cells {
		t.Run(c.lock+"/"+c.nemesis, func(t *testing.T) {
			out, err := Run(context.Background(), libTest(t, c), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			got := kinds(out.Result, false)
			switch {
			case out.Result.Valid != c.want:
				t.Fatalf("verdict %v, anomalies %v; want %v", out.Result.Valid, got, c.want)
			case c.want == checker.Invalid && got["double-holder"] == 0:
				t.Fatalf("invalid without a double holder: %v", got)
			case c.want == checker.Valid && grants(t, out.Dir) == 0:
				t.Fatal("a valid control run with no grant")
			}
			assertNoChildren(t)
		})
	}
}
