package checker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// Inventory history builders: the controller's seed and final ops, and
// critical sections that sell one item (read s, wrote s-1) or find the
// stock sold out (read 0, no write).

func (b *builder) seed(t float64, stock int64) *builder {
	v := &history.Value{Wrote: history.Int64(stock)}
	return b.pair(history.NemesisProcess, history.FSeed, "k", t, t+0.001, history.OK, v, v)
}

func (b *builder) final(t float64, stock int64) *builder {
	return b.pair(history.NemesisProcess, history.FFinal, "k", t, t+0.001, history.OK, nil,
		&history.Value{Read: history.Int64(stock)})
}

// sale adds an accepted critical section that read stock and wrote stock-1.
func (b *builder) sale(p int, t0, t1 float64, stock, token int64) *builder {
	return b.pair(p, history.FCS, "k", t0, t1, history.OK, &history.Value{Token: token},
		&history.Value{Read: history.Int64(stock), Wrote: history.Int64(stock - 1), Token: token})
}

// soldOut adds an accepted critical section that read 0 and wrote nothing.
func (b *builder) soldOut(p int, t0, t1 float64) *builder {
	return b.pair(p, history.FCS, "k", t0, t1, history.OK, nil,
		&history.Value{Read: history.Int64(0), Extra: &history.Extra{Detail: "sold out"}})
}

// shop adds n clean cycles from time t selling the stock down from stock,
// 50 ms each, by processes 0..2 in turn, with tokens from token (0: none).
func (b *builder) shop(n int, t float64, stock, token int64) *builder {
	for i := range n {
		p, t0 := i%3, t+float64(i)*0.05
		tok := int64(0)
		if token != 0 {
			tok = token + int64(i)
		}
		owner := fmt.Sprintf("o%d-%d-%d", p, tok, i)
		b.acquire(p, t0, t0+0.005, tok, owner)
		b.acquireFail((p+1)%3, t0+0.002, t0+0.012)
		if s := stock - int64(i); s > 0 {
			b.sale(p, t0+0.015, t0+0.025, s, tok)
		} else {
			b.soldOut(p, t0+0.015, t0+0.025)
		}
		b.release(p, t0+0.03, t0+0.035, true, owner)
	}
	return b
}

// inventoryClean: a stock of 5 sold out by clean cycles, then sold-out
// reads; the final stock is 0.
func inventoryClean() history.History {
	return (&builder{}).seed(0, 5).shop(8, 0.01, 5, 0).final(0.5, 0).build()
}

// inventoryPaused is the oversell story: a stock of 3; process 3 takes the
// lock, reads 2 and is paused from 0.40 s to 3.40 s; its lease runs out,
// processes 1 and 2 sell the last two items, 3 resumes and writes 1 (a
// stale sale), process 0 sells that item again, and the stock ends at 0
// after 5 sales. cs3 gives 3's critical section.
func inventoryPaused(fenced bool, cs3 func(b *builder)) history.History {
	tok := func(t int64) int64 {
		if fenced {
			return t
		}
		return 0
	}
	b := (&builder{}).seed(0, 3)
	b.acquire(0, 0.10, 0.11, tok(1), "o0").sale(0, 0.12, 0.13, 3, tok(1)).release(0, 0.14, 0.15, true, "o0")
	b.acquire(3, 0.30, 0.31, tok(2), "o3")
	b.fault(history.FPause, 0.40, 3.40, 3)
	b.acquire(1, 1.30, 1.35, tok(3), "o1").sale(1, 1.36, 1.40, 2, tok(3)).release(1, 1.45, 1.50, true, "o1")
	b.acquire(2, 1.60, 1.61, tok(4), "o2").sale(2, 1.62, 1.63, 1, tok(4)).release(2, 1.64, 1.65, true, "o2")
	cs3(b)
	b.release(3, 3.50, 3.51, false, "o3")
	b.acquire(0, 3.60, 3.61, tok(5), "o0b")
	if fenced {
		b.soldOut(0, 3.62, 3.63)
	} else {
		b.sale(0, 3.62, 3.63, 1, 0)
	}
	b.release(0, 3.64, 3.65, true, "o0b")
	b.acquire(1, 3.70, 3.71, tok(6), "o1b").soldOut(1, 3.72, 3.73).release(1, 3.74, 3.75, true, "o1b")
	b.final(4.0, 0)
	return b.build()
}

func inventoryOversold() history.History {
	return inventoryPaused(false, func(b *builder) { b.sale(3, 0.32, 3.41, 2, 0) })
}

func inventoryFencedRejected() history.History {
	return inventoryPaused(true, func(b *builder) {
		b.pair(3, history.FCS, "k", 0.32, 3.41, history.Fail, &history.Value{Token: 2},
			&history.Value{Read: history.Int64(2), Token: 2, Extra: &history.Extra{Rejected: "write", MaxToken: 4}})
	})
}

// inventoryLost: a stock of 100; two holders sell from the same read of
// 100 (one paused past its lease); the stock ends at 99 after 2 sales: a
// lost decrement, nothing oversold.
func inventoryLost() history.History {
	b := (&builder{}).seed(0, 100)
	b.acquire(3, 0.30, 0.31, 0, "o3")
	b.fault(history.FPause, 0.40, 3.40, 3)
	b.acquire(1, 1.30, 1.35, 0, "o1").sale(1, 1.36, 1.40, 100, 0).release(1, 1.45, 1.50, true, "o1")
	b.sale(3, 0.32, 3.41, 100, 0).release(3, 3.50, 3.51, false, "o3")
	return b.final(4.0, 99).build()
}

// watchInventory is a run of a design with no lock (redis-watch-inventory):
// both processes are granted at once and sell concurrently, each from its
// own read, as the optimistic transaction makes them.
func watchInventory() history.History {
	b := (&builder{}).seed(0, 2)
	b.acquire(0, 0.10, 0.11, 0, "o0").acquire(1, 0.10, 0.11, 0, "o1")
	b.sale(0, 0.12, 0.20, 2, 0).sale(1, 0.13, 0.30, 1, 0)
	b.release(0, 0.31, 0.32, true, "o0").release(1, 0.31, 0.32, true, "o1")
	return b.final(1, 0).build()
}

func TestInventory(t *testing.T) {
	info := func(final int64) history.History {
		b := (&builder{}).seed(0, 3).shop(1, 0.01, 3, 0)
		b.acquire(4, 0.1, 0.11, 0, "o4").csInfo(4, 0.12, 0.5).crash(4, 0.51)
		return b.final(1.0, final).build()
	}
	// readInfo: a critical section in doubt that read 2 items and sent its
	// write with an unknown outcome (redis-watch-inventory's EXEC timed
	// out), so it did not say what it wrote.
	readInfo := func(read, final int64) history.History {
		b := (&builder{}).seed(0, 3).shop(1, 0.01, 3, 0)
		b.acquire(4, 0.1, 0.11, 0, "o4").pair(4, history.FCS, "k", 0.12, 0.5, history.Info, nil,
			&history.Value{Read: history.Int64(read)}).crash(4, 0.51)
		return b.final(1.0, final).build()
	}
	noFinal := (&builder{}).seed(0, 3).shop(2, 0.01, 3, 0).build()
	unseeded := (&builder{}).seed(0, 3).shop(1, 0.01, 3, 0).pair(5, history.FCS, "j", 0.2, 0.3, history.OK, nil,
		&history.Value{Read: history.Int64(0), Extra: &history.Extra{Detail: "sold out"}}).final(1, 2).build()
	shrunk := (&builder{}).seed(0, 3).final(1, 2).build()
	oversoldNoFinal := (&builder{}).seed(0, 1).shop(1, 0.01, 1, 0).sale(4, 0.2, 0.3, 1, 0).build()
	odd := (&builder{}).seed(0, 3).pair(0, history.FCS, "k", 0.1, 0.2, history.OK, nil,
		&history.Value{Read: history.Int64(3), Wrote: history.Int64(1)}).final(1, 1).build()
	tests := []struct {
		name      string
		h         history.History
		valid     Validity
		kinds     []string
		oversold  int64
		lost      int64
		sales     int64
		story     []string
		errorText string
	}{
		{name: "clean", h: inventoryClean(), valid: Valid, sales: 5},
		{name: "oversold", h: inventoryOversold(), valid: Invalid, kinds: []string{"oversold"}, oversold: 2, lost: 2, sales: 5,
			story: []string{"5 items were sold from a stock of 3 on lock k: 2 oversold; the final stock is 0, not -2",
				"2 decrements were lost", "both read 2", "pause of process 3 from 0.40 s to 3.40 s"}},
		{name: "fenced stale sale refused", h: inventoryFencedRejected(), valid: Valid, sales: 3},
		{name: "lost decrement", h: inventoryLost(), valid: Invalid, kinds: []string{"lost-decrement"}, lost: 1, sales: 2,
			story: []string{"2 items were sold from a stock of 100 on lock k, so the final stock should be 98, but it is 99: 1 decrement was lost",
				"Processes 3 and 1 both read 100"}},
		{name: "info sale landed", h: info(1), valid: Valid, sales: 1},
		{name: "info sale did not land", h: info(2), valid: Valid, sales: 1},
		{name: "stock fell by more than the sales", h: info(0), valid: Invalid, kinds: []string{"stock-mismatch"}, sales: 1,
			story: []string{"should be 1 to 2, but it is 0"}},
		{name: "info sale with its read landed", h: readInfo(2, 1), valid: Valid, sales: 1},
		{name: "info sale with its read did not land", h: readInfo(2, 2), valid: Valid, sales: 1},
		{name: "info sale with its read, stock fell by more", h: readInfo(2, 0), valid: Invalid, kinds: []string{"stock-mismatch"}, sales: 1,
			story: []string{"should be 1 to 2, but it is 0"}},
		{name: "info sold-out read sold nothing", h: readInfo(0, 1), valid: Invalid, kinds: []string{"stock-mismatch"}, sales: 1,
			story: []string{"should be 2, but it is 1"}},
		{name: "no final stock", h: noFinal, valid: Unknown, sales: 2, errorText: "final stock of lock k was not read"},
		{name: "key never seeded", h: unseeded, valid: Unknown, sales: 1, errorText: "no seed op for lock j"},
		{name: "stock fell with no sale", h: shrunk, valid: Invalid, kinds: []string{"stock-mismatch"},
			story: []string{"0 items were sold from a stock of 3 on lock k, so the final stock should be 3, but it is 2"}},
		{name: "oversold, final not read", h: oversoldNoFinal, valid: Invalid, kinds: []string{"oversold"}, oversold: 1, lost: 1, sales: 2,
			story: []string{"2 items were sold from a stock of 1 on lock k: 1 oversold; the final stock was not read: 1 decrement was lost"}},
		{name: "a sale of two items", h: odd, valid: Invalid, kinds: []string{"stock-mismatch"}, sales: 1,
			story: []string{"read a stock of 3 and left 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewInventory().Check(context.Background(), tt.h)
			if r.Valid != tt.valid || !slices.Equal(kinds(r.Anomalies, false), orEmpty(tt.kinds)) {
				t.Fatalf("valid %v kinds %v, want %v %v (error %q)\n%s", r.Valid, kinds(r.Anomalies, false), tt.valid, tt.kinds, r.Error, dump(r.Anomalies))
			}
			if r.Stats["oversold"] != tt.oversold || r.Stats["lost_decrements"] != tt.lost || r.Stats["sales"] != tt.sales {
				t.Errorf("stats %v, want oversold %d lost %d sales %d", r.Stats, tt.oversold, tt.lost, tt.sales)
			}
			text := ""
			for _, a := range r.Anomalies {
				text += a.Explanation + "\n"
			}
			assertTells(t, text, tt.story)
			if !strings.Contains(r.Error, tt.errorText) {
				t.Errorf("error %q, want it to contain %q", r.Error, tt.errorText)
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestDefaultInventory: Default judges an inventory history with the
// inventory checker and leaves the register's resource checker out (it
// would read every sale as a lost update of a register counting up), and
// leaves a register history's checkers as they were.
func TestDefaultInventory(t *testing.T) {
	ctx := context.Background()
	names := func(r Result) []string {
		var ns []string
		for _, s := range r.Results {
			ns = append(ns, s.Checker)
		}
		return ns
	}
	r := Default(Options{}).Check(ctx, inventoryClean())
	if r.Valid != Valid || !slices.Contains(names(r), "inventory") || slices.Contains(names(r), "resource") {
		t.Fatalf("clean inventory: %v with %v\n%s", r.Valid, names(r), dump(r.Anomalies))
	}
	r = Default(Options{}).Check(ctx, inventoryOversold())
	if r.Valid != Invalid || !slices.Contains(kinds(r.Anomalies, false), "oversold") {
		t.Fatalf("oversold inventory: %v %v", r.Valid, kinds(r.Anomalies, false))
	}
	r = Default(Options{Fenced: true}).Check(ctx, inventoryFencedRejected())
	if r.Valid != Valid {
		t.Fatalf("fenced inventory: %v %s\n%s", r.Valid, r.Error, dump(r.Anomalies))
	}
	r = Default(Options{}).Check(ctx, clean())
	if slices.Contains(names(r), "inventory") || !slices.Contains(names(r), "resource") {
		t.Fatalf("register history checked by %v", names(r))
	}
}

// TestNoLock: a design that takes no lock grants at once, so its holds
// overlap; with Options.NoLock the mutual-exclusion checkers are left out
// and the inventory checker alone judges it.
func TestNoLock(t *testing.T) {
	h := watchInventory()
	ctx := context.Background()
	if r := Default(Options{}).Check(ctx, h); r.Valid != Invalid {
		t.Fatalf("overlapping holds judged as a lock: %v, want invalid", r.Valid)
	}
	r := Default(Options{NoLock: true}).Check(ctx, h)
	if r.Valid != Valid {
		t.Fatalf("no-lock design: %v %s\n%s", r.Valid, r.Error, dump(r.Anomalies))
	}
	for _, s := range r.Results {
		if s.Checker == "mutex" || s.Checker == "overlap" {
			t.Errorf("%s judged a design with no lock", s.Checker)
		}
	}
	// The same overlap with a lost decrement is still found.
	bad := (&builder{}).seed(0, 2)
	bad.acquire(0, 0.10, 0.11, 0, "o0").acquire(1, 0.10, 0.11, 0, "o1")
	bad.sale(0, 0.12, 0.20, 2, 0).sale(1, 0.13, 0.30, 2, 0)
	bad.release(0, 0.31, 0.32, true, "o0").release(1, 0.31, 0.32, true, "o1")
	if r := Default(Options{NoLock: true}).Check(ctx, bad.final(1, 1).build()); r.Valid != Invalid {
		t.Fatalf("no-lock lost decrement: %v, want invalid", r.Valid)
	}
}

// TestFindLateSaleEdges: a sale left in doubt is a candidate for the late
// write from the instant the second sale of the same stock returned (an
// op invoked then may still have landed before that read was served) and
// while it could still have landed after the first began.
func TestFindLateSaleEdges(t *testing.T) {
	a := &csOp{kind: rRMW, proc: 0, read: 3, wrote: 2, call: sec(1), ret: sec(1.1)}
	b := &csOp{kind: rRMW, proc: 1, read: 3, wrote: 2, call: sec(2), ret: sec(2.1)}
	for _, tt := range []struct {
		name      string
		call, ret float64
		found     bool
	}{
		{"invoked as the second sale returned", 2.1, 3, true},
		{"invoked after it", 2.101, 3, false},
		{"ended as the first sale began", 0.5, 1, true},
		{"ended before it", 0.5, 0.999, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doubt := &csOp{kind: rMaybe, proc: 2, read: 4, wrote: 3, call: sec(tt.call), ret: sec(tt.ret)}
			late := findLateSale([]*csOp{a, b}, &stock{key: "k", sales: []*csOp{a, b}, doubt: []*csOp{doubt}}, nil)
			if found := late != nil && late.op == doubt; found != tt.found {
				t.Fatalf("found %v, want %v (%+v)", found, tt.found, late)
			}
		})
	}
}
