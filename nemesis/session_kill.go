package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "session-kill", Words: &history.FaultWords{F: history.FSessionKill, Aftermath: sessionKillSentence},
		Exercise: &history.ExerciseRule{F: history.FSessionKill, Shape: history.ExerciseSessionKill, Missed: "no session-kill ended the database session of a worker that held a lock"}, New: newSessionKill,
		Summary: "the database server ends a lock holder's session while it works (pg_terminate_backend / KILL CONNECTION of the sessions named by the worker's application name): the server releases its locks, the client goes on (M8)"})
}

// SessionKill has the database server end the sessions of a worker that
// holds a lock, found by the application name the worker gives its
// connections (clusters.SessionName). The server releases every lock the
// session held, and rolls back its open transaction, while the client goes
// on with its critical section: writes outside the database are not
// fenced (mechanism M8). The end op (reconnect) has nothing to undo: the
// client opens a new session on its own.
type SessionKill struct {
	env Env
	rng *rand.Rand
	k   clusters.SessionKiller
}

var _ Nemesis = (*SessionKill)(nil)

func newSessionKill(env Env, rng *rand.Rand) (Nemesis, error) {
	k, ok := env.Cluster().(clusters.SessionKiller)
	if !ok {
		return nil, fmt.Errorf("session-kill nemesis: needs a lock service whose server can end a client's sessions %s: %w",
			clusters.Where(false, isA[clusters.SessionKiller]), clusters.ErrUnsupported)
	}
	return &SessionKill{env: env, rng: rng, k: k}, nil
}

// Fs returns session-kill and reconnect.
func (n *SessionKill) Fs() (string, string) { return history.FSessionKill, history.FReconnect }

// Invoke ends a holder's sessions (session-kill); reconnect only closes the
// window.
func (n *SessionKill) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FSessionKill:
		return n.kill(ctx, op)
	case history.FReconnect:
		return completed(op, &history.Value{Extra: &history.Extra{Detail: "nothing to undo: a client whose session ended opens a new one"}}, nil)
	}
	return completed(op, nil, fmt.Errorf("session-kill nemesis cannot %q", op.F))
}

// kill ends the sessions of a holder inside its critical section. Ending a
// session takes the server a few milliseconds, longer on a loaded machine
// than a short critical section: a holder left running would often be done
// before its session ended, and the fault would hit a worker on its way
// out. So kill holds the target still (SIGSTOP of its process group) from
// just before the kill until the server has released its lock and another
// worker was granted it, or half a lease has passed, and then continues it
// (SIGCONT). The stop is far shorter than the lease or the server's session
// timeouts, so it cannot release a lock on its own; the detail says how
// long it lasted.
func (n *SessionKill) kill(ctx context.Context, op history.Op) history.Op {
	t, _, err := stopInCS(ctx, n.env, func() (Target, time.Duration, error) {
		return aimFreshHolder(ctx, n.env, n.rng, 2*time.Second)
	})
	if err != nil {
		return completed(op, nil, err)
	}
	stopped := time.Now()
	defer func() { _ = resume(ctx, t.Pid) }()
	name := clusters.SessionName(t.Process)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	ids, err := n.k.KillSessions(cctx, name)
	cancel()
	if err == nil && len(ids) == 0 {
		err = fmt.Errorf("no session named %s on the server", name)
	}
	if err != nil {
		return completed(op, nil, err)
	}
	next := waitGranted(ctx, n.env, t, stopped.Add(leaseOf(n.env)/4))
	if err := resume(ctx, t.Pid); err != nil {
		return completed(op, nil, err)
	}
	held := time.Since(stopped)
	var nodes []string
	for _, node := range n.env.Cluster().Nodes() {
		if node.Role == "lock" {
			nodes = append(nodes, node.Name)
		}
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	until := "no other worker was granted it meanwhile"
	if next >= 0 {
		until = fmt.Sprintf("until process %d was granted it", next)
	}
	return completed(op, &history.Value{
		Extra: &history.Extra{Targets: []int{t.Process}, Nodes: nodes, Hit: holderHit("session-kill", t, leaseOf(n.env)), Detail: fmt.Sprintf("ended the database session %s of process %d (%s) while it held lock %s%s; the process was held still for %s (%s)",
			strings.Join(s, ", "), t.Process, name, t.Key, inCS(t), held.Round(time.Millisecond), until)},
	}, nil)
}

// inCS renders " in its critical section" for a target inside it.
func inCS(t Target) string {
	if t.InCS {
		return " in its critical section"
	}
	return ""
}

// waitGranted waits until another worker than t holds t's lock, or until
// deadline, and returns that worker's process, or -1.
func waitGranted(ctx context.Context, env Env, t Target, deadline time.Time) int {
	for time.Now().Before(deadline) {
		for _, h := range env.Holders() {
			if h.Process != t.Process && h.Key == t.Key {
				return h.Process
			}
		}
		select {
		case <-ctx.Done():
			return -1
		case <-time.After(aimPoll):
		}
	}
	return -1
}

// Heal has nothing to undo.
func (n *SessionKill) Heal(context.Context) error { return nil }

// sessionKillSentence tells, for a double holder whose earlier holder
// (process stale) had its database session ended by the server while it
// held the lock, what happened (mechanism M8): when the session was
// terminated, that the server released the lock with it, and that the
// client, which noticed nothing, went on and finished its critical
// section at heldUntil. It returns "" when f did not end one of stale's
// sessions before then.
func sessionKillSentence(f history.Fault, stale int, heldUntil time.Duration) string {
	if !slices.Contains(f.Targets, stale) || f.Start > heldUntil {
		return ""
	}
	// The kill came between the op's invocation and its completion.
	when := "at " + history.Secs(f.Start)
	if history.Secs(f.Done) != history.Secs(f.Start) && f.Done > f.Start { // apart in the words, not only in time
		when = fmt.Sprintf("between %s and %s", history.Secs(f.Start), history.Secs(f.Done))
	}
	return fmt.Sprintf("Process %d's database session was terminated %s; the server released its lock with the session; "+
		"the client noticed nothing, went on and wrote by %s, after another process had been granted the lock.",
		stale, when, history.Secs(heldUntil))
}
