package runner

import (
	"context"
	"io"
	"testing"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/internal/servicetest"
)

// TestRunNATS: with no fault, nats-kv on one server is valid, and
// nats-kv-r3 on a three-server cluster of Debian's nats-server 2.9.10 is
// not: two Creates of one key both succeed (nats-server#4320), so the run
// waits for that double holder.
func TestRunNATS(t *testing.T) {
	servicetest.Need(t, "nats-kv")
	t.Run("nats-kv", func(t *testing.T) {
		runValid(t, control(t, "nats-kv", nil))
		assertNoChildren(t)
	})
	t.Run("nats-kv-r3", func(t *testing.T) {
		tt := quick(t, "nats-kv-r3", "none", false)
		tt.Time, tt.Lease = patient, safeLease
		// The worker is lockcheck's own (this binary, as the bundled
		// worker is started), so it has the bundled worker's time to
		// answer open: creating a three-replica bucket on a loaded
		// machine took more than the 10 s a --worker-cmd worker gets.
		tt.WorkerCmd = nil
		tt.Until = untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder")
		out, err := Run(context.Background(), tt, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(out.Result, false); out.Result.Valid != checker.Invalid || got["double-holder"] == 0 {
			t.Fatalf("verdict %v, anomalies %v: want the double holder of nats-server#4320", out.Result.Valid, got)
		}
		assertNoChildren(t)
	})
}
