package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "kill", Summary: "SIGKILL a lock node's server (connections refused; the leader, where there is one) and restart it after the fault duration", New: newKill,
		Exercise: &history.ExerciseRule{F: history.FKill, Shape: history.ExerciseNode,
			Matches: func(f history.Fault) bool { return !history.ClaimedByAnother("kill", history.FKill, f) },
			Missed:  "no kill struck a lock node while a lock was held and grants flowed"}})
	register(Kind{Name: "kill-follower", Summary: "SIGKILL a follower (a lock server that is not the leader, in a service that has one) and restart it after the fault duration", New: newKillFollower,
		Exercise: &history.ExerciseRule{F: history.FKill, Shape: history.ExerciseNode,
			Matches: func(f history.Fault) bool { return strings.Contains(f.Detail, "follower") },
			Missed:  "no kill-follower struck a lock node while a lock was held and grants flowed"}})
}

// Kill crashes a lock node with SIGKILL (its proxies refuse connections while
// it is down) and restarts it on the end op.
type Kill struct {
	env    Env
	rng    *rand.Rand
	k      clusters.Killer
	killed nodeSet
	// follower makes Kill pick a node that is not the leader.
	follower bool
	// part, when set, makes Kill pick a lock node of that part of a
	// clusters.Parted topology (NewKillPart), whatever leads.
	part  string
	parts clusters.Parted
	since time.Time // when the last kill struck
}

// kind returns the nemesis kind's name.
func (n *Kill) kind() string {
	if n.part != "" {
		return "kill-" + n.part
	}
	if n.follower {
		return "kill-follower"
	}
	return "kill"
}

var _ Nemesis = (*Kill)(nil)

func newKillFollower(env Env, rng *rand.Rand) (Nemesis, error) {
	if _, ok := env.Cluster().(clusters.Primary); !ok {
		return nil, fmt.Errorf("kill-follower nemesis: %w", clusters.ErrUnsupported)
	}
	if n := len(lockNodes(env.Cluster())); n == 1 {
		return nil, fmt.Errorf("kill-follower nemesis: the cluster has one lock node, no follower: %w", clusters.ErrUnsupported)
	}
	n, err := newKill(env, rng)
	if err != nil {
		return nil, err
	}
	n.(*Kill).follower = true
	return n, nil
}

func newKill(env Env, rng *rand.Rand) (Nemesis, error) {
	k, ok := env.Cluster().(clusters.Killer)
	if !ok {
		return nil, fmt.Errorf("kill nemesis: %w", clusters.ErrUnsupported)
	}
	if err := clusters.Lacks(env.Cluster(), "kill", clusters.CmdKill, clusters.CmdStart+"|"+clusters.CmdRestart); err != nil {
		return nil, err
	}
	return &Kill{env: env, rng: rng, k: k}, nil
}

// Fs returns kill and restart.
func (n *Kill) Fs() (string, string) { return history.FKill, history.FRestart }

// Invoke kills one lock node (kill) or restarts every killed node (restart).
func (n *Kill) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FKill:
		var lock []string
		for _, node := range n.env.Cluster().Nodes() {
			if node.Role == "lock" {
				lock = append(lock, node.Name)
			}
		}
		if len(lock) == 0 {
			return completed(op, nil, errors.New("no lock node to kill"))
		}
		node, what := lock[n.rng.IntN(len(lock))], ""
		if n.part != "" {
			lock = n.parts.PartNodes(n.part)
			if len(lock) == 0 {
				return completed(op, nil, fmt.Errorf("no %s node to kill", n.part))
			}
			node, what = lock[n.rng.IntN(len(lock))], n.part+" node "
		} else if p, ok := n.env.Cluster().(clusters.Primary); ok {
			leader, err := leaderOf(ctx, n.env, p)
			if err != nil {
				return completed(op, nil, err)
			}
			node, what = leader, "leader "
			if n.follower {
				var followers []string
				for _, l := range lock {
					if l != leader {
						followers = append(followers, l)
					}
				}
				if len(followers) == 0 {
					return completed(op, nil, errors.New("no follower to kill"))
				}
				node, what = followers[n.rng.IntN(len(followers))], "follower "
			}
		}
		hit := strikeHit(ctx, n.env, n.kind())
		if err := n.k.Kill(ctx, node); err != nil {
			return completed(op, nil, err)
		}
		n.killed.add(node, node)
		n.since = time.Now()
		return completed(op, &history.Value{Extra: &history.Extra{Nodes: []string{node}, Detail: verbOf(n.env.Cluster(), "kill", "SIGKILL") + " " + what + node, Hit: hit}}, nil)
	case history.FRestart:
		nodes, err := n.killed.undoAll(ctx, n.k.Restart)
		return completed(op, &history.Value{Extra: &history.Extra{Nodes: nodes, Detail: "restarted", Hit: endHit(n.kind(), time.Since(n.since), leaseOf(n.env))}}, err)
	}
	return completed(op, nil, fmt.Errorf("kill nemesis cannot %q", op.F))
}

// Heal restarts every node this nemesis killed.
func (n *Kill) Heal(ctx context.Context) error {
	_, err := n.killed.undoAll(ctx, n.k.Restart)
	return err
}

// NewKillPart returns the New of a nemesis kind that kills a lock node of
// the named part of a clusters.Parted topology (a service's own fault, such
// as the combined redis-zk topology's kill-redis), whatever leads, and
// restarts it after the fault duration. Its kind is "kill-" + part; its
// ops say "SIGKILL <part> node <name>".
func NewKillPart(part string) func(env Env, rng *rand.Rand) (Nemesis, error) {
	return func(env Env, rng *rand.Rand) (Nemesis, error) {
		parts, ok := env.Cluster().(clusters.Parted)
		if !ok || len(parts.PartNodes(part)) == 0 {
			return nil, fmt.Errorf("kill-%s nemesis: no %s part: %w", part, part, clusters.ErrUnsupported)
		}
		n, err := newKill(env, rng)
		if err != nil {
			return nil, err
		}
		k := n.(*Kill)
		k.part, k.parts = part, parts
		return k, nil
	}
}
