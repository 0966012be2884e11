package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "pause", Summary: "SIGSTOP the worker process that holds the lock (every goroutine stops, as in a GC pause), SIGCONT it after the fault duration", New: newPause,
		Exercise: &history.ExerciseRule{F: history.FPause, Shape: history.ExercisePause, Matches: onWorkers,
			Missed: "no pause lasted longer than {lease} while its process held the lock or waited in line for it"}})
}

// Pause stops the worker process that holds a lock with SIGSTOP, as a long
// stop-the-world GC pause would: every goroutine stops, timers and renewal
// watchdogs included. Resume continues it with SIGCONT.
type Pause struct {
	env    Env
	rng    *rand.Rand
	paused undoSet[int, struck] // worker pid -> process, when
}

// struck is a worker a fault acts on and since when.
type struck struct {
	process int
	at      time.Time
}

// lastedOf returns the processes of ss and the longest time any was struck.
func lastedOf(ss []struck) ([]int, time.Duration) {
	var procs []int
	var lasted time.Duration
	for _, s := range ss {
		procs = append(procs, s.process)
		lasted = max(lasted, time.Since(s.at))
	}
	sort.Ints(procs)
	return procs, lasted
}

// aimWait bounds how long pause and partition wait for a holder inside its
// critical section before they take any holder.
const aimWait = 2 * time.Second

var _ Nemesis = (*Pause)(nil)

func newPause(env Env, rng *rand.Rand) (Nemesis, error) {
	return &Pause{env: env, rng: rng}, nil
}

// Fs returns pause and resume.
func (p *Pause) Fs() (string, string) { return history.FPause, history.FResume }

// Invoke pauses a holder (pause) or continues every paused worker (resume).
func (p *Pause) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FPause:
		t, waited, err := stopInCS(ctx, p.env, func() (Target, time.Duration, error) {
			return aimHolder(ctx, p.env, p.rng, aimWait, true)
		})
		if err != nil {
			return completed(op, nil, err)
		}
		p.paused.add(t.Pid, struck{process: t.Process, at: time.Now()})
		hit := holderHit("pause", t, leaseOf(p.env))
		hit.Waited = waited
		return completed(op, &history.Value{
			Extra: &history.Extra{Targets: []int{t.Process}, Hit: hit, Detail: fmt.Sprintf("SIGSTOP process %d (worker pid %d)%s", t.Process, t.Pid, where(t))},
		}, nil)
	case history.FResume:
		ss, err := p.paused.undoAll(ctx, resume)
		targets, lasted := lastedOf(ss)
		return completed(op, &history.Value{Extra: &history.Extra{Targets: targets, Detail: "SIGCONT", Hit: endHit("pause", lasted, leaseOf(p.env))}}, err)
	}
	return completed(op, nil, fmt.Errorf("pause nemesis cannot %q", op.F))
}

// where says where in its cycle a struck worker was: ", holding lock0 in
// its critical section".
func where(t Target) string {
	switch {
	case t.Key == "":
		return ", holding no lock"
	case t.InCS:
		return ", holding " + t.Key + " in its critical section"
	}
	return ", holding " + t.Key
}

// resume continues the stopped worker whose process group is pid; one that
// has exited meanwhile needs nothing.
func resume(_ context.Context, pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("SIGCONT worker pid %d: %w", pid, err)
	}
	return nil
}

// Heal continues every worker this nemesis stopped.
func (p *Pause) Heal(ctx context.Context) error {
	_, err := p.paused.undoAll(ctx, resume)
	return err
}

// waitStopped waits, up to timeout, until process pid is in the stopped
// state after a SIGSTOP: the signal is delivered asynchronously, and a
// process that is running on the other core, or still starting, goes on
// for a moment after kill(2) returns. It reports whether the stop was seen.
func waitStopped(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if s := procState(pid); s == "T" || s == "t" || s == "" {
			return s != ""
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// procState returns the state letter of process pid in /proc/<pid>/stat
// ("T" when stopped), or "" when the process is gone.
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}
