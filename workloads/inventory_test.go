package workloads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

func inventoryConfig(r *redisnode.Redis, lock string, slot int, fenced bool) Config {
	cfg := testConfig(r, lock, slot)
	cfg.Fencing, cfg.Workload = fenced, WorkloadInventory
	return cfg
}

// watchStockConfig reaches the stock of redis-watch-inventory, which lives
// on the lock node (Design.StockOnLock), directly.
func watchStockConfig(r *redisnode.Redis) Config {
	cfg := inventoryConfig(r, "redis-watch-inventory", 0, false)
	cfg.StorageAddr = r.Nodes()[0].Addr
	return cfg
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInventoryResource sells a stock of 2 through the plain and the fenced
// resource: two sales, then sold out with no write; fencing refuses a stale
// token as for the register.
func TestInventoryResource(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	for _, fenced := range []bool{false, true} {
		res := NewResource(inventoryConfig(r, "redis-set-px", 0, fenced))
		defer res.Close()
		key := "inv-plain"
		if fenced {
			key = "inv-fenced"
		}
		if err := res.Seed(ctx, key, 2); err != nil {
			t.Fatal(err)
		}
		for i, want := range []int64{2, 1} {
			v, err := res.CriticalSection(ctx, key, int64(i+1), nil)
			if err != nil || *v.Read != want || v.Wrote == nil || *v.Wrote != want-1 || v.Ext().Detail != "" {
				t.Fatalf("fenced %v, sale %d: %+v %v, want read %d wrote %d", fenced, i, v, err, want, want-1)
			}
		}
		v, err := res.CriticalSection(ctx, key, 3, nil)
		if err != nil || *v.Read != 0 || v.Wrote != nil || v.Ext().Detail != SoldOut {
			t.Fatalf("fenced %v, sold out: %+v %v, want read 0, no write, %q", fenced, v, err, SoldOut)
		}
		if n, err := res.Value(ctx, key); err != nil || n != 0 {
			t.Fatalf("final stock %d %v, want 0", n, err)
		}
		if fenced {
			if err := res.Seed(ctx, key, 5); err != nil {
				t.Fatal(err)
			}
			if _, err := res.CriticalSection(ctx, key, 7, nil); err != nil {
				t.Fatal(err)
			}
			v, err := res.CriticalSection(ctx, key, 6, nil)
			if !errors.Is(err, ErrRejected) || v.Ext().Rejected != "read" || v.Wrote != nil {
				t.Fatalf("stale token: %+v %v, want a rejected read", v, err)
			}
			if n, _ := res.Value(ctx, key); n != 4 {
				t.Fatalf("stock %d after one sale and one refusal, want 4", n)
			}
		}
	}
}

// TestWatchInventory sells a stock of 30 with 5 concurrent optimistic
// clients: exactly 30 sales, each from a different stock, and the stock
// ends at 0.
func TestWatchInventory(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	const stock, clients = 30, 5
	seed := NewResource(watchStockConfig(r))
	defer seed.Close()
	if err := seed.Seed(ctx, "watch", stock); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reads := make(map[int64]int)
	sales := 0
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := newClient(t, inventoryConfig(r, "redis-watch-inventory", i%2, false))
			sec := l.(Sectioner)
			for n := 0; n < 200; n++ {
				g, err := l.Acquire(ctx, "watch")
				if err != nil || g.Token != 0 {
					errs <- err
					return
				}
				v, err := sec.CriticalSection(ctx, "watch", 0, nil)
				if err != nil {
					continue // every attempt aborted: no effect
				}
				if v.Wrote == nil {
					return // sold out
				}
				mu.Lock()
				reads[*v.Read]++
				sales++
				mu.Unlock()
				if *v.Wrote != *v.Read-1 {
					errs <- errors.New("a sale did not take exactly one item")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if sales != stock {
		t.Errorf("%d sales from a stock of %d", sales, stock)
	}
	for r, n := range reads {
		if n > 1 {
			t.Errorf("stock %d sold from %d times", r, n)
		}
	}
	if n, err := seed.Value(ctx, "watch"); err != nil || n != 0 {
		t.Errorf("final stock %d %v, want 0", n, err)
	}
}

// TestWatchInventoryRetries shows the optimistic transaction abort: a slow
// client's EXEC finds the stock changed by a fast one and starts over.
func TestWatchInventoryRetries(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	seed := NewResource(watchStockConfig(r))
	defer seed.Close()
	if err := seed.Seed(ctx, "retry", 10); err != nil {
		t.Fatal(err)
	}
	slowCfg := inventoryConfig(r, "redis-watch-inventory", 0, false)
	slowCfg.ThinkMS = 300
	slow := newClient(t, slowCfg).(Sectioner)
	fast := newClient(t, inventoryConfig(r, "redis-watch-inventory", 1, false)).(Sectioner)
	done := make(chan *history.Value, 1)
	go func() {
		v, err := slow.CriticalSection(ctx, "retry", 0, nil)
		if err != nil {
			t.Error(err)
		}
		done <- v
	}()
	time.Sleep(100 * time.Millisecond) // the slow one has read 10 and thinks
	if v, err := fast.CriticalSection(ctx, "retry", 0, nil); err != nil || *v.Read != 10 || *v.Wrote != 9 {
		t.Fatalf("fast sale: %+v %v", v, err)
	}
	v := <-done
	if v == nil || *v.Read != 9 || *v.Wrote != 8 || !strings.Contains(v.Ext().Detail, "1 aborted transaction") {
		t.Fatalf("slow sale: %+v, want read 9 wrote 8 after 1 aborted transaction", v)
	}
}

// TestWatchInventoryRegisterRefused: the worker refuses to open the
// lock-free design on the register workload.
func TestWatchInventoryRegisterRefused(t *testing.T) {
	r := startRedis(t)
	cfg := inventoryConfig(r, "redis-watch-inventory", 0, false)
	cfg.Workload = WorkloadRegister
	in := strings.NewReader(`{"id":1,"f":"open","config":` + mustJSON(t, cfg) + "}\n")
	var out bytes.Buffer
	if err := Serve(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"type":"fail"`) || !strings.Contains(out.String(), "does not run the register workload") {
		t.Fatalf("open reply %s, want a fail naming the workload", out.String())
	}
}
