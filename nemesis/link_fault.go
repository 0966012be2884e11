package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// linkSpec is one fault on a lock holder's links to the lock nodes (a
// slow, lossy, one-way, resetting or refusing link): what it puts on the
// links, and its words. Each such kind (latency, reply-loss, one-way-in,
// reset, cut-reply, blackhole, refuse) is a linkSpec in its own file; a
// LinkFault runs it.
type linkSpec struct {
	// kind is the nemesis kind; its start op has the same name, its end
	// op kind + "-heal".
	kind string
	// toxics returns what to put on every link of the holder's slot, for
	// a run whose lease is lease.
	toxics func(lease time.Duration) []clusters.Toxic
	// stream says which way it acts, for the Hit: clusters.Upstream
	// (requests), clusters.Downstream (replies) or "both".
	stream string
	// does says what it does to the links, for the start op's detail:
	// "replies vanish".
	does string
}

// linkOps returns the ops of a link fault called kind: kind and
// kind-heal, a network fault judged as one that strikes a holder.
func linkOps(kind string) history.FaultOps {
	return history.FaultOps{Start: kind, End: kind + "-heal", Class: history.ClassNetwork, Exercise: history.ExerciseHolder}
}

// LinkFault strikes a worker that was just granted a lock (aimFreshHolder,
// as a partition does): it puts its spec's toxics on every link of the
// worker's slot to the lock nodes, and its end op takes them off. The
// worker's links to the storage node and every other worker's links are
// left alone.
type LinkFault struct {
	env  Env
	rng  *rand.Rand
	c    clusters.LinkToxicker
	spec linkSpec
	on   undoSet[int, struck] // slot -> process, when
}

var _ Nemesis = (*LinkFault)(nil)

// newLinkFault returns the New of a kind that runs spec: it needs a
// cluster whose worker links can carry toxics (clusters.LinkToxicker).
func newLinkFault(spec linkSpec) func(env Env, rng *rand.Rand) (Nemesis, error) {
	return func(env Env, rng *rand.Rand) (Nemesis, error) {
		c, ok := env.Cluster().(clusters.LinkToxicker)
		if !ok {
			return nil, fmt.Errorf("%s nemesis: the cluster cannot put toxics on a worker's links (no clusters.LinkToxicker): %w", spec.kind, clusters.ErrUnsupported)
		}
		return &LinkFault{env: env, rng: rng, c: c, spec: spec}, nil
	}
}

// Fs returns the kind's start and end ops.
func (n *LinkFault) Fs() (string, string) {
	ops := linkOps(n.spec.kind)
	return ops.Start, ops.End
}

// Invoke poisons a fresh holder's links (start) or clears every link it
// poisoned (end).
func (n *LinkFault) Invoke(ctx context.Context, op history.Op) history.Op {
	start, end := n.Fs()
	lease := leaseOf(n.env)
	switch op.F {
	case start:
		t, waited, err := aimFreshHolder(ctx, n.env, n.rng, partitionAimWait)
		if err != nil {
			return completed(op, nil, err)
		}
		ts := n.spec.toxics(lease)
		n.on.add(t.Slot, struck{process: t.Process, at: time.Now()})
		if err := n.c.SetLinkToxics(ctx, t.Slot, n.spec.kind, ts); err != nil {
			return completed(op, nil, err)
		}
		hit := holderHit(n.spec.kind, t, lease)
		hit.Waited, hit.Toxic, hit.Stream = waited, ts[0].Type, n.spec.stream
		if ts[0].Type == clusters.ToxicLatency {
			hit.Delay = time.Duration(ts[0].Attributes["latency"]) * time.Millisecond
			hit.Jitter = time.Duration(ts[0].Attributes["jitter"]) * time.Millisecond
		}
		return completed(op, &history.Value{
			Extra: &history.Extra{Targets: []int{t.Process}, Hit: hit, Detail: fmt.Sprintf("%s on process %d's links to the lock service%s", n.spec.does, t.Process, where(t))},
		}, nil)
	case end:
		ss, err := n.on.undoAll(ctx, n.clear)
		targets, lasted := lastedOf(ss)
		return completed(op, &history.Value{Extra: &history.Extra{Targets: targets, Detail: "links restored", Hit: endHit(n.spec.kind, lasted, lease)}}, err)
	}
	return completed(op, nil, fmt.Errorf("%s nemesis cannot %q", n.spec.kind, op.F))
}

// clear takes the fault's toxics off the links of slot.
func (n *LinkFault) clear(ctx context.Context, slot int) error {
	return n.c.SetLinkToxics(ctx, slot, n.spec.kind, nil)
}

// Heal takes the fault's toxics off every link it poisoned.
func (n *LinkFault) Heal(ctx context.Context) error {
	_, err := n.on.undoAll(ctx, n.clear)
	return err
}

// both returns t on the requests and on the replies.
func both(t clusters.Toxic) []clusters.Toxic {
	up, down := t, t
	up.Stream, down.Stream = clusters.Upstream, clusters.Downstream
	return []clusters.Toxic{up, down}
}

// fixed returns a toxics func that ignores the lease.
func fixed(ts ...clusters.Toxic) func(time.Duration) []clusters.Toxic {
	return func(time.Duration) []clusters.Toxic { return ts }
}
