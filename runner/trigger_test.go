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
	"github.com/lockcheck/lockcheck/schedule"
)

// TestTriggeredFaults runs faults bound to lock events on real Redis: each
// strikes the holder its event names, no sooner than its offset after the
// event, and the run records the schedule it applied.
func TestTriggeredFaults(t *testing.T) {
	overlap, fencing := checker.NewOverlap(checker.Options{}), checker.NewFencing()
	cases := []struct {
		name, nem string
		lock      string // "" is redis-set-px
		fencing   bool
		event     string // the op F and type of the event that fires it
		evType    history.Type
		offset    time.Duration
		start     string // the fault's start op
		want      checker.Validity
		mustFind  string
		fenced    bool
		finder    checker.Checker
	}{
		{"pause at grant", "pause@grant+5ms:lease+600ms", "", false, history.FAcquire, history.OK, 5 * time.Millisecond, history.FPause, checker.Invalid, "double-holder", false, overlap},
		{"pause at grant, fenced", "pause@grant+5ms:lease+600ms", "", true, history.FAcquire, history.OK, 5 * time.Millisecond, history.FPause, checker.Valid, "stale-write-rejected", true, fencing},
		{"partition at cs", "partition@cs:lease+600ms", "", false, history.FCS, history.Invoke, 0, history.FPartition, checker.Invalid, "double-holder", false, overlap},
		// Marks: the worker reports its write, its watchdog's renewal.
		{"pause at write", "pause@write:lease+600ms", "", false, history.FEvent, history.Info, 0, history.FPause, checker.Invalid, "double-holder", false, overlap},
		{"pause at renewal", "pause@renewal+5ms:lease+600ms", "redis-watchdog", false, history.FEvent, history.Info, 5 * time.Millisecond, history.FPause, checker.Invalid, "double-holder", false, overlap},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lock := c.lock
			if lock == "" {
				lock = "redis-set-px"
			}
			tt := quick(t, lock, c.nem, c.fencing)
			tt.Think = 1200 * time.Millisecond // a section that outlasts the 300 ms lease
			if c.evType == history.Info && c.lock == "" {
				// A write within the lease: redis-set-px's client checks
				// its lease before it writes, and writes nothing past it.
				// Two sections a hold: the mark of the first write comes
				// with a whole section still to run, so the pause finds
				// the holder holding (after a hold's last write its
				// release follows within a millisecond, sooner than a
				// mark crosses to the controller).
				tt.Think, tt.Sections = 100*time.Millisecond, 2
			}
			tt.Time, tt.Until = patient, untilAnomaly(c.finder, c.mustFind)
			out, err := Run(context.Background(), tt, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(out.Result, c.fenced); out.Result.Valid != c.want || got[c.mustFind] == 0 {
				t.Fatalf("verdict %v with anomalies %v; want %v with a %s anomaly", out.Result.Valid, got, c.want, c.mustFind)
			}
			rec, err := schedule.Load(filepath.Join(out.Dir, schedule.FileName))
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Faults) != 1 || len(rec.Faults[0].Fired) != 1 || rec.Faults[0].Spec != c.nem {
				t.Fatalf("schedule.json: %+v, want %s fired once", rec, c.nem)
			}
			f := rec.Faults[0].Fired[0]
			h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			ev, start := h[f.Event], h[f.Start]
			if ev.F != c.event || ev.Type != c.evType || ev.Process != f.Process || f.Error != "" {
				t.Fatalf("fired by op %+v (record %+v), want a %s %s", ev, f, c.event, c.evType)
			}
			hit := history.HitOf(&start)
			key := ev.Key
			if ev.F == history.FEvent { // a mark names no key: the holder's
				key = hit.Key
				if d := ev.Value.Ext().Detail; key == "" || !strings.HasPrefix(d, c.nem[strings.IndexByte(c.nem, '@')+1:strings.IndexAny(c.nem, "+:")]+" sent: ") {
					t.Fatalf("fired by the mark %q striking %q, want the trigger's mark of a held lock", d, key)
				}
			}
			if start.F != c.start || hit == nil || hit.Trigger != c.nem || hit.Event != ev.Index || !hit.Holder || hit.Key != key {
				t.Fatalf("start op %+v: want the fault on the event's holder, naming its trigger", start)
			}
			if targets := start.Value.Ext().Targets; len(targets) != 1 || targets[0] != ev.Process {
				t.Errorf("struck %v, want process %d", targets, ev.Process)
			}
			if f.Due != ev.Time+c.offset || f.InForce < f.Due || start.Time < f.Due {
				t.Errorf("event at %s, due %s, in force %s, start op at %s: struck before its offset", ev.Time, f.Due, f.InForce, start.Time)
			}
			var res struct{ Stats map[string]any }
			b, err := os.ReadFile(filepath.Join(out.Dir, "results.json"))
			if err != nil || json.Unmarshal(b, &res) != nil {
				t.Fatalf("results.json: %v", err)
			}
			for _, k := range []string{"trigger_late_p50_ms", "trigger_late_p99_ms"} {
				if _, ok := res.Stats[k].(float64); !ok || res.Stats["triggered_faults"] != 1.0 {
					t.Errorf("results.json stats %v lack %s or one triggered fault", res.Stats, k)
				}
			}
			assertNoChildren(t)
		})
	}
}
