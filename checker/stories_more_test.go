package checker

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// lateSaleShop is inventoryLateSale's shop with the stock raised by off
// (no sold-out read when off > 0), process 1's sale of 4 ending at p1End,
// and the critical sections left in doubt that doubt adds.
func lateSaleShop(off int64, p1End float64, doubt func(b *builder)) history.History {
	b := (&builder{}).seed(0, 5+off)
	b.acquire(0, 0.10, 0.11, 0, "o0").sale(0, 0.12, 0.13, 5+off, 0).release(0, 0.14, 0.15, true, "o0")
	doubt(b)
	b.acquire(1, 1.00, 1.01, 0, "o1").sale(1, 1.02, p1End, 4+off, 0).release(1, 1.25, 1.26, true, "o1")
	b.acquire(2, 1.10, 1.11, 0, "o2").sale(2, 1.12, 1.13, 3+off, 0).release(2, 1.14, 1.15, true, "o2")
	b.acquire(0, 1.40, 1.41, 0, "o0b").sale(0, 1.42, 1.43, 3+off, 0).release(0, 1.44, 1.45, true, "o0b")
	b.acquire(1, 1.50, 1.51, 0, "o1b").sale(1, 1.52, 1.53, 2+off, 0).release(1, 1.54, 1.55, true, "o1b")
	b.acquire(2, 1.60, 1.61, 0, "o2b").sale(2, 1.62, 1.63, 1+off, 0).release(2, 1.64, 1.65, true, "o2b")
	return b.final(2.0, off).build()
}

// retiredInfo adds process p's critical section from t, left in doubt
// (info 0.5 s later, with v) and retired.
func retiredInfo(p int, t float64, v *history.Value) func(b *builder) {
	return func(b *builder) {
		b.pair(p, history.FCS, "k", t, t+0.5, history.Info, nil, v).crash(p, t+0.51)
	}
}

func TestInventoryLateSaleVariants(t *testing.T) {
	bothRead := "Processes 2 and 0 both read 3 from the resource for lock k"
	tests := []struct {
		name     string
		h        history.History
		kind     string
		landed   int64
		oversold int64
		lost     int64
		story    []string
		not      []string
	}{
		{name: "its read known", h: lateSaleShop(0, 1.03, retiredInfo(5, 0.22, &history.Value{Read: history.Int64(4)})),
			kind: "oversold", landed: 1, oversold: 2, lost: 2, story: []string{"whose process was retired at 0.73 s: it read 4, as process 1's sale (1.02 s–1.03 s) did,"}},
		{name: "its read was another stock", h: lateSaleShop(0, 1.03, retiredInfo(5, 0.22, &history.Value{Read: history.Int64(5)})),
			kind: "oversold", oversold: 1, lost: 1, story: []string{bothRead}, not: []string{"left in doubt that"}},
		{name: "invoked after the stock left 4", h: lateSaleShop(0, 1.03, retiredInfo(5, 1.04, nil)),
			kind: "oversold", oversold: 1, lost: 1, story: []string{bothRead}},
		{name: "invoked after the second read", h: lateSaleShop(0, 1.03, retiredInfo(5, 1.44, nil)),
			kind: "oversold", oversold: 1, lost: 1, story: []string{bothRead}},
		{name: "the writer of 3 ran on", h: lateSaleShop(0, 1.20, retiredInfo(5, 0.22, nil)),
			kind: "oversold", oversold: 1, lost: 1, story: []string{bothRead}},
		{name: "two candidates", h: lateSaleShop(0, 1.03, func(b *builder) {
			retiredInfo(5, 0.22, nil)(b)
			retiredInfo(6, 0.30, nil)(b)
		}), kind: "oversold", landed: 1, oversold: 2, lost: 2, story: []string{
			"7 items were sold from a stock of 5 on lock k (6 acknowledged, and 1 left in doubt that a later read proves landed, and 1 more whose outcome is unknown may have sold more)",
			"by process 6's critical section, invoked at 0.30 s",
			"(1 other critical section left in doubt could have done the same)"}},
		{name: "never completed", h: lateSaleShop(0, 1.03, func(b *builder) { b.add(0.22, 5, history.Invoke, history.FCS, "k", nil) }),
			kind: "oversold", landed: 1, oversold: 2, lost: 2, story: []string{"by process 5's critical section, invoked at 0.22 s and left in doubt: it must have read 4"},
			not: []string{"retired", "info at"}},
		{name: "an ok reply that said nothing", h: lateSaleShop(0, 1.03, func(b *builder) {
			b.pair(5, history.FCS, "k", 0.22, 1.30, history.OK, nil, nil)
		}), kind: "oversold", landed: 1, oversold: 2, lost: 2, story: []string{"left in doubt (its reply, op "}},
		{name: "an ok reply that said nothing, returned before", h: lateSaleShop(0, 1.03, func(b *builder) {
			b.pair(5, history.FCS, "k", 0.22, 0.30, history.OK, nil, nil)
		}), kind: "oversold", oversold: 1, lost: 1, story: []string{bothRead}},
		{name: "nothing oversold", h: lateSaleShop(5, 1.03, retiredInfo(5, 0.22, nil)),
			kind: "lost-decrement", landed: 1, lost: 2, story: []string{
				"7 items were sold from a stock of 10 on lock k (6 acknowledged, and 1 left in doubt that a later read proves landed), so the final stock should be 3, but it is 5: 2 decrements were lost. The stock was set back to 8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewInventory().Check(context.Background(), tt.h)
			onlyAnomaly(t, r, tt.kind)
			if r.Stats["sales_landed_in_doubt"] != tt.landed || r.Stats["oversold"] != tt.oversold || r.Stats["lost_decrements"] != tt.lost {
				t.Errorf("stats %v, want landed %d oversold %d lost %d", r.Stats, tt.landed, tt.oversold, tt.lost)
			}
			text := r.Anomalies[0].Explanation
			assertTells(t, text, tt.story)
			for _, s := range tt.not {
				if strings.Contains(text, s) {
					t.Errorf("story has %q:\n%s", s, text)
				}
			}
		})
	}
}

// TestInventoryLateSaleRun: the late write set the stock back to 3, and
// every stock from 3 down to 2 was sold from twice.
func TestInventoryLateSaleRun(t *testing.T) {
	b := (&builder{}).seed(0, 5)
	b.acquire(0, 0.10, 0.11, 0, "o0").sale(0, 0.12, 0.13, 5, 0).release(0, 0.14, 0.15, true, "o0")
	retiredInfo(5, 0.22, nil)(b)
	b.acquire(1, 1.00, 1.01, 0, "o1").sale(1, 1.02, 1.03, 4, 0).release(1, 1.04, 1.05, true, "o1")
	b.acquire(2, 1.10, 1.11, 0, "o2").sale(2, 1.12, 1.13, 3, 0).release(2, 1.14, 1.15, true, "o2")
	b.acquire(1, 1.20, 1.21, 0, "o1a").sale(1, 1.22, 1.23, 2, 0).release(1, 1.24, 1.25, true, "o1a")
	b.acquire(0, 1.40, 1.41, 0, "o0b").sale(0, 1.42, 1.43, 3, 0).release(0, 1.44, 1.45, true, "o0b")
	b.acquire(2, 1.50, 1.51, 0, "o2b").sale(2, 1.52, 1.53, 2, 0).release(2, 1.54, 1.55, true, "o2b")
	b.acquire(1, 1.60, 1.61, 0, "o1b").sale(1, 1.62, 1.63, 1, 0).release(1, 1.64, 1.65, true, "o1b")
	r := NewInventory().Check(context.Background(), b.final(2.0, 0).build())
	if r.Valid != Invalid || len(r.Anomalies) != 1 || r.Stats["oversold"] != int64(3) || r.Stats["lost_decrements"] != int64(3) {
		t.Fatalf("%v %v %v\n%s", r.Valid, kinds(r.Anomalies, false), r.Stats, dump(r.Anomalies))
	}
	for _, s := range []string{"8 items were sold from a stock of 5", "The stock was set back to 3 by process 5's",
		"Each stock from 3 down to 2 was then sold from more than once (2 lost decrements)."} {
		if !strings.Contains(r.Anomalies[0].Explanation, s) {
			t.Errorf("story lacks %q:\n%s", s, r.Anomalies[0].Explanation)
		}
	}
	if p := r.Anomalies[0].Processes; len(p) != 4 || p[0] != 5 {
		t.Errorf("processes %v", p)
	}
}

// fencedLate is fencedLateWrite(true) with knobs: process 1's token and
// when its critical section (reading 1) ends, when process 0's second
// critical section (reading 2) starts, and the critical sections left in
// doubt that doubt adds.
func fencedLate(tok1 int64, p1End, p0Start float64, doubt func(b *builder)) history.History {
	b := (&builder{}).acquire(0, 0.10, 0.11, 1, "o0").cs(0, 0.12, 0.13, 0, 1).release(0, 0.14, 0.15, true, "o0")
	doubt(b)
	b.acquire(1, 1.00, 1.01, tok1, "o1").cs(1, 1.02, p1End, 1, tok1).release(1, 1.25, 1.26, true, "o1")
	b.acquire(2, 1.10, 1.11, 4, "o2").cs(2, 1.12, 1.13, 2, 4).release(2, 1.14, 1.15, true, "o2")
	b.acquire(0, p0Start-0.01, p0Start-0.005, 5, "o0b").cs(0, p0Start, 1.43, 2, 5).release(0, 1.44, 1.45, true, "o0b")
	return b.build()
}

// inDoubt adds process p's critical section with token tok from t, left in
// doubt (info 0.5 s later, with v) and retired.
func inDoubt(p int, t float64, tok int64, v *history.Value) func(b *builder) {
	return func(b *builder) {
		b.pair(p, history.FCS, "k", t, t+0.5, history.Info, &history.Value{Token: tok}, v).crash(p, t+0.51)
	}
}

func TestFencingLateVariants(t *testing.T) {
	tests := []struct {
		name  string
		h     history.History
		late  bool     // a late stale write is named
		story []string // in the late story
	}{
		{name: "read known", late: true, h: fencedLate(3, 1.03, 1.42, inDoubt(5, 0.22, 2, &history.Value{Read: history.Int64(1), Wrote: history.Int64(2)})),
			story: []string{"only process 5's write could have written 2 then"}},
		{name: "read another value", h: fencedLate(3, 1.03, 1.42, inDoubt(5, 0.22, 2, &history.Value{Read: history.Int64(0), Wrote: history.Int64(1)}))},
		{name: "the two reads overlapped", h: fencedLate(3, 1.03, 1.125, inDoubt(5, 0.22, 2, nil))},
		{name: "the writer of 2 ran on", h: fencedLate(3, 1.20, 1.42, inDoubt(5, 0.22, 2, nil))},
		{name: "invoked after the register left 1", h: fencedLate(3, 1.03, 1.42, inDoubt(5, 1.04, 2, nil))},
		{name: "invoked after the second read", h: fencedLate(3, 1.03, 1.42, inDoubt(5, 1.44, 2, nil))},
		{name: "a candidate with a fresh token", h: fencedLate(3, 1.03, 1.42, func(b *builder) {
			inDoubt(5, 0.22, 2, nil)(b)
			inDoubt(6, 0.30, 9, nil)(b)
		})},
		{name: "two stale candidates", late: true, h: fencedLate(3, 1.03, 1.42, func(b *builder) {
			inDoubt(5, 0.22, 2, nil)(b)
			inDoubt(6, 0.30, 2, nil)(b)
		}), story: []string{"Process 6's write with token 2, left in doubt (invoked at 0.30 s, info at 0.80 s, op ",
			"only process 6's write or 1 other critical section left in doubt, all with tokens below token 4, could have written 2 then"}},
		{name: "never completed", late: true, h: fencedLate(3, 1.03, 1.42, func(b *builder) {
			b.add(0.22, 5, history.Invoke, history.FCS, "k", &history.Value{Token: 2})
		}), story: []string{"Process 5's write with token 2, left in doubt (invoked at 0.22 s, never completed) landed after"}},
		{name: "a higher token seen before", late: true, h: fencedLate(6, 1.03, 1.42, inDoubt(5, 0.22, 2, nil)),
			story: []string{"landed after the resource had accepted process 1's write with token 6 (1.02 s–1.03 s): process 0's critical section (1.42 s–1.43 s) read 2 after process 2 had written 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewFencing().Check(context.Background(), tt.h)
			var late []Anomaly
			for _, a := range r.Anomalies {
				if strings.Contains(a.Explanation, "left in doubt") {
					late = append(late, a)
				}
			}
			if len(late) != map[bool]int{true: 1}[tt.late] {
				t.Fatalf("late stories %d, want late %v\n%s", len(late), tt.late, dump(r.Anomalies))
			}
			if !tt.late {
				return
			}
			if r.Valid != Invalid {
				t.Errorf("valid %v", r.Valid)
			}
			assertTells(t, late[0].Explanation, tt.story)
		})
	}
}

// TestInventoryLateSaleCounted: one sale left in doubt is the only
// candidate for two stocks read twice; it counts once among those sold.
func TestInventoryLateSaleCounted(t *testing.T) {
	b := (&builder{}).seed(0, 8)
	b.acquire(0, 0.10, 0.11, 0, "o0").sale(0, 0.12, 0.13, 8, 0).release(0, 0.14, 0.15, true, "o0")
	retiredInfo(5, 0.22, nil)(b)
	for i, s := range []struct {
		p     int
		stock int64
	}{{1, 7}, {2, 6}, {0, 6}, {1, 5}, {2, 4}, {0, 3}, {1, 3}} {
		t0 := 1.0 + 0.1*float64(i)
		b.sale(s.p, t0, t0+0.01, s.stock, 0)
	}
	r := NewInventory().Check(context.Background(), b.final(2.0, 2).build())
	if r.Stats["sales_landed_in_doubt"] != int64(1) || r.Stats["sales"] != int64(8) || r.Stats["oversold"] != int64(1) {
		t.Fatalf("stats %v\n%s", r.Stats, dump(r.Anomalies))
	}
}

// TestLateStoriesPinned pins what the late stories name: their processes
// and ops, where the story ends, and the fault sentence's stale process.
func TestLateStoriesPinned(t *testing.T) {
	ctx := context.Background()
	r := NewInventory().Check(ctx, inventoryLateSale())
	an := r.Anomalies[0]
	if !slices.Equal(an.Processes, []int{5, 1, 2, 0}) || !slices.Equal(an.Ops, []int{1, 10, 11, 16, 17, 22, 23, 28, 29, 51}) ||
		!strings.HasSuffix(an.Explanation, "proves it landed, as no acknowledged sale wrote 3 then.") || an.Start != at(0.22) {
		t.Errorf("inventory: %v %v %v %q", an.Processes, an.Ops, an.Start, an.Explanation)
	}
	f := NewFencing().Check(ctx, fencedLateWrite(true)).Anomalies[0]
	if !slices.Equal(f.Processes, []int{5, 2, 0}) || !slices.Equal(f.Ops, []int{8, 9, 20, 21, 26, 27}) || f.Start != at(0.22) || f.End != at(1.43) {
		t.Errorf("fencing: %v %v %v %v", f.Processes, f.Ops, f.Start, f.End)
	}
	f = lateOf(t, NewFencing().Check(ctx, fencedLate(6, 1.03, 1.42, inDoubt(5, 0.22, 2, nil))))
	if !slices.Equal(f.Processes, []int{5, 1, 2, 0}) || !slices.Equal(f.Ops, []int{6, 7, 12, 13, 16, 17, 24, 25}) {
		t.Errorf("fencing, a higher token seen before: %v %v", f.Processes, f.Ops)
	}
	never := fencedLate(3, 1.03, 1.42, func(b *builder) { b.add(0.22, 5, history.Invoke, history.FCS, "k", &history.Value{Token: 2}) })
	if f := lateOf(t, NewFencing().Check(ctx, never)); !slices.Equal(f.Ops, []int{6, 13, 14, 21, 22}) {
		t.Errorf("fencing, never completed: ops %v", f.Ops)
	}
	neverSale := lateSaleShop(0, 1.03, func(b *builder) { b.add(0.22, 5, history.Invoke, history.FCS, "k", nil) })
	if an := NewInventory().Check(ctx, neverSale).Anomalies[0]; slices.Contains(an.Ops, -1) {
		t.Errorf("inventory, never completed: ops %v", an.Ops)
	}
	paused := lateSaleShop(0, 1.03, func(b *builder) {
		retiredInfo(5, 0.22, nil)(b)
		b.fault(history.FPause, 0.25, 1.35, 5)
	})
	if an := NewInventory().Check(ctx, paused).Anomalies[0]; !strings.Contains(an.Explanation, "A pause of process 5 from 0.25 s to 1.35 s was in force: its lease ran out while it was stopped.") {
		t.Errorf("inventory, paused: %q", an.Explanation)
	}
}

// lateOf returns the one late stale-write story of r.
func lateOf(t *testing.T, r Result) Anomaly {
	t.Helper()
	for _, a := range r.Anomalies {
		if strings.Contains(a.Explanation, "left in doubt") {
			return a
		}
	}
	t.Fatalf("no late story:\n%s", dump(r.Anomalies))
	return Anomaly{}
}

// TestLateBoundaries: the instants where a late story's conditions meet
// (closed intervals: ops that touch overlap).
func TestLateBoundaries(t *testing.T) {
	ctx := context.Background()
	sale := func(h history.History) bool {
		return strings.Contains(NewInventory().Check(ctx, h).Anomalies[0].Explanation, "left in doubt that")
	}
	fence := func(h history.History) bool {
		for _, a := range NewFencing().Check(ctx, h).Anomalies {
			if strings.Contains(a.Explanation, "left in doubt") {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		// The writer of 3 (4) returned as the first sale of 3 (2) began.
		{"sale: writer returned at the first's call", sale(lateSaleShop(0, 1.12, retiredInfo(5, 0.22, nil))), true},
		{"write: writer returned at the first's call", fence(fencedLate(3, 1.12, 1.42, inDoubt(5, 0.22, 2, nil))), true},
		// The candidate was invoked as the writer of 3 (2) returned.
		{"sale: invoked as the stock left 4", sale(lateSaleShop(0, 1.03, retiredInfo(5, 1.03, nil))), true},
		{"write: invoked as the register left 1", fence(fencedLate(3, 1.03, 1.42, inDoubt(5, 1.03, 2, nil))), true},
		// The two readers touch: a race, not a late write.
		{"write: the readers touch", fence(fencedLate(3, 1.03, 1.13, inDoubt(5, 0.22, 2, nil))), false},
		// A candidate with the token the resource had seen may be fresh.
		{"write: a candidate with the seen token", fence(fencedLate(3, 1.03, 1.42, func(b *builder) {
			inDoubt(5, 0.22, 2, nil)(b)
			inDoubt(6, 0.30, 4, nil)(b)
		})), false},
		// An ok reply that said nothing, returned as the first sale of 3
		// began: it may have landed after.
		{"sale: an ok reply returned at the first's call", sale(lateSaleShop(0, 1.03, func(b *builder) {
			b.pair(5, history.FCS, "k", 0.22, 1.12, history.OK, nil, nil)
		})), true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: late story %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	// Of two candidates invoked at one instant, the first recorded is named.
	two := func(b *builder) {
		retiredInfo(5, 0.22, nil)(b)
		retiredInfo(6, 0.22, nil)(b)
	}
	if an := NewInventory().Check(ctx, lateSaleShop(0, 1.03, two)).Anomalies[0]; !strings.Contains(an.Explanation, "by process 5's critical section") {
		t.Errorf("sale, two at one instant: %q", an.Explanation)
	}
	twoW := func(b *builder) {
		inDoubt(5, 0.22, 2, nil)(b)
		inDoubt(6, 0.22, 2, nil)(b)
	}
	if an := lateOf(t, NewFencing().Check(ctx, fencedLate(3, 1.03, 1.42, twoW))); !strings.HasPrefix(an.Explanation, "Process 5's write") {
		t.Errorf("write, two at one instant: %q", an.Explanation)
	}
}

// TestFencingLateSaleAndPair: a late stale write is found in a fenced
// inventory (the stock goes down), and with only the two accepted critical
// sections that read one value.
func TestFencingLateSaleAndPair(t *testing.T) {
	ctx := context.Background()
	b := (&builder{}).seed(0, 5)
	b.acquire(0, 0.10, 0.11, 1, "o0").sale(0, 0.12, 0.13, 5, 1).release(0, 0.14, 0.15, true, "o0")
	b.acquire(5, 0.20, 0.21, 2, "o5").pair(5, history.FCS, "k", 0.22, 0.72, history.Info, &history.Value{Token: 2}, nil).crash(5, 0.73)
	b.acquire(1, 1.00, 1.01, 3, "o1").sale(1, 1.02, 1.03, 4, 3).release(1, 1.04, 1.05, true, "o1")
	b.acquire(2, 1.10, 1.11, 4, "o2").sale(2, 1.12, 1.13, 3, 4).release(2, 1.14, 1.15, true, "o2")
	b.acquire(0, 1.40, 1.41, 5, "o0b").sale(0, 1.42, 1.43, 3, 5).release(0, 1.44, 1.45, true, "o0b")
	an := lateOf(t, NewFencing().Check(ctx, b.final(2, 2).build()))
	if !strings.Contains(an.Explanation, "process 0's critical section (1.42 s–1.43 s) read 3 after process 2 had written 2") {
		t.Errorf("inventory: %q", an.Explanation)
	}
	p := (&builder{}).pair(5, history.FCS, "k", 0.05, 0.5, history.Info, &history.Value{Token: 2}, nil)
	p.cs(1, 0.10, 0.20, 5, 3).cs(2, 0.60, 0.70, 5, 4)
	if an := lateOf(t, NewFencing().Check(ctx, p.build())); !strings.Contains(an.Explanation, "Process 5's write with token 2") {
		t.Errorf("pair: %q", an.Explanation)
	}
}

// TestLateSaleEdges: without the final read the lost decrements are
// counted from the reads (the late sale's among them); sales that touch
// raced; a plain lost decrement still blames the two holders.
func TestLateSaleEdges(t *testing.T) {
	ctx := context.Background()
	var h history.History
	for _, op := range inventoryLateSale() {
		if op.F != history.FFinal {
			op.Index = len(h)
			h = append(h, op)
		}
	}
	if r := NewInventory().Check(ctx, h); r.Stats["lost_decrements"] != int64(2) || r.Stats["oversold"] != int64(2) {
		t.Errorf("no final read: %v", r.Stats)
	}
	touch := (&builder{}).seed(0, 5)
	touch.sale(0, 0.12, 0.13, 5, 0)
	retiredInfo(5, 0.22, nil)(touch)
	touch.sale(1, 1.02, 1.03, 4, 0).sale(2, 1.12, 1.13, 3, 0).sale(0, 1.13, 1.43, 3, 0)
	if an := NewInventory().Check(ctx, touch.final(2, 2).build()).Anomalies[0]; strings.Contains(an.Explanation, "left in doubt that") {
		t.Errorf("touching sales: %q", an.Explanation)
	}
	if an := NewInventory().Check(ctx, inventoryLost()).Anomalies[0]; !strings.Contains(an.Explanation, "1 decrement was lost when two holders sold from the same read") {
		t.Errorf("plain lost decrement: %q", an.Explanation)
	}
}
