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

func init() {
	register(Kind{Name: "redlock-clock-jump", Words: &history.FaultWords{F: history.FClockJump, Why: jumpWhy},
		Exercise: &history.ExerciseRule{F: history.FClockJump, Shape: history.ExerciseRedlockJump, Missed: "no redlock-clock-jump landed while a worker held the lock on the jumped node and another tried to take it"}, ClockShim: true, New: newRedlockClockJump,
		Summary: "Kleppmann's RedLock timeline: cut all workers but one off from lock3 and lock4 and the last one off from lock0..lock2, " +
			"wait until one of the first group is granted the lock on lock0..lock2, give the last worker lock2 back, jump lock2's wall clock a minute forward (its key " +
			"expires), let the last worker lock lock2..lock4; the end op puts the clock back and heals"})
}

// clockJump is how far RedlockClockJump moves the shared node's wall clock:
// far past any lease a test uses, so the key expires at once.
const clockJump = time.Minute

// holderWait bounds how long the start op waits for a cut-off worker to hold
// the lock: client 2 cannot reach C meanwhile, so the wait is for client
// 1's side to let go of the lock it may hold and take it again. A fault
// should last longer, so that the jump lands well before the run ends.
const holderWait = 4 * time.Second

// holderPoll is how often it looks: a critical section can be a few
// milliseconds long.
const holderPoll = time.Millisecond

// redlockCluster is what RedlockClockJump needs of a cluster.
type redlockCluster interface {
	clusters.NodePartitioner
	clusters.Clocker
}

// RedlockClockJump drives Kleppmann's timeline against RedLock ("How to do
// distributed locking", 2016) with lock nodes A..E (lock0..lock4):
//
//  1. every live worker slot but one (client 1's side) is cut off from the
//     nodes past the majority (D and E), so they can lock only A, B and C;
//     the remaining slot (client 2) is cut off from A, B and C, so it locks
//     nothing while client 1's side takes the lock;
//  2. once one of them is granted the lock after the cut (on A, B and C),
//     client 2 is given C back (its links healed, A and B cut again) and
//     C's wall clock jumps a minute forward, so C expires client 1's key
//     at once;
//  3. client 2 reaches C, D and E and locks them: a majority, while
//     client 1 still believes it holds the lock.
//
// Client 2 is kept from C until client 1 holds it. When the two raced for
// C, a client 2 that takes the lock again as soon as it lets go (C is the
// first node its release frees and its next acquire takes, while client
// 1's attempts each wait out the node timeout on D and E) won every grant
// of the 4 s wait in 6 of 15 fault starts over ten scenario runs.
//
// The start op (clock-jump) does 1 and 2 and returns; 3 happens while the
// fault is in force. The end op (clock-reset) puts C's clock back and
// restores every cut link. With n lock nodes, A..C is the first majority
// n/2+1 of them and C the last of those.
type RedlockClockJump struct {
	env Env
	rng *rand.Rand
	c   redlockCluster
	// wait and poll bound the wait for a holder (tests shorten them).
	wait, poll time.Duration

	mu     sync.Mutex
	cut    map[int]bool // slots cut off from D and E
	jumped string       // the node whose clock is off, "" when none
}

var _ Nemesis = (*RedlockClockJump)(nil)

func newRedlockClockJump(env Env, rng *rand.Rand) (Nemesis, error) {
	cl := env.Cluster()
	if _, ok := cl.(clusters.Clocker); !ok {
		return nil, fmt.Errorf("redlock-clock-jump nemesis: the cluster cannot move a node's wall clock (no clusters.Clocker): %w", clusters.ErrUnsupported)
	}
	c, ok := cl.(redlockCluster)
	if !ok {
		return nil, fmt.Errorf("redlock-clock-jump nemesis: the cluster cannot cut a worker off from some nodes (no clusters.NodePartitioner): %w", clusters.ErrUnsupported)
	}
	if n := len(lockNodes(cl)); n < 3 {
		return nil, fmt.Errorf("redlock-clock-jump nemesis: %d lock nodes: needs at least 3 (RedLock uses 5)", n)
	}
	return &RedlockClockJump{env: env, rng: rng, c: c, wait: holderWait, poll: holderPoll, cut: make(map[int]bool)}, nil
}

// lockNodes returns the names of the cluster's lock nodes, in order.
func lockNodes(c clusters.Cluster) []string {
	var names []string
	for _, n := range c.Nodes() {
		if n.Role == "lock" {
			names = append(names, n.Name)
		}
	}
	return names
}

// Fs returns clock-jump and clock-reset.
func (n *RedlockClockJump) Fs() (string, string) { return history.FClockJump, history.FClockReset }

// Invoke runs the timeline's start (clock-jump) or undoes it (clock-reset).
func (n *RedlockClockJump) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FClockJump:
		v, err := n.start(ctx)
		return completed(op, v, err)
	case history.FClockReset:
		v, err := n.undo(ctx)
		return completed(op, v, err)
	}
	return completed(op, nil, fmt.Errorf("redlock-clock-jump nemesis cannot %q", op.F))
}

// start runs steps 1 and 2. When no cut-off worker gets the lock in time it
// heals what it cut and returns an error, so no fault is recorded.
func (n *RedlockClockJump) start(ctx context.Context) (*history.Value, error) {
	nodes := lockNodes(n.env.Cluster())
	q := len(nodes)/2 + 1
	majority, far, shared := nodes[:q], nodes[q:], nodes[q-1]

	var slots []int
	procs := make(map[int]int)
	for _, w := range n.env.Workers() {
		slots = append(slots, w.Slot)
		procs[w.Slot] = w.Process
	}
	if len(slots) < 2 {
		return nil, fmt.Errorf("%d live workers: the timeline needs two clients", len(slots))
	}
	n.rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	// Client 2 is the worker that holds the lock now, if one does: once
	// cut, it cannot take the lock again, and the next holder, once its
	// keys on lock0..lock2 are gone (deleted, or expired where its release
	// could not reach), is one of client 1's side.
	before := n.env.Holders()
	holding := make(map[int]bool)
	for _, h := range before {
		holding[h.Slot] = true
	}
	sort.SliceStable(slots, func(i, j int) bool { return !holding[slots[i]] && holding[slots[j]] })
	// All but one are cut off: a client that reaches only the majority
	// must win all of it, so with many free rivals it seldom would.
	side, other := slots[:len(slots)-1], slots[len(slots)-1]
	sort.Ints(side)
	// Client 2's side cannot reach A and B (Kleppmann's "due to a network
	// issue, A and B cannot be reached"), nor, until client 1 holds the
	// lock, C.
	near := majority[:q-1]
	cuts := map[int][]string{other: majority}
	for _, s := range side {
		cuts[s] = far
	}
	for _, s := range append(append([]int(nil), side...), other) {
		n.mu.Lock()
		n.cut[s] = true
		n.mu.Unlock()
		if err := n.c.PartitionNodes(ctx, s, cuts[s]); err != nil {
			return n.abort(ctx, fmt.Errorf("cut slot %d off from %s: %w", s, joinNames(cuts[s]), err))
		}
	}
	// A grant made before the cut, or while it was being made, may hold D
	// and E too: such holders count once seen without the lock.
	began := time.Now()
	holder, err := n.awaitHolder(ctx, side, append(before, n.env.Holders()...))
	waited := time.Since(began)
	if err != nil {
		return n.abort(ctx, err)
	}
	// Give client 2 C back: heal its links, then cut A and B again. In
	// between it may reach A and B for a moment, but client 1 holds them.
	if err := n.c.Heal(ctx, other); err != nil {
		return n.abort(ctx, fmt.Errorf("give slot %d %s back: %w", other, shared, err))
	}
	if err := n.c.PartitionNodes(ctx, other, near); err != nil {
		return n.abort(ctx, fmt.Errorf("cut slot %d off from %s: %w", other, joinNames(near), err))
	}
	n.mu.Lock()
	n.jumped = shared
	n.mu.Unlock()
	if err := n.c.SetClockOffset(ctx, shared, clockJump); err != nil {
		return n.abort(ctx, fmt.Errorf("jump %s's clock: %w", shared, err))
	}
	var cutProcs []string
	for _, s := range side {
		cutProcs = append(cutProcs, fmt.Sprint(procs[s]))
	}
	hit := holderHit("redlock-clock-jump", holder, leaseOf(n.env))
	hit.Holders, hit.Waited = len(n.env.Holders()), waited
	return &history.Value{
		Extra: &history.Extra{Nodes: []string{shared}, Hit: hit, Detail: fmt.Sprintf(
			"processes %s cut off from %s, process %d from %s; once process %d held %s (on %s at most), process %d reached %s again and %s's wall clock jumped %s forward",
			strings.Join(cutProcs, ", "), joinNames(far), procs[other], joinNames(majority), holder.Process, holder.Key,
			joinNames(majority), procs[other], shared, shared, clockJump)},
	}, nil
}

// abort undoes what a failed start did (even when ctx is done) and returns
// err with whatever the undo could not do, so no fault is recorded.
func (n *RedlockClockJump) abort(ctx context.Context, err error) (*history.Value, error) {
	_, herr := n.undo(context.WithoutCancel(ctx))
	return nil, errors.Join(err, herr)
}

// awaitHolder waits until a worker of one of slots holds a lock it was
// granted after the cut: a slot that already held one (in before) counts
// only once it has been seen without it, since its grant may include the
// nodes it can no longer reach.
func (n *RedlockClockJump) awaitHolder(ctx context.Context, slots []int, before []Target) (Target, error) {
	in := make(map[int]bool, len(slots))
	for _, s := range slots {
		in[s] = true
	}
	stale := make(map[int]bool)
	for _, h := range before {
		stale[h.Slot] = true
	}
	deadline := time.Now().Add(n.wait)
	for {
		holding := make(map[int]bool)
		for _, h := range n.env.Holders() {
			holding[h.Slot] = true
			if in[h.Slot] && !stale[h.Slot] {
				return h, nil
			}
		}
		for s := range stale {
			if !holding[s] {
				delete(stale, s)
			}
		}
		if time.Now().After(deadline) {
			return Target{}, fmt.Errorf("no cut-off worker held a lock within %s", n.wait)
		}
		select {
		case <-ctx.Done():
			return Target{}, ctx.Err()
		case <-time.After(n.poll):
		}
	}
}

// undo puts the jumped clock back and heals every cut slot.
func (n *RedlockClockJump) undo(ctx context.Context) (*history.Value, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	v := &history.Value{}
	if n.jumped != "" {
		if err := n.c.SetClockOffset(ctx, n.jumped, 0); err != nil {
			errs = append(errs, fmt.Errorf("reset %s's clock: %w", n.jumped, err))
		} else {
			v.Mut().Nodes = []string{n.jumped}
			n.jumped = ""
		}
	}
	var healed []string
	slots := make([]int, 0, len(n.cut))
	for s := range n.cut {
		slots = append(slots, s)
	}
	sort.Ints(slots)
	for _, s := range slots {
		if err := n.c.Heal(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("heal slot %d: %w", s, err))
			continue
		}
		healed = append(healed, fmt.Sprint(s))
		delete(n.cut, s)
	}
	var did []string
	if len(v.Ext().Nodes) > 0 {
		did = append(did, v.Ext().Nodes[0]+"'s clock back")
	}
	if len(healed) > 0 {
		did = append(did, "links of slots "+strings.Join(healed, ", ")+" healed")
	}
	v.Mut().Detail = strings.Join(did, "; ")
	return v, errors.Join(errs...)
}

// Heal puts the clock back and restores every link this nemesis cut.
func (n *RedlockClockJump) Heal(ctx context.Context) error {
	_, err := n.undo(ctx)
	return err
}

// joinNames renders names as "a, b and c".
func joinNames(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// jumpWhy says how RedLock's clock jump lets a second client in: the
// first holder's key on the jumped node expired early, and that node
// counted towards a second majority.
func jumpWhy(f history.Fault) string {
	node := "the shared node"
	if len(f.Nodes) > 0 {
		node = f.Nodes[0]
	}
	why := node + "'s wall clock jumped forward, so the first holder's key on " + node +
		" expired early and " + node + " counted towards a second majority"
	if f.Detail != "" {
		why += " (" + f.Detail + ")"
	}
	return why
}
