package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// drivenClientClocks moves the client clocks of the workers that do not
// hold a lock along a path while a fault lasts, as drivenClock moves a
// lock node's: when the fault starts, every worker that does not hold a
// lock (all but one random worker, when none does) gets the offset at(0,
// 0), then every Step the offset at says for the real time since the start
// and the step's number, until the end op puts every clock back. The
// holders keep the real clock. clock-client-strobe and clock-client-rate
// are paths; both record their faults with clock-client's ops (skew,
// unskew), told apart by Hit.Nemesis.
type drivenClientClocks struct {
	env  Env
	rng  *rand.Rand
	cc   ClientClocker
	name string // the nemesis kind
	// Step is the time between two offsets.
	Step time.Duration
	// at is the offset after elapsed real time, at step k (k = 0 when the
	// fault starts).
	at func(elapsed time.Duration, k int) time.Duration
	// mark records the path on the start op's Hit and returns its Detail
	// for the processes whose clocks it moves.
	mark func(procs []int, hit *history.Hit) string

	mu    sync.Mutex
	files map[string]int // the driven clock files -> their processes
	steps stepper
}

// newDrivenClientClocks returns the driver of the kind name, or an error
// wrapping clusters.ErrUnsupported when the controller cannot set client
// clocks.
func newDrivenClientClocks(env Env, rng *rand.Rand, name string, step time.Duration) (*drivenClientClocks, error) {
	cc, ok := env.(ClientClocker)
	if !ok {
		return nil, fmt.Errorf("%s nemesis: the controller cannot set client clocks: %w", name, clusters.ErrUnsupported)
	}
	return &drivenClientClocks{env: env, rng: rng, cc: cc, name: name, Step: step}, nil
}

// Fs returns skew and unskew.
func (n *drivenClientClocks) Fs() (string, string) { return history.FSkew, history.FUnskew }

// Invoke starts the non-holders' clocks along the path (skew) or puts every
// clock back (unskew).
func (n *drivenClientClocks) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FSkew:
		procs, hit, err := n.begin(ctx)
		if hit == nil {
			return completed(op, nil, err)
		}
		detail := n.mark(procs, hit)
		return completed(op, &history.Value{
			Extra: &history.Extra{Targets: procs, Hit: hit, Detail: detail},
		}, err)
	case history.FUnskew:
		return n.finish(ctx, op)
	}
	return completed(op, nil, fmt.Errorf("%s nemesis cannot %q", n.name, op.F))
}

// begin sets the non-holders' clocks to their first offset and starts the
// later steps. It returns their processes, sorted, and the start op's Hit
// (the kind, the lease and how many workers held a lock).
func (n *drivenClientClocks) begin(ctx context.Context) ([]int, *history.Hit, error) {
	if err := n.Heal(ctx); err != nil {
		return nil, nil, err
	}
	ws := n.env.Workers()
	if len(ws) < 2 {
		return nil, nil, fmt.Errorf("%s nemesis: %d live workers, want at least 2", n.name, len(ws))
	}
	skew, holders := skewTargets(ws, n.rng)
	files := make(map[string]int)
	var procs []int
	for _, w := range skew {
		if w.ClockFile == "" {
			return nil, nil, fmt.Errorf("%s nemesis: the workers have no clock files", n.name)
		}
		files[w.ClockFile] = w.Process
		procs = append(procs, w.Process)
	}
	sort.Ints(procs)
	hit := &history.Hit{Nemesis: n.name, Lease: leaseOf(n.env), Holders: holders}
	err := n.set(files, n.at(0, 0))
	n.mu.Lock()
	n.files = files
	n.mu.Unlock()
	since := time.Now()
	n.steps.run(n.Step, maxDrivenSteps, func(_ context.Context, k int) error {
		return n.set(files, n.at(time.Since(since), k))
	})
	return procs, hit, err
}

// finish is the end op: every driven clock put back.
func (n *drivenClientClocks) finish(ctx context.Context, op history.Op) history.Op {
	n.mu.Lock()
	var procs []int
	for _, p := range n.files {
		procs = append(procs, p)
	}
	n.mu.Unlock()
	sort.Ints(procs)
	return completed(op, &history.Value{Extra: &history.Extra{Targets: procs, Detail: "client clocks put back"}}, n.Heal(ctx))
}

// set sets every clock in files to offset.
func (n *drivenClientClocks) set(files map[string]int, offset time.Duration) error {
	var errs []error
	for f := range files {
		errs = append(errs, n.cc.SetClientClock(f, offset))
	}
	return errors.Join(errs...)
}

// Heal stops the steps and puts every driven clock back. It is idempotent.
func (n *drivenClientClocks) Heal(context.Context) error {
	n.mu.Lock()
	files := n.files
	n.mu.Unlock()
	if files == nil {
		return nil
	}
	stepErr := n.steps.halt()
	if err := n.set(files, 0); err != nil {
		return fmt.Errorf("put back the client clocks: %w", err)
	}
	n.mu.Lock()
	n.files = nil
	n.mu.Unlock()
	if stepErr != nil {
		return fmt.Errorf("client clocks stopped moving early: %w", stepErr)
	}
	return nil
}

// joinInts renders 1, 2, 3.
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
