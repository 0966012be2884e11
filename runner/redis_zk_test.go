package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// TestRunRedisZK runs the seed's combined Redis + ZooKeeper lock (redis-zk,
// on a standalone ZooKeeper server, which starts fastest) with no fault
// (valid, with grants, every part's logs in the run directory) and under
// pause (invalid: a double holder whose story says what became of each
// half of the stopped holder's lock). The pause run stops at its first
// anomaly; a pause that missed every holder gets the next seed.
func TestRunRedisZK(t *testing.T) {
	needService(t, "redis-zk")
	t.Run("none", func(t *testing.T) {
		tt := control(t, "redis-zk", nil)
		tt.Nodes = 1
		out, _ := runValid(t, tt)
		if n := grants(t, out.Dir); n < 20 {
			t.Errorf("only %d grants", n)
		}
		for _, f := range []string{"nodes/lock0.log", "nodes/storage.log", "nodes/zookeeper/zk1.log"} {
			if _, err := os.Stat(filepath.Join(out.Dir, f)); err != nil {
				t.Errorf("run dir lacks %s: %v", f, err)
			}
		}
		assertNoChildren(t)
	})
	t.Run("pause", func(t *testing.T) {
		const seeds = 3
		for seed := 1; seed <= seeds; seed++ {
			tt := quick(t, "redis-zk", "pause", false)
			tt.Seed, tt.Nodes = uint64(seed), 1
			// A lease ZooKeeper accepts as a session timeout (at least
			// five 100 ms ticks), so both halves run out together.
			tt.Lease, tt.NemesisDuration = time.Second, 2500*time.Millisecond
			tt.Time, tt.StopOnAnomaly = 15*time.Second, true
			out, err := Run(context.Background(), tt, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			assertNoChildren(t)
			res := out.Result
			if res.Valid == checker.Invalid && kinds(res, false)["double-holder"] > 0 {
				assertHalvesStory(t, res)
				return
			}
			t.Logf("seed %d: verdict %v with %v (%s): the pause missed, trying the next seed", seed, res.Valid, kinds(res, false), res.NotExercised)
		}
		t.Fatalf("no seed of %d found a double holder", seeds)
	})
}

// assertHalvesStory checks that a double holder's story says what became of
// both halves of the combined lock.
func assertHalvesStory(t *testing.T, res checker.Result) {
	t.Helper()
	var all []string
	for _, a := range res.Anomalies {
		if a.Kind != "double-holder" {
			continue
		}
		if strings.Contains(a.Explanation, "held both halves of the combined lock") &&
			strings.Contains(a.Explanation, "its Redis key expired by") &&
			strings.Contains(a.Explanation, "its ZooKeeper session") {
			return
		}
		all = append(all, a.Explanation)
	}
	t.Errorf("no double-holder story says what became of each half: %s", strings.Join(all, " | "))
}
