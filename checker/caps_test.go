package checker

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// TestListingCaps: every checker lists at most maxListed anomalies of a
// kind and counts all of them; one more than the cap is where an
// off-by-one shows.
func TestListingCaps(t *testing.T) {
	const n = maxListed + 1
	count := func(as []Anomaly, kind string) int {
		c := 0
		for _, a := range as {
			if a.Kind == kind || kind == "" {
				c++
			}
		}
		return c
	}
	tests := []struct {
		name  string
		c     Checker
		h     func() history.History
		kind  string
		stat  string
		total any
	}{
		{"token order", NewFencing(), func() history.History {
			b := &builder{}
			for i := range n + 1 {
				t0 := float64(i)
				b.acquire(i%3, t0, t0+0.1, int64(5000-i), "o").release(i%3, t0+0.2, t0+0.3, true, "o")
			}
			return b.build()
		}, "token-order", "token_order_violations", n},
		{"stale writes in sequence", NewFencing(), func() history.History {
			b := &builder{}
			for i := range n + 1 {
				b.write(i%3, float64(i), float64(i)+0.5, int64(5000-i))
			}
			return b.build()
		}, "stale-write", "stale_writes_accepted", n},
		{"stale writes that read the same value", NewFencing(), func() history.History {
			b := &builder{}
			for i := range n {
				t0, tok := float64(i), int64(2*i+2)
				b.cs(0, t0, t0+0.5, int64(10*i), tok).cs(1, t0+0.1, t0+0.6, int64(10*i), tok-1)
			}
			return b.build()
		}, "stale-write", "stale_writes_accepted", n},
		{"stale writes that read a newer write", NewFencing(), func() history.History {
			b := &builder{}
			for i := range n {
				t0, tok := float64(i), int64(2*i+2)
				b.cs(0, t0, t0+0.5, int64(10*i), tok).cs(1, t0+0.1, t0+0.6, int64(10*i+1), tok-1)
			}
			return b.build()
		}, "stale-write", "stale_writes_accepted", n},
		{"refused writes", NewFencing(), func() history.History {
			b := &builder{}
			for i := range n {
				b.csRejected(i%3, float64(i), float64(i)+0.5, 0, 1, 2)
			}
			return b.build()
		}, "stale-write-rejected", "stale_writes_rejected", n},
		{"double holders", NewOverlap(Options{}), overlappingPairs, "double-holder", "overlapped_holds", n},
		{"double holders, mutex", NewMutex(Options{}), overlappingPairs, "nonlinearizable", "", nil},
		{"foreign releases", NewOverlap(Options{}), func() history.History {
			b := &builder{}
			for i := range n {
				t0, own := float64(i), fmt.Sprintf("o%d", i)
				b.acquire(0, t0, t0+0.1, 0, own)
				b.pair(0, history.FRelease, "k", t0+0.2, t0+0.3, history.OK, &history.Value{Owner: own},
					&history.Value{Released: history.Bool(true), Extra: &history.Extra{DeletedOwner: "x" + own}})
			}
			return b.build()
		}, "foreign-release", "foreign_releases", n},
		{"sales from an empty stock", NewInventory(), func() history.History {
			b := (&builder{}).seed(0, 0)
			for i := range n {
				b.sale(i%3, float64(i+1), float64(i+1)+0.5, 0, 0)
			}
			return b.build()
		}, "", "oversold", int64(n)}, // one oversold and the mismatches: maxListed in all
		{"stuck locks", NewLiveness(Options{StuckBound: sec(0.5)}), func() history.History {
			b := &builder{}
			for i := range n {
				t0 := float64(2 * i)
				b.acquireFail(1, t0+0.5, t0+0.6).acquire(0, t0+1, t0+1.01, 0, "o").release(0, t0+1.02, t0+1.03, true, "o")
			}
			return b.build()
		}, "stuck-lock", "stuck_locks", n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.c.Check(context.Background(), tt.h())
			if got := count(r.Anomalies, tt.kind); got != maxListed {
				t.Errorf("%d %s anomalies listed, want %d", got, tt.kind, maxListed)
			}
			if tt.stat != "" && fmt.Sprint(r.Stats[tt.stat]) != fmt.Sprint(tt.total) {
				t.Errorf("%s = %v, want %v", tt.stat, r.Stats[tt.stat], tt.total)
			}
		})
	}
}

// overlappingPairs: maxListed+1 times, process 0 holds the lock while
// process 1 is granted it.
func overlappingPairs() history.History {
	b := &builder{}
	for i := range maxListed + 1 {
		t0 := float64(i)
		b.acquire(0, t0, t0+0.1, 0, "o0").acquire(1, t0+0.2, t0+0.3, 0, "o1").
			release(1, t0+0.4, t0+0.45, true, "o1").release(0, t0+0.5, t0+0.55, true, "o0")
	}
	return b.build()
}

func TestDoubleHolderOpsCap(t *testing.T) {
	// Process 0 holds the lock throughout while 60 others are granted it
	// one after another: the anomaly lists at most maxOps ops.
	b := (&builder{}).acquire(0, 0, 0.1, 0, "o0")
	for i := range 60 {
		t0 := 1 + float64(i)
		b.acquire(1+i, t0, t0+0.1, 0, "o").release(1+i, t0+0.2, t0+0.3, true, "o")
	}
	r := NewOverlap(Options{}).Check(context.Background(), b.build())
	if len(r.Anomalies) != 1 || len(r.Anomalies[0].Ops) != maxOps {
		t.Fatalf("%d anomalies, ops %v", len(r.Anomalies), r.Anomalies)
	}
	// Once 0 releases at the end, its release is listed too; the mutex
	// checker lists each hold's grant and release, up to maxOps.
	h := b.release(0, 100, 100.1, true, "o0").build()
	r = NewOverlap(Options{}).Check(context.Background(), h)
	if len(r.Anomalies) != 1 || len(r.Anomalies[0].Ops) != maxOps+1 {
		t.Fatalf("overlap: %d anomalies, ops %v", len(r.Anomalies), r.Anomalies)
	}
	r = NewMutex(Options{}).Check(context.Background(), h)
	if len(r.Anomalies) != 1 || len(r.Anomalies[0].Ops) != maxOps {
		t.Fatalf("mutex: %d anomalies, %d ops", len(r.Anomalies), len(r.Anomalies[0].Ops))
	}
}

// TestSearchListingCap: a key left to the search with more than maxListed
// failing chunks: maxListed anomalies, the first maxVisualized explained from
// Porcupine's longest prefix, the rest from the chunk alone, in order of
// time.
func TestSearchListingCap(t *testing.T) {
	b := &builder{}
	for i := range maxListed + 1 {
		t0 := 10 * float64(i)
		b.acquire(0, t0, t0+1, 0, "o0").acquire(1, t0+2, t0+3, 0, "o1").
			release(0, t0+4, t0+5, true, "o0").release(1, t0+6, t0+7, true, "o1")
	}
	// Process 2 goes on after a release in doubt: the key is searched.
	end := 10 * float64(maxListed+1)
	b.pair(2, history.FRelease, "k", end, end+1, history.Info, &history.Value{Owner: "o2"}, nil)
	b.acquire(2, end+2, end+3, 0, "o2")
	c := &mutex{opts: Options{}, target: 2}
	r := c.Check(context.Background(), b.build())
	if r.Valid != Invalid || len(r.Anomalies) != maxListed || r.Stats["partitions_failed"].(int) <= maxListed {
		t.Fatalf("%v: %d anomalies, stats %v, error %q", r.Valid, len(r.Anomalies), r.Stats, r.Error)
	}
	for i, an := range r.Anomalies {
		if i > 0 && an.Start < r.Anomalies[i-1].Start {
			t.Fatalf("anomaly %d starts at %v, before the one before it", i, an.Start)
		}
		explained := strings.Contains(an.Explanation, "cannot be placed")
		if explained != (i < maxVisualized) {
			t.Fatalf("anomaly %d: %q", i, an.Explanation)
		}
	}
}
