package runner

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// inventoryStats returns the inventory checker's stats of a result.
func inventoryStats(t *testing.T, res checker.Result) map[string]any {
	t.Helper()
	for _, r := range res.Results {
		if r.Checker == "inventory" {
			return r.Stats
		}
	}
	t.Fatalf("no inventory result among %d results", len(res.Results))
	return nil
}

// TestRunInventory runs the inventory workload on real servers: a paused
// redis-set-px holder sells from a stale read (oversold), the same run
// without faults sells exactly the stock, and the lock-free
// redis-watch-inventory design sells exactly the stock under pauses too.
// The history holds the controller's seed and final ops.
func TestRunInventory(t *testing.T) {
	tests := []struct {
		name, lock, nem string
		want            checker.Validity
		oversold        bool
	}{
		{"redis-set-px-pause", "redis-set-px", "pause", checker.Invalid, true},
		{"redis-set-px-none", "redis-set-px", "none", checker.Valid, false},
		{"redis-watch-inventory-pause", "redis-watch-inventory", "pause", checker.Valid, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			test := quick(t, tt.lock, tt.nem, false)
			test.Workload, test.Stock = "inventory", 20
			test.Think = 50 * time.Millisecond
			test.NemesisInterval = 600 * time.Millisecond
			// Wait until the stock is oversold, or sold out (20 sales and
			// one more attempt that found it sold out: untilSales(19)
			// holds at 20; the slots then finish their cycles).
			test.Time, test.Until = patient, untilSales(19)
			if tt.oversold {
				// Only a pause that lands while stock is left can oversell:
				// with 20 the stock sold out in about a second, often before
				// a pause caught a holder between its read and its write
				// (then no later pause could oversell, and the run waited
				// its whole time). 60 gives several pauses the chance.
				test.Stock = 60
				test.Until = untilSales(60)
			} else if tt.nem != "none" {
				test.Until = all(untilSales(19), untilFaultEnded)
			}
			if tt.want == checker.Valid && tt.lock != "redis-watch-inventory" {
				test.Lease = safeLease // no lease may run out in a run without faults
			}
			out, err := Run(context.Background(), test, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			st := inventoryStats(t, out.Result)
			oversold := st["oversold"].(int64)
			if out.Result.Valid != tt.want || (oversold > 0) != tt.oversold {
				t.Fatalf("verdict %v, inventory stats %v; want %v, oversold %v\n%+v", out.Result.Valid, st, tt.want, tt.oversold, out.Result.Anomalies)
			}
			if tt.oversold {
				found := false
				for _, a := range out.Result.Anomalies {
					found = found || a.Kind == "oversold" && strings.Contains(a.Explanation, "oversold")
				}
				if !found {
					t.Errorf("no oversold story: %+v", out.Result.Anomalies)
				}
			} else if sold, maybe := st["sales"].(int64), st["sales_indeterminate"].(int64); sold > 20 || sold+maybe < 20 || st["final_stock"].(int64) != 0 {
				// A sale whose EXEC reply a pause held past the client's
				// read deadline is in doubt, and it may have landed: the
				// stock of 20 is sold exactly when the sales heard of and
				// those in doubt cover it and the final stock is 0.
				t.Errorf("stats %v: want the stock of 20 sold exactly (sales, with those in doubt), final stock 0", st)
			}
			h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if h[0].F != history.FSeed || h[len(h)-1].F != history.FFinal {
				t.Errorf("history runs from %v to %v; want the seed first and the final read last", h[0], h[len(h)-1])
			}
			assertNoChildren(t)
		})
	}
}

// TestRunInventoryBadInput: the lock-free design refuses the register
// workload and --fencing with a one-line error.
func TestRunInventoryBadInput(t *testing.T) {
	for _, tc := range []struct {
		workload string
		fencing  bool
		want     string
	}{
		{"register", false, "only runs the inventory workload"},
		{"inventory", true, "takes no lock"},
	} {
		test := quick(t, "redis-watch-inventory", "none", tc.fencing)
		test.Workload = tc.workload
		_, err := Run(context.Background(), test, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s fencing=%v: error %v, want one line with %q", tc.workload, tc.fencing, err, tc.want)
		}
	}
}
