package runner

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// TestRunClocks runs the clock nemeses end to end: a server clock jump
// breaks SET NX PX (M3) but not the timestamp lock, whose expiry Redis never
// judges; a client clock skew, or a client clock that runs fast, breaks the
// timestamp lock (M5).
func TestRunClocks(t *testing.T) {
	for _, tc := range []struct {
		lock, nem string
		want      checker.Validity
		story     string
	}{
		{"redis-set-px", "clock", checker.Invalid, "wall clock jumped"},
		{"redis-setnx-getset", "clock-client", checker.Invalid, "skewed"},
		{"redis-setnx-getset", "clock-client-rate", checker.Invalid, "skewed"},
		{"redis-setnx-getset", "clock", checker.Valid, ""},
	} {
		t.Run(tc.lock+"/"+tc.nem, func(t *testing.T) {
			tt := quick(t, tc.lock, tc.nem, false)
			tt.Time, tt.Until = patient, untilFaultEnded
			if tc.want == checker.Invalid {
				// Wait for the double holder the fault causes.
				tt.Until = untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder", tc.story)
			} else {
				// The lock must survive the clock jump; its lease must not
				// run out merely because a worker waited for a core.
				tt.Lease = 2 * time.Second
			}
			out, err := Run(context.Background(), tt, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if out.Result.Valid != tc.want {
				t.Fatalf("verdict %v, want %v; anomalies %+v", out.Result.Valid, tc.want, out.Result.Anomalies)
			}
			if tc.story != "" {
				found := false
				for _, a := range out.Result.Anomalies {
					found = found || (a.Kind == "double-holder" && strings.Contains(a.Explanation, tc.story))
				}
				if !found {
					t.Errorf("no double-holder story says %q: %+v", tc.story, out.Result.Anomalies)
				}
			}
			if strings.HasPrefix(tc.nem, "clock-client") {
				// The skew goes to the workers that did not hold the lock
				// at the time: some, not a given one.
				if files, _ := filepath.Glob(filepath.Join(out.Dir, "clocks", "w*")); len(files) == 0 {
					t.Error("no worker clock file was written")
				}
			}
		})
	}
}
