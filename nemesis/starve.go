package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// The ops of the starve faults.
const (
	// FStarve holds a worker to a small CPU quota; FUnstarve gives it its
	// CPU back.
	FStarve   = "starve"
	FUnstarve = "unstarve"
	// FStarveNode holds a lock server to a small CPU quota; FUnstarveNode
	// gives it its CPU back.
	FStarveNode   = "starve-node"
	FUnstarveNode = "unstarve-node"
)

func init() {
	Register(Kind{Name: "starve", New: newStarve,
		Summary: "hold the lock holder's worker process group to 1% of one CPU (10 ms per 1 s period, shared with two busy loops; a cgroup v2 cpu.max or v1 cpu.cfs_quota_us child cgroup, else a SIGSTOP/SIGCONT duty cycle) " +
			"for the fault duration: its goroutines (a renewal watchdog among them) run late, up to a second, instead of not at all; full CPU back after",
		Ops: history.FaultOps{Start: FStarve, End: FUnstarve, Class: history.ClassProcess, Exercise: history.ExerciseHolder}})
	Register(Kind{Name: "starve-server", New: newStarveServer,
		Summary: "hold a lock server's process (and its children; the leader where there is one) to 1% of one CPU for the fault duration, as starve does a worker: it answers late; full CPU back after",
		Ops:     history.FaultOps{Start: FStarveNode, End: FUnstarveNode, Class: history.ClassNode, Exercise: history.ExerciseNode}})
}

// Starvation's defaults: the share of one CPU a starved process gets, the
// period the quota is counted over (the longest a cgroup allows), and how
// many busy loops share it. Once the busy loops have spent the quota, every
// wake-up of the starved process waits for the next period; two spend it
// early in the period even on a loaded machine.
const (
	StarveQuota  = 0.01
	StarvePeriod = time.Second
	StarveLoad   = 2
)

// Starve holds the worker that holds a lock (its whole process group), or
// a lock server, to a small CPU quota for the fault's duration, then gives
// it its full CPU back. A SIGSTOP freezes every goroutine at once;
// starvation lets them run, late and a little at a time, which is how a
// Redisson watchdog under a Kubernetes CPU limit misses its renewals
// (redisson/redisson#5698, #2665). The mechanism is the first that works
// here (clusters.ThrottleProcs): a cgroup v2 or v1 child cgroup, else a
// duty cycle of SIGSTOP and SIGCONT.
type Starve struct {
	env Env
	rng *rand.Rand
	// server starves a lock server rather than a worker.
	server bool
	pids   clusters.PidLister
	// Quota, Period and Mechanism ("" for the best there is) configure the
	// throttle.
	Quota     float64
	Period    time.Duration
	Mechanism string
	// Load is how many busy loops share the cgroup with the starved
	// process (see clusters.ThrottleProcs): a lock client that mostly
	// waits needs less CPU than any quota, and only busy neighbours
	// make its wake-ups wait.
	Load int

	starved undoSet[*clusters.Throttle, starvedProc]
	// ready is a throttle made ahead of its fault (Prepare), nil for none.
	readyMu sync.Mutex
	ready   *clusters.Throttle
}

var _ Preparer = (*Starve)(nil)

// Prepare makes the next fault's throttle now (a cgroup and its busy
// loops take up to a second to make on a loaded machine), so that a starve
// fired by a lock event holds its target at once.
func (n *Starve) Prepare(context.Context) error {
	n.readyMu.Lock()
	defer n.readyMu.Unlock()
	if n.ready != nil {
		return nil
	}
	th, err := clusters.NewThrottle(n.Quota, n.Period, n.Mechanism, n.Load)
	if err != nil {
		return fmt.Errorf("starve: %w", err)
	}
	n.ready = th
	return nil
}

// starvedProc is what one throttle starves: a worker's process or a node,
// and since when.
type starvedProc struct {
	process int
	node    string
	at      time.Time
}

var _ Nemesis = (*Starve)(nil)

func newStarve(env Env, rng *rand.Rand) (Nemesis, error) {
	return &Starve{env: env, rng: rng, Quota: StarveQuota, Period: StarvePeriod, Load: StarveLoad}, nil
}

func newStarveServer(env Env, rng *rand.Rand) (Nemesis, error) {
	p, ok := env.Cluster().(clusters.PidLister)
	if !ok {
		return nil, fmt.Errorf("starve-server nemesis: the cluster's servers are not local processes (no clusters.PidLister): %w", clusters.ErrUnsupported)
	}
	return &Starve{env: env, rng: rng, server: true, pids: p, Quota: StarveQuota, Period: StarvePeriod, Load: StarveLoad}, nil
}

// kind returns the nemesis kind's name.
func (n *Starve) kind() string {
	if n.server {
		return "starve-server"
	}
	return "starve"
}

// Fs returns starve and unstarve (starve-node and unstarve-node for a
// server).
func (n *Starve) Fs() (string, string) {
	if n.server {
		return FStarveNode, FUnstarveNode
	}
	return FStarve, FUnstarve
}

// Invoke starves a holder or a lock server (the start op) or gives every
// starved process its CPU back (the end op).
func (n *Starve) Invoke(ctx context.Context, op history.Op) history.Op {
	start, end := n.Fs()
	switch op.F {
	case start:
		if n.server {
			return n.starveServer(ctx, op)
		}
		return n.starveHolder(ctx, op)
	case end:
		ss, err := n.starved.undoAll(ctx, release)
		v := &history.Value{Extra: &history.Extra{Detail: "full CPU back"}}
		var lasted time.Duration
		for _, s := range ss {
			lasted = max(lasted, time.Since(s.at))
			if s.node != "" {
				v.Mut().Nodes = append(v.Ext().Nodes, s.node)
			} else {
				v.Mut().Targets = append(v.Ext().Targets, s.process)
			}
		}
		sort.Ints(v.Ext().Targets)
		sort.Strings(v.Ext().Nodes)
		v.Mut().Hit = endHit(n.kind(), lasted, leaseOf(n.env))
		return completed(op, v, err)
	}
	return completed(op, nil, fmt.Errorf("%s nemesis cannot %q", n.kind(), op.F))
}

// starveHolder starves the process group of a holder inside its critical
// section. The throttle is made first, already starved by its busy loops,
// so that the holder waits from the moment it moves in.
func (n *Starve) starveHolder(ctx context.Context, op history.Op) history.Op {
	th, err := n.newThrottle()
	if err != nil {
		return completed(op, nil, fmt.Errorf("starve: %w", err))
	}
	// Held still a moment (SIGSTOP) while it moves, so that a holder
	// that writes its critical section's reply just before is picked
	// again (stopInCS), and a fast one cannot finish on its way in.
	t, waited, err := stopInCS(ctx, n.env, func() (Target, time.Duration, error) {
		return aimHolder(ctx, n.env, n.rng, aimWait, true)
	})
	if err != nil {
		return completed(op, nil, errors.Join(err, th.Release()))
	}
	err = th.Add(clusters.GroupPids(t.Pid))
	if err != nil || th.Mechanism != clusters.ThrottleDutyCycle {
		// A duty cycle continues it on its own at its next turn.
		err = errors.Join(err, resume(ctx, t.Pid))
	}
	if err != nil {
		return completed(op, nil, errors.Join(fmt.Errorf("starve process %d: %w", t.Process, err), th.Release()))
	}
	n.starved.add(th, starvedProc{process: t.Process, at: time.Now()})
	hit := holderHit(n.kind(), t, leaseOf(n.env))
	hit.Waited, hit.Mechanism, hit.Quota = waited, th.Mechanism, th.Quota
	return completed(op, &history.Value{
		Extra: &history.Extra{Targets: []int{t.Process}, Hit: hit, Detail: fmt.Sprintf("held process %d (worker pid %d%s) to %s of one CPU (%s)%s",
			t.Process, t.Pid, others(th.Procs()), percent(th.Quota), how(th), where(t))},
	}, nil)
}

// starveServer starves the server of a lock node (the leader, where there
// is one) and its children.
func (n *Starve) starveServer(ctx context.Context, op history.Op) history.Op {
	node, err := pickNode(ctx, n.env, n.rng)
	if err != nil {
		return completed(op, nil, err)
	}
	pid := n.pids.Pids()[node]
	if pid <= 0 {
		return completed(op, nil, fmt.Errorf("starve %s: its server is not running", node))
	}
	th, err := n.newThrottle()
	if err != nil {
		return completed(op, nil, fmt.Errorf("starve %s: %w", node, err))
	}
	hit := strikeHit(ctx, n.env, n.kind())
	if err := th.Add(clusters.TreePids(pid)); err != nil {
		return completed(op, nil, errors.Join(fmt.Errorf("starve %s: %w", node, err), th.Release()))
	}
	n.starved.add(th, starvedProc{node: node, at: time.Now()})
	hit.Mechanism, hit.Quota = th.Mechanism, th.Quota
	return completed(op, &history.Value{
		Extra: &history.Extra{Nodes: []string{node}, Hit: hit, Detail: fmt.Sprintf("held %s's server (pid %d%s) to %s of one CPU (%s)", node, pid, others(th.Procs()), percent(th.Quota), how(th))},
	}, nil)
}

// newThrottle makes the throttle of one fault, with the busy neighbours
// (Load) a cgroup needs to bite, or takes the one Prepare made.
func (n *Starve) newThrottle() (*clusters.Throttle, error) {
	n.readyMu.Lock()
	th := n.ready
	n.ready = nil
	n.readyMu.Unlock()
	if th != nil {
		return th, nil
	}
	return clusters.NewThrottle(n.Quota, n.Period, n.Mechanism, n.Load)
}

// others renders how many more processes than one a throttle holds.
func others(n int) string {
	switch n {
	case 0, 1:
		return ""
	case 2:
		return " and 1 more process"
	}
	return fmt.Sprintf(" and %d more processes", n-1)
}

// percent renders a share of a CPU: "2%", "0.5%".
func percent(q float64) string { return fmt.Sprintf("%.3g%%", 100*q) }

// how says how a throttle holds its processes.
func how(th *clusters.Throttle) string {
	if th.Mechanism == clusters.ThrottleDutyCycle {
		return fmt.Sprintf("a duty cycle of SIGCONT and SIGSTOP, %s period", seconds(th.Period))
	}
	return fmt.Sprintf("%s %s, %s period", th.Mechanism, th.Dir, seconds(th.Period))
}

// release gives a throttle's processes their CPU back.
func release(_ context.Context, th *clusters.Throttle) error { return th.Release() }

// pickNode chooses the lock node to strike: the leader where the cluster
// has one (leaderOf: on Redis Cluster the master of a held key's slot),
// else a random lock node.
func pickNode(ctx context.Context, env Env, rng *rand.Rand) (string, error) {
	if p, ok := env.Cluster().(clusters.Primary); ok {
		return leaderOf(ctx, env, p)
	}
	var lock []string
	for _, node := range env.Cluster().Nodes() {
		if node.Role == "lock" {
			lock = append(lock, node.Name)
		}
	}
	if len(lock) == 0 {
		return "", errors.New("no lock node to strike")
	}
	return lock[rng.IntN(len(lock))], nil
}

// Heal gives every starved process its full CPU back.
func (n *Starve) Heal(ctx context.Context) error {
	_, err := n.starved.undoAll(ctx, release)
	n.readyMu.Lock()
	th := n.ready
	n.ready = nil
	n.readyMu.Unlock()
	if th != nil {
		err = errors.Join(err, th.Release())
	}
	return err
}
