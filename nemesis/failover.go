package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "failover", Words: &history.FaultWords{F: history.FFailover, Describe: describeFailover, Why: failoverWhy, First: true},
		Exercise: &history.ExerciseRule{F: history.FFailover, Shape: history.ExerciseFailover, Matches: func(f history.Fault) bool { return !isKillFailover(f) }, Missed: "no failover promoted a replica while a lock was held or the old master still granted locks"}, Replicated: true, New: newFailover,
		Summary: "split brain: cut the master off from its replicas and its failover managers (where keys have masters of " +
			"their own: the master of the held key off from every other node, its replica then takes over) while the holder and about half " +
			"the workers still reach it (and only it), wait for a replica to be promoted, heal after the fault " +
			"duration and wait until the old master is a replica again (its writes since the cut are lost)"})
	register(Kind{Name: "failover-kill",
		Exercise: &history.ExerciseRule{F: history.FFailover, Shape: history.ExerciseFailoverKill, Matches: isKillFailover, Missed: "no failover-kill promoted a replica after the killed master had acknowledged a grant it had not replicated"}, Replicated: true, New: newFailoverKill,
		Summary: "delay the master's replication by 500 ms, SIGKILL it (its last grants were never replicated), " +
			"wait for the failover managers to promote a replica, restart the old master after the fault duration (it rejoins as a replica)"})
}

// promotionWait bounds how long a failover waits for the sentinels to
// promote a replica, and its heal for the old master to be a replica again.
const promotionWait = 15 * time.Second

// replicationLag is how far behind failover-kill lets the replicas fall
// before it kills the master: the grants of its last replicationLag are
// acknowledged but not replicated. It stays below Sentinel's
// down-after-milliseconds, so the sentinels still see a healthy master.
const replicationLag = 500 * time.Millisecond

// lagger is a cluster whose replication can be delayed.
type lagger interface {
	LagReplication(ctx context.Context, node string, d time.Duration) error
}

// grantWait bounds how long failover-kill waits for a fresh grant to kill
// the master right after.
const grantWait = 10 * time.Second

// newGrant waits at most wait until some worker is granted a lock that no
// worker held when it was called, and returns that worker.
func newGrant(ctx context.Context, env Env, wait time.Duration) (Target, bool) {
	before := make(map[int]bool)
	for _, t := range env.Holders() {
		before[t.Process] = true
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for _, t := range env.Holders() {
			if !before[t.Process] {
				return t, true
			}
		}
		for p := range before {
			if !slices.ContainsFunc(env.Holders(), func(t Target) bool { return t.Process == p }) {
				delete(before, p) // released: its next grant is new
			}
		}
		sleep(ctx, 2*time.Millisecond)
	}
	return Target{}, false
}

// demotionWait bounds how long a heal waits for the old master to be a
// replica again: the sentinels demote it only after seeing it for about 8 s.
const demotionWait = 20 * time.Second

// Failover replaces the master of a Sentinel topology: it cuts the master
// off (or kills it), waits until the sentinels name another master, and
// undoes the fault on heal. Its start op names the old master in Nodes and,
// for a cut, the processes left on the old master's side in Targets.
type Failover struct {
	env  Env
	rng  *rand.Rand
	pr   clusters.Primary
	p    clusters.Promoter
	k    clusters.Killer // failover-kill only
	mu   sync.Mutex
	old  string // the master the fault acted on, "" when none is in force
	kill bool
}

var _ Nemesis = (*Failover)(nil)

func newFailover(env Env, rng *rand.Rand) (Nemesis, error) {
	pr, ok1 := env.Cluster().(clusters.Primary)
	p, ok2 := env.Cluster().(clusters.Promoter)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("failover nemesis: needs a topology with replicas to promote %s: %w",
			clusters.Where(true, isA[clusters.Promoter]), clusters.ErrUnsupported)
	}
	return &Failover{env: env, rng: rng, pr: pr, p: p}, nil
}

func newFailoverKill(env Env, rng *rand.Rand) (Nemesis, error) {
	n, err := newFailover(env, rng)
	if err != nil {
		return nil, err
	}
	k, ok := env.Cluster().(clusters.Killer)
	if !ok {
		return nil, fmt.Errorf("failover-kill nemesis: %w", clusters.ErrUnsupported)
	}
	if err := clusters.Lacks(env.Cluster(), "failover-kill", clusters.CmdKill, clusters.CmdStart+"|"+clusters.CmdRestart); err != nil {
		return nil, err
	}
	if _, keyed := env.Cluster().(clusters.KeyPrimary); keyed {
		// Redis Cluster promotes a killed master's replica only after
		// cluster-node-timeout (15 s) and a vote: no promotion to wait for.
		return nil, fmt.Errorf("failover-kill nemesis (not on Redis Cluster: use failover): %w", clusters.ErrUnsupported)
	}
	f := n.(*Failover)
	f.k, f.kill = k, true
	return f, nil
}

// Fs returns failover and heal.
func (n *Failover) Fs() (string, string) { return history.FFailover, history.FHeal }

// Invoke starts a failover or heals the one in force.
func (n *Failover) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FFailover:
		return n.start(ctx, op)
	case history.FHeal:
		v, err := n.heal(ctx)
		return completed(op, v, err)
	}
	return completed(op, nil, fmt.Errorf("failover nemesis cannot %q", op.F))
}

func (n *Failover) start(ctx context.Context, op history.Op) history.Op {
	// On Redis Cluster the master to fail over is the one of the key the
	// holder staying with it holds, so the side is picked first.
	kp, keyed := n.env.Cluster().(clusters.KeyPrimary)
	var stay []Target
	if keyed && !n.kill {
		stay = n.pickSide(ctx)
	}
	old, err := n.pr.Leader(ctx)
	for _, t := range stay {
		if t.Key != "" {
			old, err = kp.KeyLeader(ctx, t.Key)
			break
		}
	}
	if err != nil {
		return completed(op, nil, err)
	}
	kind := "failover"
	if n.kill {
		kind = "failover-kill"
	}
	v := &history.Value{Extra: &history.Extra{Nodes: []string{old}, Hit: nodeHit(kind, n.env)}}
	var what string
	if n.kill {
		what = "SIGKILL master " + old
		if l, ok := n.env.Cluster().(lagger); ok {
			// Without lag, local replication is sub-millisecond and the
			// killed master has replicated every grant it acknowledged.
			if err := l.LagReplication(ctx, old, replicationLag); err != nil {
				return completed(op, nil, err)
			}
			sleep(ctx, replicationLag)
			what = fmt.Sprintf("delayed replication from master %s by %s, then SIGKILL it", old, replicationLag)
			if t, ok := newGrant(ctx, n.env, grantWait); ok {
				v.Mut().Targets = nil // the killed master's side has no workers
				what += fmt.Sprintf(" right after it granted a lock to process %d", t.Process)
				v.Hit.Unreplicated, v.Hit.Holder, v.Hit.Key = true, true, t.Key
			}
		}
		if err := n.k.Kill(ctx, old); err != nil {
			return completed(op, nil, err)
		}
	} else {
		if !keyed {
			stay = n.pickSide(ctx)
		}
		slots := make([]int, len(stay))
		for i, t := range stay {
			slots[i] = t.Slot
			v.Mut().Targets = append(v.Ext().Targets, t.Process)
		}
		if err := n.p.CutMaster(ctx, old, slots); err != nil {
			_ = n.p.HealMaster(context.WithoutCancel(ctx))
			return completed(op, nil, err)
		}
		what = n.p.FailoverWords().Cut(old)
	}
	n.mu.Lock()
	n.old = old
	n.mu.Unlock()
	began := time.Now()
	promoted, err := n.p.WaitPromotion(ctx, old, promotionWait)
	parts := []string{what}
	if err != nil {
		parts = append(parts, fmt.Sprintf("no promotion within %s (%v)", promotionWait, err))
	} else {
		parts = append(parts, n.p.FailoverWords().Promoted(old, promoted, time.Since(began)))
		v.Hit.Promoted, v.Hit.Takeover = true, keyed
	}
	// The wait for the promotion is the fault's own, not a trigger's
	// lateness.
	v.Hit.Waited = time.Since(began)
	if !n.kill {
		if len(v.Ext().Targets) == 0 {
			parts = append(parts, "no worker still reaches "+old)
		} else {
			parts = append(parts, fmt.Sprintf("%s still reach %s and nothing else", processWords(v.Ext().Targets), old))
		}
	}
	// The fault is in force whether or not a replica was promoted: the
	// detail says which.
	v.Mut().Detail = strings.Join(parts, "; ")
	return completed(op, v, nil)
}

// pickSide returns the workers that stay with the old master: one lock
// holder (if any holds a lock within a second) and about half the others,
// chosen with the seeded source.
func (n *Failover) pickSide(ctx context.Context) []Target {
	var stay []Target
	holder, err := pickHolder(ctx, n.env, n.rng, time.Second)
	if err == nil {
		stay = append(stay, holder)
	}
	var others []Target
	for _, t := range n.env.Workers() {
		if err != nil || t.Slot != holder.Slot {
			others = append(others, t)
		}
	}
	n.rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	stay = append(stay, others[:len(others)/2]...)
	sort.Slice(stay, func(i, j int) bool { return stay[i].Slot < stay[j].Slot })
	return stay
}

// heal undoes the fault in force: restores the cut links, or restarts the
// killed master (as a replica of the new one).
func (n *Failover) heal(ctx context.Context) (*history.Value, error) {
	n.mu.Lock()
	old := n.old
	n.mu.Unlock()
	if old == "" {
		return &history.Value{Extra: &history.Extra{Detail: "no failover in force"}}, nil
	}
	v := &history.Value{Extra: &history.Extra{Nodes: []string{old}}}
	var err error
	if n.kill {
		err = n.k.Restart(ctx, old)
		v.Mut().Detail = "restarted " + old
	} else {
		err = n.p.HealMaster(ctx)
		v.Mut().Detail = "links restored"
	}
	if err == nil {
		// The split brain lasts until the old master is a replica again:
		// the fault is in force until then.
		began := time.Now()
		if werr := n.p.WaitReplica(ctx, old, demotionWait); werr != nil {
			v.Mut().Detail += fmt.Sprintf("; %s was not a replica in sync within %s (%v)", old, demotionWait, werr)
		} else if n.kill {
			v.Mut().Detail += fmt.Sprintf("; it rejoined as a replica in %.1f s", time.Since(began).Seconds())
		} else {
			v.Mut().Detail += "; " + n.p.FailoverWords().Rejoined(old, time.Since(began))
		}
	}
	if err == nil {
		n.mu.Lock()
		n.old = ""
		n.mu.Unlock()
	}
	return v, err
}

// Heal undoes the failover in force, if any.
func (n *Failover) Heal(ctx context.Context) error {
	_, err := n.heal(ctx)
	return err
}

// processWords renders processes in plain words: "process 3", "processes
// 0, 3 and 4".
func processWords(ps []int) string {
	words := make([]string, len(ps))
	for i, p := range ps {
		words[i] = strconv.Itoa(p)
	}
	if len(ps) == 1 {
		return "process " + words[0]
	}
	return "processes " + strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// isKillFailover tells failover-kill's faults from failover's in a history
// without Hit: its start op says it SIGKILLed the master.
func isKillFailover(f history.Fault) bool { return strings.Contains(f.Detail, "SIGKILL") }

// describeFailover tells a failover in a story: the master lost, and the
// nemesis's detail (how it was lost, who was promoted, who stayed with the
// old master).
func describeFailover(f history.Fault) string {
	if len(f.Nodes) != 1 {
		return ""
	}
	s := "failover of master " + f.Nodes[0]
	if f.Detail != "" {
		s += " (" + f.Detail + ")"
	}
	return s
}

// failoverWhy says how a failover breaks a single-master lock: with
// processes left on the old master's side (Targets), a split brain; with
// none (the master was killed), the grants it had not yet replicated.
func failoverWhy(f history.Fault) string {
	promoted := "a replica was promoted"
	if takeover(f) {
		// Redis Cluster: the master's replica took its slots over.
		promoted = "the master's replica was promoted and took over its slots"
	}
	if len(f.Targets) > 0 {
		return promoted + " while the old master still granted locks to " + history.Procs(f.Targets) +
			" (split brain); grants acknowledged by the old master after the cut were never replicated, " +
			"so the new master granted the same locks again"
	}
	return promoted + " after the master was lost; grants the master had acknowledged " +
		"but not yet replicated were lost, so the new master granted the same locks again"
}

// takeover reports whether a failover's replica took its master's slots
// over (Redis Cluster) rather than being promoted by Sentinels.
func takeover(f history.Fault) bool {
	if f.Hit != nil && f.Hit.Promoted {
		return f.Hit.Takeover
	}
	return strings.Contains(f.Detail, "TAKEOVER")
}
