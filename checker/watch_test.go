package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func TestWatch(t *testing.T) {
	tests := []struct {
		name  string
		h     history.History
		opts  Options
		kind  string // "" for none
		procs []int
		at    time.Duration
	}{
		{"double holder", doubleHolderPause(), Options{}, "double-holder", []int{3, 1}, at(3.35)},
		{"fenced: the double holder is not the anomaly", fencedPauseRejected(), Options{Fenced: true}, "", nil, 0},
		{"fenced: a stale write accepted", fencedPauseAccepted(), Options{Fenced: true}, "stale-write", []int{1, 3}, at(5.41)},
		{"clean", clean(), Options{}, "", nil, 0},
		{"no lock: holds overlap by design", doubleHolderPause(), Options{NoLock: true}, "", nil, 0},
		{"a release ends the hold", (&builder{}).acquire(0, 0, 0.01, 1, "a").release(0, 0.02, 0.03, true, "a").
			acquire(1, 0.025, 0.04, 2, "b").build(), Options{}, "", nil, 0},
		{"a crash ends the hold", (&builder{}).acquire(0, 0, 0.01, 1, "a").crash(0, 0.02).
			acquire(1, 0.025, 0.04, 2, "b").build(), Options{}, "", nil, 0},
		{"an info acquire is not a confirmed grant", (&builder{}).acquireInfo(0, 0, 0.01).
			acquire(1, 0.025, 0.04, 2, "b").build(), Options{}, "", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := FirstAnomaly(tt.h, tt.opts)
			if tt.kind == "" {
				if ok {
					t.Fatalf("found %+v, want none", a)
				}
				return
			}
			if !ok || a.Kind != tt.kind || !slices.Equal(a.Processes, tt.procs) || a.End != tt.at {
				t.Fatalf("found %v %+v, want %s of %v at %v", ok, a, tt.kind, tt.procs, tt.at)
			}
			if a.Explanation == "" {
				t.Error("no explanation")
			}
		})
	}
}

// TestWatchAgreesWithDefault: on every golden history, what the watch finds
// the full checkers find too (it never stops a run the checkers would call
// valid), and on a register history the checkers call invalid for a double
// holder the watch finds one.
func TestWatchAgreesWithDefault(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "histories", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var w want
		b, err := os.ReadFile(filepath.Join(dir, "want.json"))
		if err != nil || json.Unmarshal(b, &w) != nil {
			t.Fatalf("%s: want.json: %v", dir, err)
		}
		opts := Options{Fenced: w.Fenced, NoLock: w.NoLock, Timeout: 30 * time.Second}
		a, found := FirstAnomaly(h, opts)
		r := Default(opts).Check(context.Background(), h)
		if found && r.Valid != Invalid {
			t.Errorf("%s: the watch found %s but the checkers say %v", filepath.Base(dir), a.Kind, r.Valid)
		}
		if !w.Fenced && slices.Contains(kinds(r.Anomalies, false), "double-holder") && !found {
			t.Errorf("%s: the checkers found a double holder, the watch none", filepath.Base(dir))
		}
	}
}

// randomHolds builds a history of grants, releases and crashes on two keys
// by four processes, where the service sometimes grants a held lock.
func randomHolds(seed uint64) history.History {
	rng := rand.New(rand.NewPCG(seed, 7))
	b, t := randomLocks(rng, func() float64 { return 0.01 }, 5, func(held bool) bool { return held && rng.Float64() > 0.1 })
	// The history goes on after the last grant, as a run's does after a
	// stop, so a grant's overlap has a length.
	b.pair(9, history.FAcquire, "z", t+1, t+1.005, history.Fail, nil, nil)
	return b.build()
}

// TestWatchMatchesOverlap: on random histories the watch finds a double
// holder exactly when the overlap checker does, and no earlier than the
// overlap checker's first one begins.
func TestWatchMatchesOverlap(t *testing.T) {
	found := 0
	for seed := range uint64(300) {
		h := randomHolds(seed)
		a, ok := FirstAnomaly(h, Options{})
		r := NewOverlap(Options{}).Check(context.Background(), h)
		doubles := r.Stats["double_holders"].(int)
		if ok != (doubles > 0) {
			t.Fatalf("seed %d: watch found %v (%+v), overlap %d double holders", seed, ok, a, doubles)
		}
		if !ok {
			continue
		}
		found++
		earliest := r.Anomalies[0].Start
		for _, x := range r.Anomalies {
			earliest = min(earliest, x.Start)
		}
		if a.End < earliest {
			t.Errorf("seed %d: watch found a double holder at %v, before the first overlap at %v", seed, a.End, earliest)
		}
	}
	if found == 0 || found == 300 {
		t.Errorf("%d of 300 random histories have a double holder: the generator tests nothing", found)
	}
}

// BenchmarkWatch measures the per-op cost of the incremental sweep over a
// long clean fenced history (the cost a --stop-on-anomaly run pays).
func BenchmarkWatch(b *testing.B) {
	h := (&builder{}).cycles(20000, 0, 1, 0, true).build()
	b.ResetTimer()
	for range b.N {
		w := NewWatch(Options{Fenced: true})
		for _, op := range h {
			if _, ok := w.Observe(op); ok {
				b.Fatal("anomaly in a clean history")
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(h)), "ns/op-observed")
}

// randomGaps builds a history on two keys by four processes where acquires
// sometimes fail on a free key and time sometimes jumps, so some keys go
// without a holder for a while as acquires fail (stuck locks for a short
// bound).
func randomGaps(seed uint64) history.History {
	rng := rand.New(rand.NewPCG(seed, 11))
	b, _ := randomLocks(rng, func() float64 { return 0.01 + rng.Float64()*rng.Float64()*0.2 }, 6,
		func(held bool) bool { return held || rng.IntN(3) == 0 })
	return b.build()
}

// randomLocks builds 60 steps on two keys by four processes, each step
// after the last by step(): a holder crashes one time in crashOneIn and
// releases otherwise; another process asks for a key, and is refused
// when refused(whether another holds the key) says so. It returns the
// builder and the last step's time.
func randomLocks(rng *rand.Rand, step func() float64, crashOneIn int, refused func(held bool) bool) (*builder, float64) {
	b := &builder{}
	holding := map[int]string{}
	t := 0.0
	for range 60 {
		t += step()
		p := rng.IntN(4)
		key := []string{"a", "b"}[rng.IntN(2)]
		if k, ok := holding[p]; ok {
			if rng.IntN(crashOneIn) == 0 {
				b.pair(p, history.FCrash, k, t, t+0.001, history.Info, nil, nil)
			} else {
				b.pair(p, history.FRelease, k, t, t+0.005, history.OK, nil, &history.Value{Released: history.Bool(true)})
			}
			delete(holding, p)
			continue
		}
		held := false
		for _, k := range holding {
			held = held || k == key
		}
		if refused(held) {
			b.pair(p, history.FAcquire, key, t, t+0.005, history.Fail, nil, nil)
			continue
		}
		b.pair(p, history.FAcquire, key, t, t+0.005, history.OK, nil, &history.Value{Owner: fmt.Sprint(p)})
		holding[p] = key
	}
	return b, t
}

// TestWatchStuckMatchesLiveness: with a stuck bound, a stuck lock the watch
// reports on a history is one the liveness checker reports too (a run
// stopped there keeps its verdict), and a history the liveness checker finds
// stuck is one the watch stops (at a stuck lock or at an earlier double
// holder), never later than the history's end.
func TestWatchStuckMatchesLiveness(t *testing.T) {
	opts := Options{StuckBound: 250 * time.Millisecond}
	stuck := 0
	for seed := range uint64(400) {
		h := randomGaps(seed)
		a, ok := FirstAnomaly(h, opts)
		r := NewLiveness(opts).Check(context.Background(), h)
		n := stuckLocks(r)
		if ok && a.Kind == "stuck-lock" {
			stuck++
			if n == 0 && r.Valid != Invalid {
				t.Fatalf("seed %d: the watch found %+v, the liveness checker no stuck lock", seed, a)
			}
			if a.End-a.Start <= opts.StuckBound || a.Explanation == "" {
				t.Fatalf("seed %d: a stuck lock no longer than the bound: %+v", seed, a)
			}
			// The prefix up to the op that showed it is already stuck.
			var prefix history.History
			for _, op := range h {
				if op.Time <= a.End {
					prefix = append(prefix, op)
				}
			}
			if pr := NewLiveness(opts).Check(context.Background(), prefix); stuckLocks(pr) == 0 && pr.Valid != Invalid {
				t.Fatalf("seed %d: the prefix up to %v is not stuck for the liveness checker", seed, a.End)
			}
		}
		if n > 0 && !ok {
			t.Fatalf("seed %d: the liveness checker found %d stuck locks, the watch nothing", seed, n)
		}
	}
	if stuck == 0 || stuck == 400 {
		t.Errorf("%d of 400 random histories stopped at a stuck lock: the generator tests nothing", stuck)
	}
	// Without a bound, the watch never reports a stuck lock.
	if a, ok := FirstAnomaly(crashAtFailpointHistory(true), Options{}); ok {
		t.Errorf("no stuck bound, yet the watch found %+v", a)
	}
	a, ok := FirstAnomaly(crashAtFailpointHistory(true), Options{StuckBound: 3 * time.Second})
	if !ok || a.Kind != "stuck-lock" || a.Key != "k" {
		t.Fatalf("the crash at the failpoint: found %v %+v, want a stuck lock of k", ok, a)
	}
}

// stuckLocks is the liveness result's stuck-lock count (none in a history
// with no grant, which is invalid for that alone).
func stuckLocks(r Result) int {
	n, _ := r.Stats["stuck_locks"].(int)
	return n
}
