package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// The ops of the partitions between servers (partition-majority,
// partition-bridge, partition-ring, swizzle): FPartitionServers cuts links
// between lock servers, FHealServers restores every one it cut.
const (
	FPartitionServers = "partition-servers"
	FHealServers      = "heal-servers"
)

// serverPartitionOps are the ops every partition between servers records.
var serverPartitionOps = history.FaultOps{Start: FPartitionServers, End: FHealServers,
	Class: history.ClassNetwork, Exercise: history.ExerciseNode}

// peerPlan is what one partition between servers cuts: Cuts in order and,
// for a fault whose links go one at a time (swizzle), Restores in order.
// A plan with no Restores cuts every link at once and keeps them cut until
// the end op.
type peerPlan struct {
	Cuts, Restores [][2]string
	// Detail says what the plan does, for people.
	Detail string
}

// gradual says the plan cuts and restores its links one at a time.
func (p peerPlan) gradual() bool { return len(p.Restores) > 0 }

// peerShape makes the plan of one fault over the servers in order (a
// random order of the cluster's, at least as many as the shape needs),
// drawing whatever else it picks from rng.
type peerShape func(rng *rand.Rand, order []string) peerPlan

// registerPeerShape registers a partition between servers: kind name, the
// fewest servers its shape needs, the shape and its summary. A
// single-master Redis design runs it on the Sentinel topology (Replicated),
// whose servers are its redis nodes and sentinels.
func registerPeerShape(name string, least int, shape peerShape, summary string) {
	Register(Kind{Name: name, Summary: summary, Ops: serverPartitionOps, Replicated: true,
		New: func(env Env, rng *rand.Rand) (Nemesis, error) {
			return newServerPartition(env, rng, name, least, shape)
		}})
}

// ServerPartition cuts the links between lock servers into a shape (its
// peerShape) and restores them on the end op; clients still reach every
// server. The shapes are the partitions of Jepsen's nemesis library and
// FoundationDB's swizzle: the servers, not a client, are split.
type ServerPartition struct {
	env   Env
	rng   *rand.Rand
	pc    clusters.PeerCutter
	kind  string
	shape peerShape
	nodes []string

	mu      sync.Mutex
	since   time.Time          // when the last fault struck
	stop    context.CancelFunc // stops a gradual plan's steps, nil when none run
	stopped chan struct{}
	err     error // the first error of a step
}

var _ Nemesis = (*ServerPartition)(nil)

func newServerPartition(env Env, rng *rand.Rand, kind string, least int, shape peerShape) (Nemesis, error) {
	pc, ok := env.Cluster().(clusters.PeerCutter)
	if !ok {
		return nil, fmt.Errorf("%s nemesis: needs lock servers whose links to one another can be cut pair by pair %s: %w",
			kind, clusters.Where(true, isA[clusters.PeerCutter]), clusters.ErrUnsupported)
	}
	nodes := pc.PeerNodes()
	if len(nodes) < least {
		return nil, fmt.Errorf("%s nemesis: its shape needs at least %d servers, the cluster has %d (a replicated service: give --nodes 5): %w",
			kind, least, len(nodes), clusters.ErrUnsupported)
	}
	return &ServerPartition{env: env, rng: rng, pc: pc, kind: kind, shape: shape, nodes: nodes}, nil
}

// Fs returns partition-servers and heal-servers.
func (n *ServerPartition) Fs() (string, string) { return FPartitionServers, FHealServers }

// Invoke cuts the servers' links into the nemesis's shape
// (partition-servers) or restores every link it cut (heal-servers).
func (n *ServerPartition) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case FPartitionServers:
		if err := n.Heal(ctx); err != nil {
			return completed(op, nil, err)
		}
		plan := n.shape(n.rng, shuffled(n.rng, n.nodes))
		hit := strikeHit(ctx, n.env, n.kind)
		hit.Shape, hit.Cuts, hit.Restores = strings.TrimPrefix(n.kind, "partition-"), plan.Cuts, plan.Restores
		first := plan.Cuts
		if plan.gradual() {
			first = plan.Cuts[:1]
		} else {
			hit.Reach = reach(n.nodes, plan.Cuts)
		}
		if err := n.pc.CutPeers(ctx, n.kind, first); err != nil {
			return completed(op, nil, errors.Join(err, n.pc.HealPeers(ctx, n.kind, nil)))
		}
		n.begin(plan)
		return completed(op, &history.Value{Extra: &history.Extra{Nodes: n.nodes, Detail: plan.Detail, Hit: hit}}, nil)
	case FHealServers:
		n.mu.Lock()
		since := n.since
		n.mu.Unlock()
		err := n.Heal(ctx)
		return completed(op, &history.Value{
			Extra: &history.Extra{Nodes: n.nodes, Detail: "links between the servers restored", Hit: endHit(n.kind, time.Since(since), leaseOf(n.env))},
		}, err)
	}
	return completed(op, nil, fmt.Errorf("%s nemesis cannot %q", n.kind, op.F))
}

// faultSpanner is an Env that says how long each fault lasts.
type faultSpanner interface{ FaultDuration() time.Duration }

// spanOf returns how long a fault lasts: what env says, else the runner's
// default of three leases.
func spanOf(env Env) time.Duration {
	if s, ok := env.(faultSpanner); ok && s.FaultDuration() > 0 {
		return s.FaultDuration()
	}
	return 3 * leaseOf(env)
}

// minPeerStep bounds how fast a gradual plan steps.
const minPeerStep = 10 * time.Millisecond

// begin records the fault's start and, for a gradual plan, runs its later
// steps: the other cuts one at a time, then the restores, evenly spread
// over the fault's span so that the last restore comes before the end op.
func (n *ServerPartition) begin(plan peerPlan) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.since, n.err = time.Now(), nil
	if !plan.gradual() {
		return
	}
	steps := len(plan.Cuts) - 1 + len(plan.Restores)
	step := max(spanOf(n.env)/time.Duration(steps+1), minPeerStep)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	n.stop, n.stopped = cancel, stopped
	go func() {
		defer close(stopped)
		t := time.NewTicker(step)
		defer t.Stop()
		for k := 1; k <= steps; k++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			var err error
			if k < len(plan.Cuts) {
				err = n.pc.CutPeers(ctx, n.kind, plan.Cuts[k:k+1])
			} else {
				r := k - len(plan.Cuts)
				err = n.pc.HealPeers(ctx, n.kind, plan.Restores[r:r+1])
			}
			if err != nil {
				n.mu.Lock()
				n.err = err
				n.mu.Unlock()
				return
			}
		}
	}()
}

// Heal stops a gradual plan's steps and restores every link the nemesis
// cut. It is idempotent.
func (n *ServerPartition) Heal(ctx context.Context) error {
	n.mu.Lock()
	stop, stopped, stepErr := n.stop, n.stopped, n.err
	n.stop, n.err = nil, nil
	n.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
	if stepErr != nil {
		stepErr = fmt.Errorf("%s stopped stepping early: %w", n.kind, stepErr)
	}
	return errors.Join(stepErr, n.pc.HealPeers(ctx, n.kind, nil))
}

// reach maps every node to the others it still reaches once cuts are
// made, in nodes' order.
func reach(nodes []string, cuts [][2]string) map[string][]string {
	cut := make(map[[2]string]bool)
	for _, p := range cuts {
		cut[p], cut[[2]string{p[1], p[0]}] = true, true
	}
	out := make(map[string][]string, len(nodes))
	for _, a := range nodes {
		out[a] = []string{}
		for _, b := range nodes {
			if a != b && !cut[[2]string{a, b}] {
				out[a] = append(out[a], b)
			}
		}
	}
	return out
}

// sides cuts every link between the servers of as and those of bs; the
// detail says so, followed by tail.
func sides(as, bs []string, tail string) peerPlan {
	return peerPlan{Cuts: pairsBetween(as, bs), Detail: fmt.Sprintf("%s cut off from %s%s", listed(as), listed(bs), tail)}
}

// pairsBetween returns every pair of a node of as and a node of bs.
func pairsBetween(as, bs []string) [][2]string {
	var pairs [][2]string
	for _, a := range as {
		for _, b := range bs {
			pairs = append(pairs, [2]string{a, b})
		}
	}
	return pairs
}

// shuffled returns nodes in an order drawn from rng.
func shuffled(rng *rand.Rand, nodes []string) []string {
	out := slices.Clone(nodes)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// listed renders nodes as "a, b, c".
func listed(nodes []string) string { return strings.Join(nodes, ", ") }
