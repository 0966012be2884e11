package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "crash",
		Exercise: &history.ExerciseRule{F: history.FKillWorker, Shape: history.ExerciseCrash, Missed: "no crash killed a worker that held a lock or was stopped at a failpoint"}, New: newCrash,
		Summary: "SIGKILL a worker's process group: one stopped at the armed --failpoint if any (waits up to 2 s for one), " +
			"else a lock holder, else any live worker; the controller records its op in flight as info and replaces it"})
}

// FailpointEnv is an Env whose workers may stop at an armed failpoint; the
// crash nemesis then waits for a worker to reach it (Target.Failpoint).
type FailpointEnv interface {
	Env
	// Failpoint is the failpoint the run arms, "" for none.
	Failpoint() string
}

// crashWait bounds how long a crash waits for a worker to reach the armed
// failpoint before it takes a holder or any worker instead.
const crashWait = 2 * time.Second

// Crash kills a worker process with SIGKILL, as a machine or a JVM crash
// would: the lock it holds, or the half-taken lock it is in the middle of,
// stays behind. The controller notices the dead worker, records the
// operation it was in as info, retires its process id and starts a fresh
// worker, so the end op (respawn) has nothing to undo.
type Crash struct {
	env       Env
	rng       *rand.Rand
	failpoint string
}

var _ Nemesis = (*Crash)(nil)

func newCrash(env Env, rng *rand.Rand) (Nemesis, error) {
	c := &Crash{env: env, rng: rng}
	if fe, ok := env.(FailpointEnv); ok {
		c.failpoint = fe.Failpoint()
	}
	return c, nil
}

// Fs returns kill-worker and respawn.
func (c *Crash) Fs() (string, string) { return history.FKillWorker, history.FRespawn }

// Invoke kills one worker (kill-worker); respawn only closes the window.
func (c *Crash) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FKillWorker:
		t, why, err := c.pick(ctx)
		if err != nil {
			return completed(op, nil, err)
		}
		if err := syscall.Kill(-t.Pid, syscall.SIGKILL); err != nil {
			return completed(op, nil, fmt.Errorf("SIGKILL worker pid %d: %w", t.Pid, err))
		}
		return completed(op, &history.Value{
			Extra: &history.Extra{Targets: []int{t.Process}, Hit: holderHit("crash", t, leaseOf(c.env)), Detail: fmt.Sprintf("SIGKILL process %d (worker pid %d), %s", t.Process, t.Pid, why)},
		}, nil)
	case history.FRespawn:
		return completed(op, &history.Value{Extra: &history.Extra{Detail: "the controller replaced the killed worker with a fresh process"}}, nil)
	}
	return completed(op, nil, fmt.Errorf("crash nemesis cannot %q", op.F))
}

// pick chooses the worker to kill: one stopped at the armed failpoint
// (waiting up to crashWait for one), else a holder, else any live worker.
// Under an Aim it kills the aimed worker (fired by its failpoint event,
// once the controller counts it at the failpoint).
func (c *Crash) pick(ctx context.Context) (Target, string, error) {
	deadline := time.Now().Add(crashWait)
	if aim, ok := AimOf(ctx); ok {
		return c.aimed(ctx, aim, deadline)
	}
	for c.failpoint != "" {
		var at []Target
		for _, t := range c.env.Workers() {
			if t.Failpoint == c.failpoint {
				at = append(at, t)
			}
		}
		if len(at) > 0 {
			return at[c.rng.IntN(len(at))], "stopped at failpoint " + c.failpoint, nil
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return Target{}, "", ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	if hs := c.env.Holders(); len(hs) > 0 {
		t := hs[c.rng.IntN(len(hs))]
		return t, "holding lock " + t.Key, nil
	}
	if ws := c.env.Workers(); len(ws) > 0 {
		return ws[c.rng.IntN(len(ws))], "a worker holding no lock", nil
	}
	return Target{}, "", errors.New("no live worker to kill")
}

// aimed returns the aimed worker and why it is struck. With a failpoint
// armed it waits (until deadline) for the controller to count the worker
// at it: the event that fired the fault is recorded just before.
func (c *Crash) aimed(ctx context.Context, aim Aim, deadline time.Time) (Target, string, error) {
	t, err := aim()
	if err != nil {
		return Target{}, "", err
	}
	for c.failpoint != "" && t.Failpoint != c.failpoint && time.Now().Before(deadline) {
		if !sleep(ctx, aimPoll) {
			return Target{}, "", ctx.Err()
		}
		for _, w := range c.env.Workers() {
			if w.Process == t.Process {
				t.Failpoint = w.Failpoint
			}
		}
	}
	switch {
	case t.Failpoint != "":
		return t, "stopped at failpoint " + t.Failpoint, nil
	case t.Key != "":
		return t, "holding lock " + t.Key, nil
	}
	return t, "a worker holding no lock", nil
}

// Heal has nothing to undo: the controller replaces dead workers itself.
func (c *Crash) Heal(context.Context) error { return nil }
