package runner

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
)

// TestExerciseRuleForEveryNemesis: every nemesis kind has an exercise rule,
// or declares the shape it is judged by (history.FaultOps.Exercise), so
// none of its runs is "not exercised" for want of one.
func TestExerciseRuleForEveryNemesis(t *testing.T) {
	for _, k := range nemesis.Kinds() {
		if !checker.HasExerciseRule(k.Name) && k.Ops.Exercise == "" {
			t.Errorf("nemesis %s has no exercise rule and declares no exercise shape (see docs/extending.md)", k.Name)
		}
	}
}

// exerciseTest is a short test of lock under nem whose workers are this
// test binary (TestMain serves the worker protocol under
// LOCKCHECK_TEST_WORKER=1).
func exerciseTest(t *testing.T, lock, nem string) Test {
	return Test{Lock: lock, Nemesis: nem, Workers: 5, Seed: 1,
		Time: 6 * time.Second, Lease: 300 * time.Millisecond, Think: 10 * time.Millisecond,
		NemesisInterval: 1500 * time.Millisecond, NemesisDuration: 900 * time.Millisecond, Store: t.TempDir(),
		WorkerCmd: []string{os.Args[0]}, WorkerEnv: []string{"LOCKCHECK_TEST_WORKER=1"}, ownWorker: true, Quiet: true}
}

// TestRunNotExercised: pauses much shorter than the lease cannot make a
// second holder, so the run is not exercised: unknown, with the reason, and
// never valid. Every pause that took effect says what it hit.
func TestRunNotExercised(t *testing.T) {
	tt := exerciseTest(t, "redis-set-px", "pause")
	tt.Lease, tt.NemesisDuration, tt.Time = time.Second, 150*time.Millisecond, 5*time.Second
	out, err := Run(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Unknown; invalid only if a machine so loaded that a holder outlived
	// its lease by itself made a double holder: never valid.
	if out.Result.Valid == checker.Valid || out.Result.NotExercised == "" {
		t.Fatalf("verdict %v, not exercised %q; want unknown, not exercised\n%+v", out.Result.Valid, out.Result.NotExercised, out.Result.Anomalies)
	}
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	faults := h.Faults()
	if len(faults) > 0 && !strings.HasPrefix(out.Result.NotExercised, "no pause lasted longer than the 1 s lease") {
		t.Errorf("not exercised %q: want it to name the pauses shorter than the lease", out.Result.NotExercised)
	}
	for _, f := range faults {
		hit := history.HitOf(&h[f.Ops[0]])
		if hit == nil || hit.Nemesis != "pause" || !hit.Holder || hit.Lease != time.Second {
			t.Errorf("pause at %s: hit %+v, want the pause of a holder with the 1 s lease", f.Start, hit)
		}
	}
	var stored checker.Result
	b, err := os.ReadFile(filepath.Join(out.Dir, "results.json"))
	if err == nil {
		err = json.Unmarshal(b, &stored)
	}
	if err != nil || stored.NotExercised != out.Result.NotExercised {
		t.Errorf("results.json not_exercised %q (%v), want %q", stored.NotExercised, err, out.Result.NotExercised)
	}
}

// TestRunStopOnAnomaly: a paused holder outlives its lease, another worker
// is granted the lock, and the run stops soon after that first double
// holder instead of running its whole time; the verdict is invalid and
// results.json says when the anomaly came and when the workload stopped.
func TestRunStopOnAnomaly(t *testing.T) {
	tt := exerciseTest(t, "redis-set-px", "pause")
	tt.Time, tt.StopOnAnomaly = 40*time.Second, true
	start := time.Now()
	out, err := Run(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	doubles := 0
	for _, a := range out.Result.Anomalies {
		if a.Kind == "double-holder" {
			doubles++
		}
	}
	if out.Result.Valid != checker.Invalid || !out.Stopped || doubles == 0 {
		t.Fatalf("verdict %v, stopped %v, %d double holders: want invalid, stopped at a double holder",
			out.Result.Valid, out.Stopped, doubles)
	}
	st := out.Result.Stats
	first, _ := st["first_anomaly_s"].(float64)
	stopped, _ := st["stopped_s"].(float64)
	workload, _ := st["workload_s"].(float64)
	verdict, _ := st["verdict_s"].(float64)
	if first <= 0 || stopped < first || workload < stopped || verdict < workload {
		t.Fatalf("stats %v: want 0 < first_anomaly_s <= stopped_s <= workload_s <= verdict_s", st)
	}
	// The check runs between the workload's end and the verdict (times
	// are cut to the millisecond).
	if check, ok := st["check_s"].(float64); !ok || check < 0 || check > verdict-workload+0.002 {
		t.Fatalf("stats %v: want 0 <= check_s <= verdict_s - workload_s", st)
	}
	// The workload ends within a cycle of the stop (acquire timeout 600 ms,
	// a healed pause); generous for a loaded machine, far below --time.
	if workload-first > 5 || time.Since(start) > tt.Time {
		t.Errorf("first anomaly at %.2f s, workload stopped at %.2f s, run took %s of its %s", first, workload, time.Since(start), tt.Time)
	}
	b, err := os.ReadFile(filepath.Join(out.Dir, "test.json"))
	if err != nil || !strings.Contains(string(b), `"stop_on_anomaly": true`) || !strings.Contains(string(b), "--stop-on-anomaly") {
		t.Errorf("test.json does not record the stop on anomaly (%v):\n%s", err, b)
	}
	// Every fault was ended by its end op, the one in force at the stop
	// included.
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	faults := h.Faults()
	if len(faults) == 0 {
		t.Fatal("no fault in the history")
	}
	for _, f := range faults {
		if len(f.Ops) < 2 {
			t.Errorf("the %s at %s was never ended", f.F, f.Start)
		}
	}
}
