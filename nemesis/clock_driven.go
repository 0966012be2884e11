package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// maxDrivenSteps bounds the offsets one driven clock fault writes (at 10 ms
// a step, almost three hours).
const maxDrivenSteps = 1_000_000

// drivenClock moves one lock node's wall clock (a Clocker) along a path
// while a fault lasts: every Step it sets the offset that at says for the
// time since the fault began and the step's number. clock-strobe and
// clock-rate are paths; the end op and Heal put the clock back to real
// time.
type drivenClock struct {
	env  Env
	rng  *rand.Rand
	name string // the nemesis kind
	// start and end are the kind's op names.
	start, end string
	// Step is the time between two offsets.
	Step time.Duration
	// at is the offset after elapsed real time, at step k (k = 0 when the
	// fault starts).
	at func(elapsed time.Duration, k int) time.Duration
	// mark records the path on the start op's Hit and returns its Detail
	// for node.
	mark func(node string, hit *history.Hit) string

	movedClock
}

// newDrivenClock returns a driven clock on env's cluster, or an error
// wrapping clusters.ErrUnsupported when the cluster cannot move a node's
// clock.
func newDrivenClock(env Env, rng *rand.Rand, name, start, end string) (*drivenClock, error) {
	c, ok := env.Cluster().(clusters.Clocker)
	if !ok {
		return nil, fmt.Errorf("%s nemesis: %w (this cluster cannot move its servers' clocks)", name, clusters.ErrUnsupported)
	}
	return &drivenClock{env: env, rng: rng, movedClock: movedClock{c: c}, name: name, start: start, end: end}, nil
}

// Fs returns the kind's start and end ops.
func (n *drivenClock) Fs() (string, string) { return n.start, n.end }

// Invoke starts a node's clock along the path (the start op) or puts it
// back (the end op).
func (n *drivenClock) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case n.start:
		node, hit, err := n.begin(ctx)
		if err != nil {
			return completed(op, nil, err)
		}
		detail := n.mark(node, hit)
		return completed(op, &history.Value{
			Extra: &history.Extra{Nodes: []string{node}, Hit: hit, Detail: detail},
		}, nil)
	case n.end:
		return n.finish(ctx, op)
	}
	return completed(op, nil, fmt.Errorf("%s nemesis cannot %q", n.name, op.F))
}

// begin picks a node (the leader where there is one), waits a moment for a
// holder, sets the first offset and starts the later steps. It returns the
// node and the Hit of the start op.
func (n *drivenClock) begin(ctx context.Context) (string, *history.Hit, error) {
	if err := n.Heal(ctx); err != nil {
		return "", nil, err
	}
	node, err := pickNode(ctx, n.env, n.rng)
	if err != nil {
		return "", nil, err
	}
	hit := strikeHit(ctx, n.env, n.name)
	if err := n.c.SetClockOffset(ctx, node, n.at(0, 0)); err != nil {
		return "", nil, err
	}
	since := time.Now()
	n.moving(node, n.Step, maxDrivenSteps, func(ctx context.Context, k int) error {
		return n.c.SetClockOffset(ctx, node, n.at(time.Since(since), k))
	})
	return node, hit, nil
}

// finish is the end op: the clock put back, and how long it was driven.
func (n *drivenClock) finish(ctx context.Context, op history.Op) history.Op {
	node, since := n.moved()
	err := n.Heal(ctx)
	v := &history.Value{Extra: &history.Extra{Detail: "wall clock put back"}}
	if node != "" {
		v.Mut().Nodes = []string{node}
		v.Mut().Detail = "wall clock of " + node + " put back to real time"
		v.Mut().Hit = endHit(n.name, time.Since(since), leaseOf(n.env))
	}
	return completed(op, v, err)
}

// Heal stops the steps and puts the driven clock back to real time. It is
// idempotent.
func (n *drivenClock) Heal(ctx context.Context) error { return n.putBack(ctx, "moving") }
