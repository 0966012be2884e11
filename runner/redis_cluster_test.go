package runner

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/scenarios"
)

// TestRunRedisCluster runs redis-cluster on the six-node Redis Cluster with
// no fault (valid, with grants) and with the flags of the
// redis-cluster-failover-lock-loss scenario (invalid: a double holder whose
// story names the replica's takeover), stopping at the first anomaly. An
// error is never accepted, and no process may be left.
func TestRunRedisCluster(t *testing.T) {
	needService(t, "redis-cluster")
	if _, err := scenarios.Find("redis-cluster-failover-lock-loss"); err != nil {
		t.Fatal(err)
	}
	t.Run("none", func(t *testing.T) {
		out, _ := runValid(t, control(t, "redis-cluster", nil))
		if grants(t, out.Dir) == 0 {
			t.Fatal("no grants")
		}
		assertNoChildren(t)
	})
	t.Run("failover", func(t *testing.T) {
		// The scenario's flags, stopping at the first double holder.
		tt := quick(t, "redis-cluster", "failover", false)
		tt.Workers, tt.Lease, tt.Time = 10, time.Second, 30*time.Second
		tt.NemesisInterval, tt.NemesisDuration, tt.OpTimeout = 3*time.Second, 6*time.Second, 2*time.Second
		tt.StopOnAnomaly = true
		out, err := Run(context.Background(), tt, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if out.Result.Valid != checker.Invalid || kinds(out.Result, false)["double-holder"] == 0 {
			t.Fatalf("verdict %v with %v, want invalid with a double holder", out.Result.Valid, kinds(out.Result, false))
		}
		for _, a := range out.Result.Anomalies {
			if a.Kind == "double-holder" && !strings.Contains(a.Explanation, "took over its slots") {
				t.Errorf("the story does not name the takeover: %s", a.Explanation)
			}
		}
		assertNoChildren(t)
	})
}
