package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "partition-leader", Summary: "experimental: cut the current leader off from its peers (quorum and election links, both ways); clients still reach it", New: newPartitionLeader,
		Exercise: &history.ExerciseRule{F: history.FPartition, Shape: history.ExerciseNode, Matches: onNodes,
			Missed: "no partition-leader struck a lock node while a lock was held and grants flowed"}})
	register(Kind{Name: "pause-leader", Summary: "SIGSTOP the current leader's server process (a JVM GC pause), SIGCONT after the fault duration", New: newPauseLeader,
		Exercise: &history.ExerciseRule{F: history.FPause, Shape: history.ExerciseNode, Matches: onNodes,
			Missed: "no pause-leader struck a lock node while a lock was held and grants flowed"}})
}

// Leader faults act on whichever node leads when the fault starts: the
// nemesis finds it itself. partition-leader cuts the leader off from its
// peers (clients still reach it); pause-leader stops its process.
type Leader struct {
	p     clusters.Primary
	apply func(ctx context.Context, node string) error
	undo  func(ctx context.Context, node string) error
	start string
	end   string
	verb  string
	nodes nodeSet
	env   Env
	kind  string    // partition-leader or pause-leader
	since time.Time // when the last fault struck
}

var _ Nemesis = (*Leader)(nil)

func newPartitionLeader(env Env, _ *rand.Rand) (Nemesis, error) {
	p, ok1 := env.Cluster().(clusters.Primary)
	iso, ok2 := env.Cluster().(clusters.Isolator)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("partition-leader nemesis: %w", clusters.ErrUnsupported)
	}
	return &Leader{p: p, apply: iso.Isolate, undo: iso.Rejoin, start: history.FPartition, end: history.FHeal,
		verb: verbOf(env.Cluster(), "isolate", "cut off from its peers"), env: env, kind: "partition-leader"}, nil
}

func newPauseLeader(env Env, _ *rand.Rand) (Nemesis, error) {
	p, ok1 := env.Cluster().(clusters.Primary)
	pa, ok2 := env.Cluster().(clusters.Pauser)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("pause-leader nemesis: %w", clusters.ErrUnsupported)
	}
	if err := clusters.Lacks(env.Cluster(), "pause-leader", clusters.CmdStop, clusters.CmdContinue); err != nil {
		return nil, err
	}
	return &Leader{p: p, apply: pa.PauseNode, undo: pa.ResumeNode, start: history.FPause, end: history.FResume,
		verb: verbOf(env.Cluster(), "pause", "SIGSTOP"), env: env, kind: "pause-leader"}, nil
}

// Fs returns the start and end op names.
func (n *Leader) Fs() (string, string) { return n.start, n.end }

// Invoke applies the fault to the current leader, or undoes it everywhere.
func (n *Leader) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case n.start:
		leader, err := leaderOf(ctx, n.env, n.p)
		if err != nil {
			return completed(op, nil, err)
		}
		hit := strikeHit(ctx, n.env, n.kind)
		if err := n.apply(ctx, leader); err != nil {
			return completed(op, nil, err)
		}
		n.nodes.add(leader, leader)
		n.since = time.Now()
		return completed(op, &history.Value{Extra: &history.Extra{Nodes: []string{leader}, Detail: fmt.Sprintf("leader %s %s", leader, n.verb), Hit: hit}}, nil)
	case n.end:
		nodes, err := n.nodes.undoAll(ctx, n.undo)
		return completed(op, &history.Value{Extra: &history.Extra{Nodes: nodes, Detail: "undone", Hit: endHit(n.kind, time.Since(n.since), leaseOf(n.env))}}, err)
	}
	return completed(op, nil, fmt.Errorf("leader nemesis cannot %q", op.F))
}

// Heal undoes the fault on every node it was applied to.
func (n *Leader) Heal(ctx context.Context) error {
	_, err := n.nodes.undoAll(ctx, n.undo)
	return err
}

// leaderOf returns the leader a fault on a lock node acts on: on a cluster
// whose keys live on different masters (clusters.KeyPrimary, Redis
// Cluster), the master of a key some worker holds (waiting up to
// nodeAimWait for one; the master of the cluster's first slots when none
// holds a lock), else the cluster's leader. Under an Aim, the master of
// the aimed holder's key.
func leaderOf(ctx context.Context, env Env, p clusters.Primary) (string, error) {
	kp, ok := env.Cluster().(clusters.KeyPrimary)
	if ok {
		if aim, aimed := AimOf(ctx); aimed {
			if t, err := aim(); err == nil && t.Key != "" {
				return kp.KeyLeader(ctx, t.Key)
			}
		}
	}
	if !ok || !awaitHolder(ctx, env, nodeAimWait) {
		return p.Leader(ctx)
	}
	for _, h := range env.Holders() {
		if h.Key != "" {
			return kp.KeyLeader(ctx, h.Key)
		}
	}
	return p.Leader(ctx)
}

// verbOf returns the cluster's words for fault (clusters.FaultVerber), or
// def.
func verbOf(c any, fault, def string) string {
	if v, ok := c.(clusters.FaultVerber); ok {
		if s := v.FaultVerb(fault); s != "" {
			return s
		}
	}
	return def
}
