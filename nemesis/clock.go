package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "clock", Words: &history.FaultWords{F: history.FClock, Noun: "clock jump", Why: clockWhy},
		Exercise: &history.ExerciseRule{F: history.FClock, Shape: history.ExerciseClock, Matches: func(f history.Fault) bool { return !strings.Contains(f.Detail, " back") }, Missed: "no clock jump landed on a node while a lock was held there"}, ClockShim: true, New: newClockForward,
		Summary: "step a lock server's wall clock forward by 3 x the lease, and again every lease/2 while the fault lasts (clock shim: CLOCK_REALTIME, gettimeofday, time; monotonic untouched): Redis expires a held key early; put it back after the fault duration"})
	register(Kind{Name: "clock-back",
		Exercise: &history.ExerciseRule{F: history.FClock, Shape: history.ExerciseClock, Matches: func(f history.Fault) bool { return strings.Contains(f.Detail, " back") }, Missed: "no clock-back jump landed on a node while a lock was held there"}, ClockShim: true, New: newClockBack,
		Summary: "step a lock server's wall clock back by 3 x the lease and to real time again, alternately every lease/2: each return is a forward jump that expires the keys set meanwhile early"})
}

// JumpLeases is how many leases one clock jump moves a server's wall clock:
// more than one lease, so a key set with PX lease before a forward jump is
// past its expiry when the jump lands.
const JumpLeases = 3

// defaultLease stands in for the lease when the environment does not say.
const defaultLease = time.Second

// maxClockSteps bounds the jumps of one clock fault.
const maxClockSteps = 10000

// leaser is an Env that knows the lock's lease (the runner's is).
type leaser interface{ Lease() time.Duration }

// leaseOf returns env's lease, or defaultLease when it does not say.
func leaseOf(env Env) time.Duration {
	if l, ok := env.(leaser); ok && l.Lease() > 0 {
		return l.Lease()
	}
	return defaultLease
}

// Clock jumps the wall clock of one lock server (a Clocker) and puts it back
// on the end op. Redis judges a key's PX expiry by its wall clock, so a
// forward jump of more than the lease expires the held key at once: the next
// client's SET NX succeeds while the holder is still in its critical section.
//
// One jump only catches a holder if it lands while the holder works and a
// waiter retries before the holder releases, which with short critical
// sections happens about half the time. So the fault is a runaway clock: the
// first jump when the fault starts and one more every Step while it lasts,
// each a separate chance (clock: forward by Jump each time; clock-back: back
// by Jump and forward to real time again, alternately).
type Clock struct {
	env  Env
	rng  *rand.Rand
	back bool
	// Jump is the size of one jump; Step the time between jumps.
	Jump, Step time.Duration

	movedClock
}

// kind returns the nemesis kind's name.
func (n *Clock) kind() string {
	if n.back {
		return "clock-back"
	}
	return "clock"
}

var _ Nemesis = (*Clock)(nil)

func newClockForward(env Env, rng *rand.Rand) (Nemesis, error) { return newClock(env, rng, false) }
func newClockBack(env Env, rng *rand.Rand) (Nemesis, error)    { return newClock(env, rng, true) }

func newClock(env Env, rng *rand.Rand, back bool) (Nemesis, error) {
	c, ok := env.Cluster().(clusters.Clocker)
	if !ok {
		return nil, fmt.Errorf("clock nemesis: %w (this cluster cannot move its servers' clocks)", clusters.ErrUnsupported)
	}
	lease := leaseOf(env)
	return &Clock{env: env, rng: rng, movedClock: movedClock{c: c}, back: back, Jump: JumpLeases * lease, Step: max(lease/2, 10*time.Millisecond)}, nil
}

// Fs returns clock and clock-reset.
func (n *Clock) Fs() (string, string) { return history.FClock, history.FClockReset }

// offsetAt returns the node's clock offset after jump k (k = 0 is the first).
func (n *Clock) offsetAt(k int) time.Duration {
	if n.back {
		if k%2 == 0 {
			return -n.Jump
		}
		return 0
	}
	return time.Duration(k+1) * n.Jump
}

// Invoke starts one lock node's clock jumping (clock) or puts it back
// (clock-reset).
func (n *Clock) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FClock:
		if err := n.Heal(ctx); err != nil {
			return completed(op, nil, err)
		}
		node, err := n.pick(ctx)
		if err != nil {
			return completed(op, nil, err)
		}
		hit := strikeHit(ctx, n.env, n.kind())
		hit.Offset, hit.Strobe = n.offsetAt(0), n.back
		if err := n.c.SetClockOffset(ctx, node, n.offsetAt(0)); err != nil {
			return completed(op, nil, err)
		}
		n.start(node)
		detail := fmt.Sprintf("wall clock of %s jumped %s forward, and %s more every %s", node, seconds(n.Jump), seconds(n.Jump), seconds(n.Step))
		if n.back {
			detail = fmt.Sprintf("wall clock of %s jumped %s back, then forward to real time and back again every %s", node, seconds(n.Jump), seconds(n.Step))
		}
		return completed(op, &history.Value{Extra: &history.Extra{Nodes: []string{node}, Detail: detail, Hit: hit}}, nil)
	case history.FClockReset:
		node, since := n.moved()
		err := n.Heal(ctx)
		v := &history.Value{Extra: &history.Extra{Detail: "wall clock put back"}}
		if node != "" {
			v.Mut().Hit = endHit(n.kind(), time.Since(since), leaseOf(n.env))
		}
		if node != "" {
			v.Mut().Nodes = []string{node}
			v.Mut().Detail = "wall clock of " + node + " put back"
		}
		return completed(op, v, err)
	}
	return completed(op, nil, fmt.Errorf("clock nemesis cannot %q", op.F))
}

// start runs the later jumps of a fault on node until Heal stops them.
func (n *Clock) start(node string) {
	n.moving(node, n.Step, maxClockSteps, func(ctx context.Context, k int) error {
		return n.c.SetClockOffset(ctx, node, n.offsetAt(k))
	})
}

// pick chooses the node whose clock jumps: the leader where the cluster has
// one (on Redis Cluster the master of a held key's slot: leaderOf), the
// only lock node of a single-node design; with several (RedLock's
// masters), under an Aim (a fault fired by a lock event) one of the nodes
// that hold the aimed holder's key, where the nodes' keys can be read;
// else a random lock node.
func (n *Clock) pick(ctx context.Context) (string, error) {
	if p, ok := n.env.Cluster().(clusters.Primary); ok {
		return leaderOf(ctx, n.env, p)
	}
	var lock []string
	for _, node := range n.env.Cluster().Nodes() {
		if node.Role == "lock" {
			lock = append(lock, node.Name)
		}
	}
	switch len(lock) {
	case 0:
		return "", errors.New("no lock node to jump the clock of")
	case 1:
		return lock[0], nil
	}
	if keys, ok := n.env.Cluster().(clusters.KeyReader); ok {
		if aim, ok := AimOf(ctx); ok {
			if t, err := aim(); err == nil && t.Key != "" {
				if on, _ := keyNodes(ctx, keys, lock, t.Key); len(on) > 0 {
					return on[n.rng.IntN(len(on))], nil
				}
			}
		}
	}
	return lock[n.rng.IntN(len(lock))], nil
}

// Heal stops the jumps and puts the jumped clock back to real time. It is
// idempotent.
func (n *Clock) Heal(ctx context.Context) error { return n.putBack(ctx, "jumping") }

// seconds renders a duration as "3 s", "1.5 s" or "250 ms".
func seconds(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'g', 4, 64) + " s"
}

// clockWhy says how a jump of a lock server's wall clock lets a second
// client in: it expires the lock key early, since Redis judges PX expiry
// by its wall clock.
func clockWhy(f history.Fault) string {
	node := "the lock server"
	if len(f.Nodes) > 0 {
		node = f.Nodes[0]
	}
	if strobes(f) {
		return node + "'s wall clock was jumping back and forth, and each return to real time passed the PX expiry of keys set meanwhile early (Redis judges expiry by its wall clock)"
	}
	amount := jumpAmount(f)
	return node + "'s wall clock jumped " + amount + "forward, so the lock key's PX expiry passed early (Redis judges expiry by its wall clock)"
}

// What the stories read of a fault comes from its start op's Hit. A
// history recorded before faults carried those fields has only the
// nemesis's words (Detail), which strobes, jumpAmount and takeover fall
// back to, so that an old stored run is told as it was.

// strobes reports whether a clock fault kept moving the clock back and
// forth (clock-back) rather than forward.
func strobes(f history.Fault) bool {
	if f.Hit != nil && (f.Hit.Offset != 0 || f.Hit.Strobe) {
		return f.Hit.Strobe
	}
	return strings.Contains(f.Detail, " back")
}

// jumpAmount returns how far a forward clock fault moved the clock, as
// "2 s " (with its trailing space), or "" when unknown.
func jumpAmount(f history.Fault) string {
	if f.Hit != nil && f.Hit.Offset > 0 {
		return history.SecsShort(f.Hit.Offset) + " "
	}
	if _, rest, ok := strings.Cut(f.Detail, "jumped "); ok {
		if a, _, ok := strings.Cut(rest, " forward"); ok {
			return a + " "
		}
	}
	return ""
}
