package checker

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockcheck/lockcheck/history"
)

// The edge cases of issue 29 that no test pinned: each test below fails
// when the behaviour it names is broken (docs/testing.md says how each was
// checked with a hand-made mutant).

// foreignReleaseAlone: process 3 holds the lock and sends its release (a
// plain DEL) at 0.40 s; the DEL is slow, 3's key expires meanwhile and
// process 4 is granted the lock at 0.46 s; the DEL then lands and deletes
// 4's key. No two holds overlap (3's hold ends at its release invoke), so
// the foreign release alone makes the verdict.
func foreignReleaseAlone() history.History {
	b := (&builder{}).cycles(5, 0, 0, 0, false)
	b.acquire(3, 0.30, 0.31, 0, "o3").cs(3, 0.32, 0.33, 5, 0)
	b.pair(3, history.FRelease, "k", 0.40, 0.50, history.OK, &history.Value{Owner: "o3"},
		&history.Value{Released: history.Bool(true), Extra: &history.Extra{DeletedOwner: "o4"}})
	b.acquire(4, 0.45, 0.46, 0, "o4").cs(4, 0.47, 0.48, 6, 0)
	b.release(4, 0.55, 0.56, false, "o4")
	return b.build()
}

func TestGapForeignReleaseWithoutOverlap(t *testing.T) {
	h := foreignReleaseAlone()
	r := NewOverlap(Options{}).Check(context.Background(), h)
	if r.Stats["double_holders"] != 0 || r.Stats["foreign_releases"] != 1 {
		t.Fatalf("stats %v, want no double holder and one foreign release", r.Stats)
	}
	if r.Valid != Invalid {
		t.Fatalf("overlap %v, want invalid: the foreign release alone decides", r.Valid)
	}
	if got := kinds(r.Anomalies, false); !slices.Equal(got, []string{"foreign-release"}) {
		t.Fatalf("kinds %v", got)
	}
	an := r.Anomalies[0]
	if !slices.Equal(an.Processes, []int{3, 4}) || !strings.Contains(an.Explanation, "held by process 4 (owner o4)") {
		t.Errorf("anomaly %+v", an)
	}
	d := Default(Options{}).Check(context.Background(), h)
	if d.Valid != Invalid || !slices.Equal(kinds(d.Anomalies, false), []string{"foreign-release"}) {
		t.Fatalf("Default %v %v, want invalid with only the foreign release", d.Valid, kinds(d.Anomalies, false))
	}
}

func TestGapSameTokenTwoWrites(t *testing.T) {
	// Process 0 holds token 4 and makes two accepted writes with it, one
	// after the other: a holder's own writes never make each other stale.
	b := (&builder{}).cycles(3, 0, 1, 0, true)
	b.acquire(0, 0.20, 0.21, 4, "o0").cs(0, 0.22, 0.23, 3, 4).cs(0, 0.24, 0.25, 4, 4).release(0, 0.26, 0.27, true, "o0")
	b.acquire(1, 0.30, 0.31, 5, "o1").cs(1, 0.32, 0.33, 5, 5).release(1, 0.34, 0.35, true, "o1")
	h := b.build()
	r := NewFencing().Check(context.Background(), h)
	if r.Valid != Valid || r.Stats["stale_writes_accepted"] != 0 {
		t.Fatalf("fencing %v, stats %v, anomalies %v: equal tokens are not stale", r.Valid, r.Stats, r.Anomalies)
	}
	if d := Default(Options{Fenced: true}).Check(context.Background(), h); d.Valid != Valid {
		t.Fatalf("Default %v %v", d.Valid, kinds(d.Anomalies, false))
	}
	// The same two writes in the other order (token 4 after token 5) are
	// stale: the check is not just switched off.
	b = (&builder{}).cycles(3, 0, 1, 0, true)
	b.acquire(1, 0.20, 0.21, 5, "o1").cs(1, 0.22, 0.23, 3, 5).release(1, 0.24, 0.25, true, "o1")
	b.cs(0, 0.30, 0.31, 4, 4)
	if r := NewFencing().Check(context.Background(), b.build()); r.Valid != Invalid || r.Stats["stale_writes_accepted"] != 1 {
		t.Fatalf("lower token after higher: %v, stats %v", r.Valid, r.Stats)
	}
}

// inFlightCut is a key the direct decision leaves to the search (process 2
// goes on after a release that ended in doubt): process 1's acquire is in
// flight from 0.5 s to 10 s, over process 0's release. A cut inside that
// flight would start the next chunk with the wrong holder.
func inFlightCut() history.History {
	b := &builder{}
	b.acquire(0, 0, 1, 0, "o0")
	b.acquire(1, 0.5, 10, 0, "o1")
	b.release(0, 2, 3, true, "o0")
	b.release(1, 11, 12, true, "o1")
	return doubtThenHold(b, 13).build()
}

// touchingCut: process 0's acquire returns at 3 s, the instant process 1
// invokes the release that frees the lock for it; Porcupine counts ops
// that touch as concurrent, so a cut at 3 s would put 0's acquire before
// 1's release.
func touchingCut() history.History {
	b := &builder{}
	b.acquire(1, 0, 0.5, 0, "o1")
	b.acquire(0, 1, 3, 0, "o0")
	b.release(1, 3, 3.5, true, "o1")
	b.release(0, 4, 4.5, true, "o0")
	return doubtThenHold(b, 5).build()
}

// doubtThenHold adds to b, from t seconds on, process 2's release that ends
// in doubt (so the direct decision leaves the key to the search) and then
// a hold of its own.
func doubtThenHold(b *builder, t float64) *builder {
	b.pair(2, history.FRelease, "k", t, t+1, history.Info, &history.Value{Owner: "o2"}, nil)
	b.acquire(2, t+2, t+3, 0, "o2")
	b.release(2, t+4, t+5, true, "o2")
	return b
}

func TestGapCutWhileInFlight(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    history.History
	}{
		{"acquire in flight over a release", inFlightCut()},
		{"acquire returns as the release is invoked", touchingCut()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, target := range []int{0, 1, 2} {
				c := &mutex{opts: Options{Timeout: 10 * time.Second}, target: target}
				r := c.Check(context.Background(), tt.h)
				if r.Stats["keys_decided_directly"] != 0 {
					t.Fatalf("the key was decided directly: %v", r.Stats)
				}
				if r.Valid != Valid {
					t.Fatalf("target %d: %v %v, want valid: a cut fell while an op was in flight", target, r.Valid, r.Anomalies)
				}
			}
		})
	}
}

// stuckAt builds a history where the lock is free from 1 s (process 0's
// release invoke) until process 1 is granted it at 1 s + gap, while process
// 2's acquire fails at 1.5 s.
func stuckAt(gap time.Duration) history.History {
	b := &builder{}
	b.acquire(0, 0, 0.5, 0, "o0").release(0, 1, 1.001, true, "o0")
	b.acquireFail(2, 1.4, 1.5)
	h := b.acquire(1, 1.9, 2, 0, "o1").release(1, 2.5, 2.501, true, "o1").build()
	for i := range h {
		if h[i].Process == 1 && h[i].F == history.FAcquire && h[i].Type == history.OK {
			h[i].Time = time.Second + gap
		}
	}
	return h
}

func TestGapBoundsAtEquality(t *testing.T) {
	t.Run("stuck bound", func(t *testing.T) {
		for _, tt := range []struct {
			gap  time.Duration
			want Validity
		}{
			{time.Second - 1, Valid},
			{time.Second, Valid}, // not longer than the bound
			{time.Second + 1, Invalid},
		} {
			h := stuckAt(tt.gap)
			opts := Options{StuckBound: time.Second}
			r := NewLiveness(opts).Check(context.Background(), h)
			if r.Valid != tt.want {
				t.Errorf("gap %v: liveness %v, want %v (%v)", tt.gap, r.Valid, tt.want, r.Anomalies)
			}
			// The watcher of --stop-on-anomaly applies the same rule.
			w := NewWatch(opts)
			var stuck bool
			for _, op := range h {
				if a, ok := w.Observe(op); ok && a.Kind == "stuck-lock" {
					stuck = true
				}
			}
			if stuck != (tt.want == Invalid) {
				t.Errorf("gap %v: watch stuck %v, want %v", tt.gap, stuck, tt.want == Invalid)
			}
		}
	})
	t.Run("lease", func(t *testing.T) {
		// Process 3 holds the lock from 1.5 s to 3.5 s and is paused from
		// 2 s for exactly the lease, then a nanosecond longer.
		for _, tt := range []struct {
			extra time.Duration
			want  Validity
			why   string
		}{
			{0, Unknown, "1 lasted no longer than the 1 s lease"},
			{1, Valid, ""},
		} {
			h := warm().held(3, 2.0, 3.5).nem(history.FPause, 2.5, 3.5, &history.Value{Extra: &history.Extra{Targets: []int{3}}}).build()
			for i := range h {
				if h[i].F == history.FResume && h[i].Type != history.Invoke {
					h[i].Time += tt.extra
				}
			}
			fs := h.Faults()
			if len(fs) != 1 || fs[0].End-fs[0].Start != time.Second+tt.extra {
				t.Fatalf("faults %+v", fs)
			}
			r := NewExercise(Options{Lease: time.Second}).Check(context.Background(), h)
			if r.Valid != tt.want || !strings.Contains(r.NotExercised, tt.why) {
				t.Errorf("pause of %v: %v, not exercised %q, want %v %q", time.Second+tt.extra, r.Valid, r.NotExercised, tt.want, tt.why)
			}
			d, longer := pausedLonger(fs, 3, time.Second)
			if longer != (tt.extra > 0) || (longer && d != time.Second+tt.extra) {
				t.Errorf("pausedLonger %v %v for a pause of %v", d, longer, time.Second+tt.extra)
			}
		}
	})
}

// zeroLength: process 1 holds the lock from 0.5 s to 2 s; process 0's
// acquire returns at 1 s and it invokes its release at the same instant (a
// hold of zero length, as a millisecond-resolution history records a
// sub-millisecond one). When touching, the zero-length hold comes right
// as 1's hold ends instead.
func zeroLength(inside bool) history.History {
	b := &builder{}
	b.acquire(1, 0.4, 0.5, 0, "o1")
	if inside {
		b.acquire(0, 0.8, 1, 0, "o0").release(0, 1, 1.1, true, "o0")
		b.release(1, 2, 2.1, true, "o1")
	} else {
		b.release(1, 1, 1.1, true, "o1")
		b.acquire(0, 0.8, 1, 0, "o0").release(0, 1, 1.1, true, "o0")
	}
	return b.build()
}

func TestGapZeroLengthHold(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    history.History
		want Validity
	}{
		// Process 0 was granted the lock while 1 held it: whatever instant
		// its hold took, it fell inside 1's. Porcupine's model, the mutex
		// checker, the watcher and the overlap checker all say so.
		{"inside another hold", zeroLength(true), Invalid},
		// Granted the instant 1 let go: ops that touch are concurrent.
		{"touching the end of another", zeroLength(false), Valid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			// Porcupine's own answer on the whole key, with no direct
			// decision.
			if got := porcupineMutex(tt.h); got != tt.want {
				t.Errorf("porcupine %v, want %v", got, tt.want)
			}
			if r := NewMutex(Options{}).Check(ctx, tt.h); r.Valid != tt.want {
				t.Errorf("mutex %v, want %v", r.Valid, tt.want)
			}
			if o := NewOverlap(Options{}).Check(ctx, tt.h); o.Valid != tt.want {
				t.Errorf("overlap %v, want %v (stats %v)", o.Valid, tt.want, o.Stats)
			}
			w := NewWatch(Options{})
			var double bool
			for _, op := range tt.h {
				if a, ok := w.Observe(op); ok && a.Kind == "double-holder" {
					double = true
				}
			}
			if double != (tt.want == Invalid) {
				t.Errorf("watch double holder %v, want %v", double, tt.want == Invalid)
			}
		})
	}
}

// porcupineMutex checks a one-key history's acquires and releases (no
// crashes, no doubt) with Porcupine and the mutex model alone.
func porcupineMutex(h history.History) Validity {
	pairs, err := h.Pairs()
	if err != nil {
		panic(err)
	}
	var ops []porcupine.Operation
	for _, pr := range pairs {
		in := &mutexOp{key: pr.Invoke.Key, proc: pr.Invoke.Process, call: pr.Invoke.Time, ret: pr.Complete.Time, inv: -1, done: -1}
		switch pr.Invoke.F {
		case history.FAcquire:
			in.kind = mAcquire
		case history.FRelease:
			in.kind = mRelease
		default:
			continue
		}
		ops = append(ops, in.operation())
	}
	if porcupine.CheckOperations(mutexModel(), ops) {
		return Valid
	}
	return Invalid
}

// TestBlockerKeepsTheEarlierHold: of two holds that end at the same
// instant, the one granted first stays the hold in the way, so a third hold
// they both overlap is told as more of the first conflict, not a new one.
func TestBlockerKeepsTheEarlierHold(t *testing.T) {
	b := (&builder{}).acquire(0, 0.9, 1, 0, "o0").acquire(1, 1.9, 2, 0, "o1").acquire(2, 4.9, 5, 0, "o2").
		release(2, 6, 6.1, true, "o2").release(0, 10, 10.1, true, "o0").release(1, 10, 10.1, true, "o1")
	r := NewMutex(Options{}).Check(context.Background(), b.build())
	if r.Stats["keys_decided_directly"] != 1 || len(r.Anomalies) != 1 {
		t.Fatalf("stats %v, %d anomalies, want one conflict of 0 with 1 and 2: %+v", r.Stats, len(r.Anomalies), r.Anomalies)
	}
}

// TestPausedLongerWithNoLease: with no lease known, no pause is longer
// than it (the story then does not claim one).
func TestPausedLongerWithNoLease(t *testing.T) {
	fs := []history.Fault{{F: history.FPause, Targets: []int{3}, Start: sec(1), End: sec(2)}}
	if d, ok := pausedLonger(fs, 3, 0); ok {
		t.Errorf("a pause of %s is longer than an unknown lease", d)
	}
	if _, ok := pausedLonger(fs, 3, time.Second/2); !ok {
		t.Error("a 1 s pause is not longer than a 0.5 s lease")
	}
}
