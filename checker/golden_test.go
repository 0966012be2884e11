package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

var update = flag.Bool("update", false, "rewrite testdata/histories/*/want.json from the current results")

// want is the expected outcome of a golden history (want.json).
type want struct {
	Valid Validity `json:"valid"`
	// Kinds are the sorted distinct kinds of the non-fenced anomalies.
	Kinds []string `json:"kinds"`
	// Fenced says the run used fencing tokens (Options.Fenced).
	Fenced bool `json:"fenced,omitempty"`
	// StuckBoundS is Options.StuckBound in seconds.
	StuckBoundS float64 `json:"stuck_bound_s,omitempty"`
	// NoLock says the design took no lock (Options.NoLock).
	NoLock bool `json:"no_lock,omitempty"`
	// LeaseS is Options.Lease in seconds.
	LeaseS float64 `json:"lease_s,omitempty"`
	// NotExercised is the composed result's NotExercised sentence.
	NotExercised string `json:"not_exercised,omitempty"`
}

// TestDataHistories checks every stored history under testdata/histories
// with Default and compares the verdict and anomaly kinds with want.json. A
// failing run's directory can be copied there to become a regression test.
func TestDataHistories(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "histories", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no golden histories")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			wantPath := filepath.Join(dir, "want.json")
			var w want
			b, err := os.ReadFile(wantPath)
			if err != nil && !(*update && os.IsNotExist(err)) {
				t.Fatal(err)
			}
			if err == nil {
				if err := json.Unmarshal(b, &w); err != nil {
					t.Fatalf("%s: %v", wantPath, err)
				}
			}
			opts := Options{Fenced: w.Fenced, Timeout: 30 * time.Second,
				StuckBound: time.Duration(w.StuckBoundS * float64(time.Second)), NoLock: w.NoLock,
				Lease: time.Duration(w.LeaseS * float64(time.Second))}
			r := Default(opts).Check(context.Background(), h)
			got := want{Valid: r.Valid, Kinds: kinds(r.Anomalies, false), Fenced: w.Fenced, StuckBoundS: w.StuckBoundS, NoLock: w.NoLock,
				LeaseS: w.LeaseS, NotExercised: r.NotExercised}
			if *update {
				b, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(wantPath, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if w.Kinds == nil {
				w.Kinds = []string{}
			}
			if got.Valid != w.Valid || !slices.Equal(got.Kinds, w.Kinds) || got.NotExercised != w.NotExercised {
				t.Errorf("got valid %v kinds %v not exercised %q, want valid %v kinds %v not exercised %q (error %q)\n%s",
					got.Valid, got.Kinds, got.NotExercised, w.Valid, w.Kinds, w.NotExercised, r.Error, dump(r.Anomalies))
			}
			var buf bytes.Buffer
			if err := json.NewEncoder(&buf).Encode(r); err != nil {
				t.Errorf("encode result: %v", err)
			}
		})
	}
}

// TestRealPauseStory checks the mutex story of a real run (redis-set-px,
// pause, seed 3): it must say what the ops' times prove, in plain words,
// with the instant both held the lock after both acquires returned.
func TestRealPauseStory(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("testdata", "histories", "real-redis-set-px-pause", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewMutex(Options{}).Check(context.Background(), h)
	if r.Valid != Invalid {
		t.Fatalf("valid = %v (%s)", r.Valid, r.Error)
	}
	a := find(t, r, "nonlinearizable")
	want := "No order of these operations fits a lock: whenever each one took effect, between when it was sent and when its answer came, processes 3 and 4 both held lock k0 at 3.87 s. " +
		"Process 3 asked for it at 2.86 s, was granted it at 2.86 s (token 310) and did not start its release until 5.87 s; " +
		"process 4 asked for it at 2.85 s and was granted it at 3.87 s (token 311). " +
		"Before process 3 gave it up, the lock was granted 230 times more. The overlap checker tells who held the lock when."
	if a.Explanation != want {
		t.Errorf("explanation:\n got %s\nwant %s", a.Explanation, want)
	}
	// Every op the anomaly names returned (or was invoked) by its start
	// or is the end of a hold invoked after it: nothing happens "after the
	// op it blocks".
	for _, i := range a.Ops[:4] {
		if op := h[i]; op.F == history.FAcquire && op.Time > a.Start {
			t.Errorf("op %d (%s) returned after the instant both held the lock (%v)", i, op, a.Start)
		}
	}
	if r.Visualize == nil {
		t.Error("no visualization of the failing holds")
	}
	if len(a.Nemesis) != 1 || !strings.HasPrefix(a.Nemesis[0], "pause of process 3 from 2.86 s") {
		t.Errorf("nemesis = %q", a.Nemesis)
	}
}
