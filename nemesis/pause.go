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

// Pause stops the worker process that holds a lock with SIGSTOP, as a long
// stop-the-world GC pause would: every goroutine stops, timers and renewal
// watchdogs included. Resume continues it with SIGCONT.
type Pause struct {
	env    Env
	rng    *rand.Rand
	paused undoSet[int, int] // worker pid -> process
}

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
		t, err := pickHolder(ctx, p.env, p.rng, 2*time.Second)
		if err != nil {
			return completed(op, nil, err)
		}
		if err := syscall.Kill(-t.Pid, syscall.SIGSTOP); err != nil {
			return completed(op, nil, fmt.Errorf("SIGSTOP worker pid %d: %w", t.Pid, err))
		}
		p.paused.add(t.Pid, t.Process)
		return completed(op, &history.Value{Targets: []int{t.Process},
			Detail: fmt.Sprintf("SIGSTOP process %d (worker pid %d)", t.Process, t.Pid)}, nil)
	case history.FResume:
		targets, err := p.paused.undoAll(ctx, resume)
		return completed(op, &history.Value{Targets: targets, Detail: "SIGCONT"}, err)
	}
	return completed(op, nil, fmt.Errorf("pause nemesis cannot %q", op.F))
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
