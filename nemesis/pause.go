package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
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
	mu     sync.Mutex
	paused map[int]Target // pid -> target
}

var _ Nemesis = (*Pause)(nil)

func newPause(env Env, rng *rand.Rand) (Nemesis, error) {
	return &Pause{env: env, rng: rng, paused: make(map[int]Target)}, nil
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
		p.mu.Lock()
		p.paused[t.Pid] = t
		p.mu.Unlock()
		return completed(op, &history.Value{Targets: []int{t.Process},
			Detail: fmt.Sprintf("SIGSTOP process %d (worker pid %d)", t.Process, t.Pid)}, nil)
	case history.FResume:
		targets, err := p.resumeAll()
		return completed(op, &history.Value{Targets: targets, Detail: "SIGCONT"}, err)
	}
	return completed(op, nil, fmt.Errorf("pause nemesis cannot %q", op.F))
}

func (p *Pause) resumeAll() ([]int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var targets []int
	var errs []error
	for pid, t := range p.paused {
		if err := syscall.Kill(-pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("SIGCONT worker pid %d: %w", pid, err))
			continue
		}
		targets = append(targets, t.Process)
		delete(p.paused, pid)
	}
	return targets, errors.Join(errs...)
}

// Heal continues every worker this nemesis stopped.
func (p *Pause) Heal(ctx context.Context) error {
	_, err := p.resumeAll()
	return err
}
