package runner

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

// Overhead compares grants per second through the harness with a plain
// one-process loop that does the same acquire -> cs -> release cycles with
// the same lock client.
type Overhead struct {
	HarnessGrants, PlainGrants int
	HarnessRate, PlainRate     float64
	Ratio                      float64
}

// BenchOverhead runs t (with no nemesis) through the harness, then the same
// cycles in one process against a fresh cluster for the same time.
func BenchOverhead(ctx context.Context, t Test, log io.Writer) (Overhead, error) {
	t.Nemesis = "none"
	t.Defaults()
	out, err := Run(ctx, t, log)
	if err != nil {
		return Overhead{}, err
	}
	h, err := history.ReadFile(out.Dir + "/history.jsonl")
	if err != nil {
		return Overhead{}, err
	}
	var o Overhead
	for _, op := range h {
		if op.F == history.FAcquire && op.Type == history.OK {
			o.HarnessGrants++
		}
	}
	o.HarnessRate = float64(o.HarnessGrants) / t.Time.Seconds()
	o.PlainGrants, err = plainLoop(ctx, t)
	if err != nil {
		return o, err
	}
	o.PlainRate = float64(o.PlainGrants) / t.Time.Seconds()
	if o.PlainRate > 0 {
		o.Ratio = o.HarnessRate / o.PlainRate
	}
	return o, nil
}

// plainLoop runs t.Workers goroutines, each with its own lock client and
// resource, cycling acquire -> cs -> release for t.Time, and counts grants.
func plainLoop(ctx context.Context, t Test) (int, error) {
	p, err := resolve(t)
	if err != nil {
		return 0, err
	}
	design := p.design
	logDir, err := os.MkdirTemp("", "lockcheck-bench-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(logDir)
	c := p.topology(t, logDir)
	if err := c.Setup(ctx); err != nil {
		return 0, err
	}
	defer c.Teardown(context.WithoutCancel(ctx))
	var grants atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(t.Time)
	errs := make(chan error, t.Workers)
	for i := 0; i < t.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := withSentinel(t.workerConfig(i, c.LockAddrs(i), c.StorageAddr()), c, i)
			l, err := design.New(cfg, rand.New(rand.NewPCG(t.Seed, uint64(i))), nil)
			if err != nil {
				errs <- err
				return
			}
			defer l.Close()
			res := workloads.NewResource(cfg)
			defer res.Close()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				g, err := l.Acquire(ctx, "k0")
				if err != nil {
					continue
				}
				grants.Add(1)
				_, _ = res.CriticalSection(ctx, "k0", g.Token, nil)
				_, _ = l.Release(ctx, "k0", g)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return 0, fmt.Errorf("plain loop: %w", err)
	}
	return int(grants.Load()), nil
}
