package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// inventoryLateSale: a stock of 5. Process 5's critical section reads 4
// and is left in doubt (info at 0.72 s); the controller retires its worker
// at 0.73 s. Processes 1 and 2 sell 4 and 3; then 5's write of 3 lands late
// and sets the stock back, which process 0's read of 3 at 1.42 s proves.
// Six sales were acknowledged, seven landed: two oversold, and the holds
// of the two processes that sold from 3 never overlapped.
func inventoryLateSale() history.History {
	b := (&builder{}).seed(0, 5)
	b.acquire(0, 0.10, 0.11, 0, "o0").sale(0, 0.12, 0.13, 5, 0).release(0, 0.14, 0.15, true, "o0")
	b.acquire(5, 0.20, 0.21, 0, "o5").csInfo(5, 0.22, 0.72).crash(5, 0.73)
	b.acquire(1, 1.00, 1.01, 0, "o1").sale(1, 1.02, 1.03, 4, 0).release(1, 1.04, 1.05, true, "o1")
	b.acquire(2, 1.10, 1.11, 0, "o2").sale(2, 1.12, 1.13, 3, 0).release(2, 1.14, 1.15, true, "o2")
	b.acquire(0, 1.40, 1.41, 0, "o0b").sale(0, 1.42, 1.43, 3, 0).release(0, 1.44, 1.45, true, "o0b")
	b.acquire(1, 1.50, 1.51, 0, "o1b").sale(1, 1.52, 1.53, 2, 0).release(1, 1.54, 1.55, true, "o1b")
	b.acquire(2, 1.60, 1.61, 0, "o2b").sale(2, 1.62, 1.63, 1, 0).release(2, 1.64, 1.65, true, "o2b")
	b.acquire(0, 1.70, 1.71, 0, "o0c").soldOut(0, 1.72, 1.73).release(0, 1.74, 1.75, true, "o0c")
	return b.final(2.0, 0).build()
}

// TestInventoryLateSaleStory: the story names the in-doubt sale as the
// cause, with the read that proves it landed, and counts the items the
// reads prove sold.
func TestInventoryLateSaleStory(t *testing.T) {
	r := NewInventory().Check(context.Background(), inventoryLateSale())
	onlyAnomaly(t, r, "oversold")
	if r.Stats["oversold"] != int64(2) || r.Stats["lost_decrements"] != int64(2) || r.Stats["sales"] != int64(6) ||
		r.Stats["sales_landed_in_doubt"] != int64(1) {
		t.Errorf("stats %v, want oversold 2, lost 2, sales 6, 1 in-doubt sale landed", r.Stats)
	}
	an := r.Anomalies[0]
	assertTells(t, an.Explanation, []string{
		"7 items were sold from a stock of 5 on lock k (6 acknowledged, and 1 left in doubt that a later read proves landed): 2 oversold",
		"the final stock is 0, not -2",
		"process 5's critical section, invoked at 0.22 s and left in doubt (info at 0.72 s, op ",
		"whose process was retired at 0.73 s",
		"process 0's read of 3 (1.42 s–1.43 s) proves it landed",
		"after process 2's sale (1.12 s–1.13 s) had taken the stock from 3 to 2",
	})
	for _, s := range []string{"both read 3", "sold from the same read"} {
		if strings.Contains(an.Explanation, s) {
			t.Errorf("story blames two holders (%q):\n%s", s, an.Explanation)
		}
	}
	if an.Processes[0] != 5 {
		t.Errorf("processes %v, want the in-doubt process 5 first", an.Processes)
	}
}

// fencedLateWrite: a fenced register. Process 5 is granted token 2, its
// critical section is left in doubt (info at 0.72 s) and its worker
// retired at 0.73 s; processes 1 and 2 write 2 and 3 with tokens 3 and 4.
// With proved, process 0 (token 5) then reads 2: only 5's write, with
// token 2, can have written 2 after 3, so the resource accepted it after
// token 4. Without, process 0 reads 3, and nothing proves that 5's write
// landed after token 4.
func fencedLateWrite(proved bool) history.History {
	b := (&builder{}).acquire(0, 0.10, 0.11, 1, "o0").cs(0, 0.12, 0.13, 0, 1).release(0, 0.14, 0.15, true, "o0")
	b.acquire(5, 0.20, 0.21, 2, "o5").pair(5, history.FCS, "k", 0.22, 0.72, history.Info, &history.Value{Token: 2}, nil).crash(5, 0.73)
	b.acquire(1, 1.00, 1.01, 3, "o1").cs(1, 1.02, 1.03, 1, 3).release(1, 1.04, 1.05, true, "o1")
	b.acquire(2, 1.10, 1.11, 4, "o2").cs(2, 1.12, 1.13, 2, 4).release(2, 1.14, 1.15, true, "o2")
	read := int64(3)
	if proved {
		read = 2
	}
	b.acquire(0, 1.40, 1.41, 5, "o0b").cs(0, 1.42, 1.43, read, 5).release(0, 1.44, 1.45, true, "o0b")
	return b.build()
}

// fencedInDoubtInOrder: process 5's in-doubt write with token 2 landed
// before process 1 (token 3) read what it wrote: not stale.
func fencedInDoubtInOrder() history.History {
	b := (&builder{}).acquire(0, 0.10, 0.11, 1, "o0").cs(0, 0.12, 0.13, 0, 1).release(0, 0.14, 0.15, true, "o0")
	b.acquire(5, 0.20, 0.21, 2, "o5").pair(5, history.FCS, "k", 0.22, 0.72, history.Info, &history.Value{Token: 2}, nil).crash(5, 0.73)
	b.acquire(1, 1.00, 1.01, 3, "o1").cs(1, 1.02, 1.03, 2, 3).release(1, 1.04, 1.05, true, "o1")
	b.acquire(2, 1.10, 1.11, 4, "o2").cs(2, 1.12, 1.13, 3, 4).release(2, 1.14, 1.15, true, "o2")
	return b.build()
}

// TestFencingLateInDoubtWrite: a stale token the resource accepted is a
// fencing anomaly whether or not the write was acknowledged, when a later
// read proves it landed; an in-doubt stale write that no read proves
// landed, or one that landed in order, is not.
func TestFencingLateInDoubtWrite(t *testing.T) {
	ctx := context.Background()
	r := NewFencing().Check(ctx, fencedLateWrite(true))
	onlyAnomaly(t, r, "stale-write")
	if r.Stats["stale_writes_accepted"] != 1 {
		t.Fatalf("stats %v, want 1 stale write accepted", r.Stats)
	}
	an := r.Anomalies[0]
	assertTells(t, an.Explanation, []string{
		"Process 5's write with token 2, left in doubt (invoked at 0.22 s, info at 0.72 s, op ",
		"whose process was retired at 0.73 s",
		"landed after the resource had accepted process 2's write with token 4 (1.12 s–1.13 s)",
		"process 0's critical section (1.42 s–1.43 s) read 2 after process 2 had written 3, and only process 5's write could have written 2 then",
		"the resource for lock k accepted a stale token",
	})
	if len(an.Processes) < 3 || an.Processes[0] != 5 || an.Processes[1] != 2 || an.Processes[2] != 0 {
		t.Errorf("processes %v, want [5 2 0]", an.Processes)
	}
	if d := Default(Options{Fenced: true}).Check(ctx, fencedLateWrite(true)); d.Valid != Invalid || !strings.Contains(strings.Join(kinds(d.Anomalies, false), " "), "stale-write") {
		t.Errorf("default: %v %v", d.Valid, kinds(d.Anomalies, false))
	}
	for name, h := range map[string]history.History{"not proved": fencedLateWrite(false), "landed in order": fencedInDoubtInOrder()} {
		if r := NewFencing().Check(ctx, h); r.Valid != Valid || len(r.Anomalies) != 0 {
			t.Errorf("%s: %v %v\n%s", name, r.Valid, kinds(r.Anomalies, false), dump(r.Anomalies))
		}
		if r := Default(Options{Fenced: true}).Check(ctx, h); r.Valid != Valid {
			t.Errorf("%s: default %v %v\n%s", name, r.Valid, kinds(r.Anomalies, false), dump(r.Anomalies))
		}
	}
}

// assertTells fails the test for each phrase that text lacks.
func assertTells(t *testing.T, text string, phrases []string) {
	t.Helper()
	for _, s := range phrases {
		if !strings.Contains(text, s) {
			t.Errorf("story lacks %q:\n%s", s, text)
		}
	}
}

// onlyAnomaly fails the test unless r is invalid with one anomaly, of kind.
func onlyAnomaly(t *testing.T, r Result, kind string) {
	t.Helper()
	if r.Valid != Invalid || len(r.Anomalies) != 1 || r.Anomalies[0].Kind != kind {
		t.Fatalf("valid %v kinds %v, want invalid [%s]\n%s", r.Valid, kinds(r.Anomalies, false), kind, dump(r.Anomalies))
	}
}
