package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// releaseFail adds a release that failed for certain (a refused dial).
func (b *builder) releaseFail(p int, t0, t1 float64) *builder {
	return b.pair(p, history.FRelease, "k", t0, t1, history.Fail, nil, nil)
}

// releaseUnsaid adds a release ok whose worker did not say whether the key
// was still its own.
func (b *builder) releaseUnsaid(p int, t0, t1 float64) *builder {
	return b.pair(p, history.FRelease, "k", t0, t1, history.OK, nil, nil)
}

// searched makes the key's shape one the direct decision leaves to
// Porcupine, without changing what fits: process 9 goes on after an
// acquire in doubt, with a release in doubt that may never take effect.
func searched(b *builder) *builder {
	b.acquireInfo(9, 0, 0.01)
	return b.pair(9, history.FRelease, "k", 0.02, 0.03, history.Info, nil, nil)
}

// TestFailedReleaseEndsTheHold: a holder whose release fails for certain
// has left its critical section and leaves the lock to its lease, so a
// rival granted after that release's invocation is no second holder, on
// both the direct path and Porcupine's; a retry that says the key was
// still the holder's ends the hold there instead.
func TestFailedReleaseEndsTheHold(t *testing.T) {
	for _, tt := range []struct {
		name  string
		build func(b *builder)
		want  Validity
		// story is a part of the first anomaly's explanation.
		story string
	}{
		{"refused then retired", func(b *builder) {
			// The refuse run: three refused tries, retired at 1.0 s; the
			// lease hands the lock on at 0.9 s.
			b.acquire(0, 0.1, 0.11, 1, "o0").cs(0, 0.12, 0.13, 0, 0)
			b.releaseFail(0, 0.2, 0.21).releaseFail(0, 0.5, 0.51).releaseFail(0, 0.8, 0.81).crash(0, 1.0)
			b.acquire(1, 0.3, 0.9, 2, "o1").release(1, 1.1, 1.2, true, "o1")
		}, Valid, ""},
		{"rival granted before the failed release", func(b *builder) {
			b.acquire(0, 0.1, 0.11, 1, "o0").cs(0, 0.12, 0.13, 0, 0)
			b.acquire(1, 0.14, 0.15, 2, "o1")
			b.releaseFail(0, 0.2, 0.21).crash(0, 1.0)
		}, Invalid, "started its release at 0.20 s, which failed"},
		{"retry finds the key still its own", func(b *builder) {
			// The service granted a lock its owner still held.
			b.acquire(0, 0.1, 0.11, 1, "o0").releaseFail(0, 0.2, 0.21)
			b.acquire(1, 0.3, 0.31, 2, "o1")
			b.release(0, 0.5, 0.51, true, "o0")
		}, Invalid, "did not start its release until 0.50 s"},
		{"retry that does not say ends the hold too", func(b *builder) {
			b.acquire(0, 0.1, 0.11, 1, "o0").releaseFail(0, 0.2, 0.21)
			b.acquire(1, 0.3, 0.31, 2, "o1")
			b.releaseUnsaid(0, 0.5, 0.51)
		}, Invalid, ""},
		{"retry finds the key gone", func(b *builder) {
			b.acquire(0, 0.1, 0.11, 1, "o0").releaseFail(0, 0.2, 0.21)
			b.acquire(1, 0.3, 0.31, 2, "o1")
			b.release(0, 0.5, 0.51, false, "o0")
			b.release(1, 0.6, 0.61, true, "o1")
		}, Valid, ""},
		{"retry confirmed before any rival", func(b *builder) {
			b.acquire(0, 0.1, 0.11, 1, "o0").releaseFail(0, 0.2, 0.21).release(0, 0.3, 0.31, true, "o0")
			b.acquire(1, 0.4, 0.41, 2, "o1").release(1, 0.5, 0.51, true, "o1")
		}, Valid, ""},
		{"a failed release of nothing", func(b *builder) {
			b.releaseFail(0, 0.05, 0.06)
			b.acquire(0, 0.1, 0.11, 1, "o0")
			b.acquire(1, 0.3, 0.31, 2, "o1")
		}, Invalid, ""},
		{"the abandoned lock is freed before the holder's next acquire", func(b *builder) {
			// 0 abandons, learns the key went, takes the lock again and
			// keeps it: 1's grant at 0.51 s is a second holder.
			b.acquire(0, 0.1, 0.11, 1, "o0").releaseFail(0, 0.2, 0.21).release(0, 0.3, 0.31, false, "o0")
			b.acquire(0, 0.4, 0.41, 2, "o0b")
			b.acquire(1, 0.45, 0.51, 3, "o1")
		}, Invalid, ""},
		{"the holder takes it again after the rival let go", func(b *builder) {
			b.acquire(0, 0.1, 0.11, 1, "o0").releaseFail(0, 0.2, 0.21).release(0, 0.3, 0.31, false, "o0")
			b.acquire(1, 0.22, 0.25, 2, "o1").release(1, 0.26, 0.27, true, "o1")
			b.acquire(0, 0.4, 0.41, 3, "o0b").release(0, 0.5, 0.51, true, "o0b")
		}, Valid, ""},
	} {
		for _, search := range []bool{false, true} {
			name := tt.name
			if search {
				name += "/searched"
			}
			t.Run(name, func(t *testing.T) {
				b := &builder{}
				if search {
					searched(b)
				}
				tt.build(b)
				r := NewMutex(Options{}).Check(context.Background(), b.build())
				if r.Valid != tt.want {
					t.Fatalf("valid = %v, want %v: %s", r.Valid, tt.want, dump(r.Anomalies))
				}
				direct := r.Stats["keys_decided_directly"] == 1
				if direct == search {
					t.Fatalf("decided directly = %v: %v", direct, r.Stats)
				}
				if tt.story != "" && !search && !strings.Contains(r.Anomalies[0].Explanation, tt.story) {
					t.Fatalf("story %q lacks %q", r.Anomalies[0].Explanation, tt.story)
				}
			})
		}
	}
}

// TestAbandonDescribed: Porcupine's pages name a failed release as left
// to its lease.
func TestAbandonDescribed(t *testing.T) {
	m := mutexModel()
	got := m.DescribeOperation(&mutexOp{kind: mRelease, proc: 3, abandon: true}, nil)
	if got != "3 release (failed: left to its lease)" {
		t.Fatalf("%q", got)
	}
	// An abandon frees its own process's lock and leaves a rival's alone.
	if ok, s := m.Step(4, &mutexOp{kind: mRelease, proc: 3, abandon: true}, nil); !ok || s != 0 {
		t.Fatalf("own: %v %v", ok, s)
	}
	if ok, s := m.Step(2, &mutexOp{kind: mRelease, proc: 3, abandon: true}, nil); !ok || s != 2 {
		t.Fatalf("rival's: %v %v", ok, s)
	}
}

// TestAbandonLetsTheSearchCut: an abandon's interval ends at its
// process's next operation on the key, so the search can cut the key
// after it (an interval open for ever would keep the rest of the key in
// one piece); the verdict is the same either way.
func TestAbandonLetsTheSearchCut(t *testing.T) {
	b := &builder{}
	b.acquire(0, 0.1, 0.11, 1, "o0").releaseFail(0, 0.2, 0.21).release(0, 0.3, 0.31, false, "o0")
	for i := range 4 {
		s := 0.4 + 0.1*float64(i)
		b.acquire(i%2, s, s+0.01, int64(2+i), "o").release(i%2, s+0.02, s+0.03, true, "o")
	}
	// At the end, a process goes on after an op in doubt: a shape the
	// direct decision leaves to the search.
	b.acquireInfo(9, 0.9, 0.91)
	b.pair(9, history.FRelease, "k", 0.92, 0.93, history.Info, nil, nil)
	r := (&mutex{target: 1}).Check(context.Background(), b.build())
	if r.Valid != Valid || r.Stats["keys_decided_directly"] != 0 {
		t.Fatalf("%v %v %s", r.Valid, r.Stats, r.Error)
	}
	if n := r.Stats["partitions"].(int); n < 4 {
		t.Fatalf("%d partitions: the search was not cut after the abandon", n)
	}
}
