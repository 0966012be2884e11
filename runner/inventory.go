package runner

import (
	"context"
	"fmt"
	"time"

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
	res := workloads.NewResource(r.test.workerConfig(history.NemesisProcess, nil, r.cluster.StorageAddr()))
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
	res := workloads.NewResource(r.test.workerConfig(history.NemesisProcess, nil, r.cluster.StorageAddr()))
	defer res.Close()
	for _, k := range keys {
		r.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: history.FFinal, Key: k})
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

// keyNames returns the lock keys of a test with n keys: k0, k1, ...
func keyNames(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	return keys
}
