package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// The restart-lose fault's op names: the start op crashes a lock node and
// starts it again with its data gone; the end op, after the fault
// duration, has nothing to undo.
const (
	fRestartLose    = "restart-lose"
	fRestartLoseEnd = "restart-lose-end"
)

func init() {
	register(Kind{Name: "restart-lose", Words: &history.FaultWords{F: fRestartLose, Why: lostDataWhy}, New: newRestartLose,
		Summary: "SIGKILL a lock node (for RedLock one that holds the holder's key, preferring a grant on a bare majority) and start it again at once " +
			"with its data deleted, as a Redis master with no fsync comes back: without the keys it granted (antirez's \"delayed restarts\" caveat, " +
			"redsync#186); a member of a replicated service comes back with an empty data directory. The end op has nothing to undo",
		Ops: history.FaultOps{Start: fRestartLose, End: fRestartLoseEnd, Class: history.ClassNode, Exercise: history.ExerciseNode}})
}

// restartLoseAim bounds how long the start op looks for a grant that rests
// on a bare majority of the lock nodes before it strikes a node under any
// holder's key.
const restartLoseAim = 5 * time.Second

// RestartLose crashes a lock node (SIGKILL) and starts it again at once
// with its data files deleted (clusters.Wiper): what a node whose writes
// were never fsynced comes back as. The wipe rather than a topology started
// without persistence keeps the fault to its node and op: `kill` in the
// same run still restarts nodes with their keys, and the history says
// which restart lost what.
//
// On a cluster of independent nodes whose keys it can read
// (clusters.KeyReader: Redis, RedLock's five masters), it aims at a holder's key: it waits up to restartLoseAim for a grant
// whose key is set on just a majority of the lock nodes (RedLock's holder
// with "exactly a majority" of redsync#186), else takes any holder's, and
// restarts one of the nodes the key is on; the Hit names the node, the
// keys it lost and the nodes the key was on. Elsewhere (ZooKeeper, etcd)
// it restarts the leader (or, for Sentinel, the master, whose replicas
// then resync from it empty) once a lock is held; the Hit names the keys
// the node lost where it can read them.
type RestartLose struct {
	env  Env
	rng  *rand.Rand
	w    clusters.Wiper
	keys clusters.KeyReader // nil when the nodes' keys cannot be read
	// aim bounds the wait for a bare-majority grant (tests shorten it).
	aim time.Duration

	down  nodeSet // nodes whose restart failed, for Heal
	since time.Time
}

var _ Nemesis = (*RestartLose)(nil)

func newRestartLose(env Env, rng *rand.Rand) (Nemesis, error) {
	w, ok := env.Cluster().(clusters.Wiper)
	if !ok {
		return nil, fmt.Errorf("restart-lose nemesis: the cluster cannot restart a lock node with its data gone %s: %w",
			clusters.Where(false, isA[clusters.Wiper]), clusters.ErrUnsupported)
	}
	if _, ok := env.Cluster().(clusters.Killer); !ok {
		return nil, fmt.Errorf("restart-lose nemesis: the cluster cannot restart a lock node (no clusters.Killer): %w", clusters.ErrUnsupported)
	}
	if err := clusters.Lacks(env.Cluster(), "restart-lose", clusters.CmdRestartEmpty); err != nil {
		return nil, err
	}
	n := &RestartLose{env: env, rng: rng, w: w, aim: restartLoseAim}
	n.keys, _ = env.Cluster().(clusters.KeyReader)
	return n, nil
}

// Fs returns restart-lose and restart-lose-end.
func (n *RestartLose) Fs() (string, string) { return fRestartLose, fRestartLoseEnd }

// Invoke restarts a node empty (restart-lose); restart-lose-end only closes
// the window, in which the node served without what it had lost.
func (n *RestartLose) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case fRestartLose:
		v, err := n.strike(ctx)
		return completed(op, v, err)
	case fRestartLoseEnd:
		err := n.Heal(ctx)
		return completed(op, &history.Value{
			Extra: &history.Extra{Detail: "nothing to undo: the node has served, empty, since it restarted", Hit: endHit("restart-lose", time.Since(n.since), leaseOf(n.env))},
		}, err)
	}
	return completed(op, nil, fmt.Errorf("restart-lose nemesis cannot %q", op.F))
}

// aimed is the node a restart-lose strikes and what it knew of it then.
type aimed struct {
	node   string
	holder Target
	keys   map[string]string // the node's keys before the crash (KeyReader)
	heldOn []string          // the lock nodes holder.Key was on
}

// strike picks a node, restarts it empty and returns the op's value.
func (n *RestartLose) strike(ctx context.Context) (*history.Value, error) {
	lock := lockNodes(n.env.Cluster())
	if len(lock) == 0 {
		return nil, errors.New("no lock node to restart")
	}
	var a aimed
	var err error
	began := time.Now()
	_, primary := n.env.Cluster().(clusters.Primary)
	if n.keys != nil && !primary {
		a, err = n.aimAtKey(ctx, lock)
	} else {
		a, err = n.aimAtNode(ctx, lock)
	}
	if err != nil {
		return nil, err
	}
	if n.keys != nil && a.keys == nil {
		if a.keys, err = n.keys.NodeKeys(ctx, a.node); err != nil {
			return nil, err
		}
	}
	hit := nodeHit("restart-lose", n.env)
	hit.Node, hit.Key, hit.Holder, hit.HeldOn = a.node, a.holder.Key, a.holder.Key != "", a.heldOn
	hit.Waited = time.Since(began)
	for k := range a.keys {
		hit.Lost = append(hit.Lost, k)
	}
	sort.Strings(hit.Lost)
	if err := n.w.RestartEmpty(ctx, a.node); err != nil {
		n.down.add(a.node, a.node)
		return nil, err
	}
	n.since = time.Now() // the window opens once the node serves, empty
	return &history.Value{Extra: &history.Extra{Nodes: []string{a.node}, Hit: hit, Detail: restartDetail(a, hit.Lost)}}, nil
}

// restartDetail tells a restart-lose in words.
func restartDetail(a aimed, lost []string) string {
	s := "SIGKILL " + a.node + ", deleted its data and started it again empty"
	switch {
	case len(lost) > 0:
		s += "; it lost " + plural(len(lost), "key ", "keys ") + strings.Join(lost, ", ")
	case a.keys != nil:
		s += "; it held no key"
	}
	if a.holder.Key != "" && len(a.heldOn) > 0 {
		s += fmt.Sprintf("; process %d's lock %s was on %s", a.holder.Process, a.holder.Key, strings.Join(a.heldOn, ", "))
	}
	return s
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// aimAtKey waits up to n.aim for a holder whose key is on just a majority
// of the lock nodes and picks one of those nodes; when none comes in time,
// a node under any holder's key; with no holder at all, a node at random.
// Under an Aim (a fault fired by a lock event) it looks at the aimed
// holder's key first and strikes under it at once when that key is on
// just a majority; else it searches as without one.
func (n *RestartLose) aimAtKey(ctx context.Context, lock []string) (aimed, error) {
	quorum := len(lock)/2 + 1
	if aim, ok := AimOf(ctx); ok {
		if t, err := aim(); err == nil && t.Key != "" {
			if a := n.readKey(ctx, lock, t); len(a.heldOn) > 0 && len(a.heldOn) <= quorum {
				return a, nil
			}
		}
	}
	type grant struct {
		process int
		key     string
	}
	// A grant is looked at once, when it appears: a worker that is granted
	// the same key again was not among the holders in between.
	var prev map[grant]bool
	var best aimed
	deadline := time.Now().Add(n.aim)
	for {
		now := make(map[grant]bool)
		for _, h := range n.env.Holders() {
			g := grant{h.Process, h.Key}
			now[g] = true
			if h.Key == "" || prev[g] {
				continue
			}
			a := n.readKey(ctx, lock, h)
			if len(a.heldOn) == 0 {
				continue
			}
			if len(a.heldOn) <= quorum {
				return a, nil
			}
			best = a
		}
		prev = now
		if time.Now().After(deadline) || !sleep(ctx, aimPoll) {
			break
		}
	}
	if ctx.Err() != nil {
		return aimed{}, ctx.Err()
	}
	if best.node == "" {
		best.node = lock[n.rng.IntN(len(lock))]
	}
	return best, nil
}

// readKey reads every lock node's keys and returns h's key's nodes (those
// holding the value most of them hold: the holder's owner, where a
// rival's failed round may still have left its own) with one of them
// picked, and that node's keys. A node it cannot read (down) holds
// nothing.
func (n *RestartLose) readKey(ctx context.Context, lock []string, h Target) aimed {
	on, all := keyNodes(ctx, n.keys, lock, h.Key)
	if len(on) == 0 {
		return aimed{holder: h}
	}
	node := on[n.rng.IntN(len(on))]
	return aimed{node: node, holder: h, keys: all[node], heldOn: on}
}

// keyNodes reads every lock node's keys and returns, sorted, the nodes
// that hold key with the value most of them hold (the holder's owner,
// where a rival's failed round may still have left its own), and each
// node's keys. A node it cannot read (down) holds nothing.
func keyNodes(ctx context.Context, keys clusters.KeyReader, lock []string, key string) ([]string, map[string]map[string]string) {
	vals := make(map[string][]string) // value -> nodes
	all := make(map[string]map[string]string)
	for _, node := range lock {
		ks, err := keys.NodeKeys(ctx, node)
		if err != nil {
			continue // down (another fault's): it holds nothing now
		}
		all[node] = ks
		if v, ok := ks[key]; ok {
			vals[v] = append(vals[v], node)
		}
	}
	var on []string
	for _, nodes := range vals {
		if len(nodes) > len(on) {
			on = nodes
		}
	}
	sort.Strings(on)
	return on, all
}

// aimAtNode waits (bounded) for a holder and picks the leader, where the
// cluster has one, else a lock node at random.
//
// The leader is looked up before the wait for a holder, as kill does: on a
// loaded machine the lookup can outlast a 10 ms critical section, and a
// holder seen before it would be gone when the node is struck.
func (n *RestartLose) aimAtNode(ctx context.Context, lock []string) (aimed, error) {
	var a aimed
	p, primary := n.env.Cluster().(clusters.Primary)
	if primary {
		leader, err := leaderOf(ctx, n.env, p)
		if err != nil {
			return aimed{}, err
		}
		a.node = leader
	}
	awaitHolder(ctx, n.env, nodeAimWait)
	if hs := n.env.Holders(); len(hs) > 0 {
		a.holder = hs[n.rng.IntN(len(hs))]
	}
	if !primary {
		a.node = lock[n.rng.IntN(len(lock))]
	}
	return a, nil
}

// Heal starts again every node whose restart failed (with whatever data it
// has left).
func (n *RestartLose) Heal(ctx context.Context) error {
	k, ok := n.env.Cluster().(clusters.Killer)
	if !ok {
		return nil
	}
	_, err := n.down.undoAll(ctx, k.Restart)
	return err
}

// lostDataWhy says how a lock node restarted with its data gone (the
// restart-lose nemesis: Hit.Node) lets a second client in, or "" for
// another fault: the node came back without the keys it had granted, so a
// holder's key that was on it is on fewer nodes, and a rival can be
// granted it where it needs only the nodes that are free. It reads the
// start op's Hit alone: the node, the keys it lost, and the nodes the
// struck holder's key was on.
func lostDataWhy(f history.Fault) string {
	if f.Hit == nil || f.Hit.Node == "" {
		return ""
	}
	node := f.Hit.Node
	s := node + " was killed and restarted with its data gone"
	switch len(f.Hit.Lost) {
	case 0:
		return s + ", and came back empty"
	case 1:
		s += " and lost key " + f.Hit.Lost[0]
	default:
		s += " and lost keys " + history.JoinAnd(f.Hit.Lost)
	}
	key := f.Hit.Key
	if key == "" || !slices.Contains(f.Hit.Lost, key) || len(f.Hit.HeldOn) == 0 {
		return s + ", so it could grant them again while their holders still held them"
	}
	left := slices.DeleteFunc(slices.Clone(f.Hit.HeldOn), func(n string) bool { return n == node })
	s += ", which its holder had on " + history.JoinAnd(f.Hit.HeldOn) + "; "
	if len(left) == 0 {
		return s + "so " + key + " was free everywhere while it was still held"
	}
	return s + "with " + node + "'s copy gone it was left on " + history.JoinAnd(left) +
		" only, so the other nodes could grant " + key + " again while it was still held"
}
