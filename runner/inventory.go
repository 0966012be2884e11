package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

// inventoryOpTimeout bounds the controller's seed and final reads of the
// stock on the storage node, which no nemesis touches.
const inventoryOpTimeout = 5 * time.Second

// seedStock sets every key's stock to t.Stock on the storage node before the
// workers start, and records one seed op per key (process -1, Value.Wrote
// = the stock), so the inventory checker finds the initial stock in the
// history. A failure is a setup error: the run cannot start.
func (r *run) seedStock(ctx context.Context, keys []string) error {
	addr, err := r.stockAddr(ctx)
	if err != nil {
		return fmt.Errorf("seed the stock: %w", err)
	}
	res := workloads.NewResource(r.test.workerConfig(history.NemesisProcess, nil, addr))
	defer res.Close()
	for _, k := range keys {
		v := &history.Value{Wrote: history.Int64(r.test.Stock)}
		r.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: history.FSeed, Key: k, Value: v})
		cctx, cancel := context.WithTimeout(ctx, inventoryOpTimeout)
		err := res.Seed(cctx, k, r.test.Stock)
		cancel()
		done := history.Op{Process: history.NemesisProcess, Type: history.OK, F: history.FSeed, Key: k, Value: v}
		if err != nil {
			done.Type, done.Error = history.Info, err.Error()
		}
		r.rec.Record(done)
		if err != nil {
			return fmt.Errorf("seed the stock of %s: %w", k, err)
		}
	}
	return nil
}

// finalStock reads every key's stock after all workers have stopped (every
// worker process has exited, so no write is still in flight), and records
// one final op per key (process -1, Value.Read = the stock). A failed read
// is recorded as fail with its error: the checker then cannot compare the
// final stock and says so.
func (r *run) finalStock(ctx context.Context, keys []string) {
	addr, addrErr := r.stockAddr(ctx)
	res := workloads.NewResource(r.test.workerConfig(history.NemesisProcess, nil, addr))
	defer res.Close()
	for _, k := range keys {
		r.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: history.FFinal, Key: k})
		if addrErr != nil {
			r.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Fail, F: history.FFinal, Key: k, Error: addrErr.Error()})
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, inventoryOpTimeout)
		v, err := res.Value(cctx, k)
		cancel()
		done := history.Op{Process: history.NemesisProcess, Type: history.OK, F: history.FFinal, Key: k,
			Value: &history.Value{Read: history.Int64(v)}}
		if err != nil {
			done.Type, done.Value, done.Error = history.Fail, nil, err.Error()
		}
		r.rec.Record(done)
	}
}

// stockAddr is where the stock lives: the storage node, or for a design
// that keeps it on the lock service (StockOnLock) the lock service's
// current master (its leader, where it has one; else its first lock node),
// reached directly, not through a worker's proxies.
func (r *run) stockAddr(ctx context.Context) (string, error) {
	if !r.design.StockOnLock {
		return r.cluster.StorageAddr(), nil
	}
	name := ""
	if p, ok := r.cluster.(clusters.Primary); ok {
		cctx, cancel := context.WithTimeout(ctx, inventoryOpTimeout)
		defer cancel()
		leader, err := p.Leader(cctx)
		if err != nil {
			return "", fmt.Errorf("find the master that holds the stock: %w", err)
		}
		name = leader
	}
	for _, n := range r.cluster.Nodes() {
		if n.Role == "lock" && (name == "" || n.Name == name) {
			return n.Addr, nil
		}
	}
	return "", fmt.Errorf("no lock node %q holds the stock", name)
}

// keyNames returns the lock keys of a test with n keys: k0, k1, ...
func keyNames(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	return keys
}
