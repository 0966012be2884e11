package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "clock-client", ClientClocks: true, New: newClockClient,
		Summary: "set the client clock of every worker that does not hold the lock 3 x the lease ahead (the holders keep the real clock), put them back after the fault duration: a lock client that judges expiry by its own clock takes a live lock (M5)"})
}

// ClockClient skews workers' client clocks (workloads.Clock, a file per
// worker slot). It reproduces M5: when the fault starts, every worker that
// does not hold a lock gets a clock JumpLeases leases ahead, and the holders
// keep the real clock (with no holder, one random worker keeps it). A
// skewed waiter then judges the real-clock holder's expiry timestamp passed
// and takes the lock over while the holder still works; among themselves
// the skewed clients agree, so each later grant to a real-clock client is
// again taken over. The end op puts every clock back. Designs that judge
// leases on the server (SET NX PX) do not read the clock, so for them the
// fault changes nothing.
type ClockClient struct {
	env    Env
	rng    *rand.Rand
	cc     ClientClocker
	Offset time.Duration

	skewed undoSet[string, int] // clock file -> process
}

var _ Nemesis = (*ClockClient)(nil)

// ClientClocker is an Env that can set a worker's client clock (the runner
// is: it writes the clock file in the format workloads.Clock reads, which
// this package may not import).
type ClientClocker interface {
	// SetClientClock makes the clock of the worker slot whose clock file
	// is file read real time + offset (0: the real clock).
	SetClientClock(file string, offset time.Duration) error
}

func newClockClient(env Env, rng *rand.Rand) (Nemesis, error) {
	cc, ok := env.(ClientClocker)
	if !ok {
		return nil, fmt.Errorf("clock-client nemesis: the controller cannot set client clocks: %w", clusters.ErrUnsupported)
	}
	return &ClockClient{env: env, rng: rng, cc: cc, Offset: JumpLeases * leaseOf(env)}, nil
}

// Fs returns skew and unskew.
func (n *ClockClient) Fs() (string, string) { return history.FSkew, history.FUnskew }

// Invoke skews the non-holders' clocks (skew) or puts every clock back
// (unskew).
func (n *ClockClient) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FSkew:
		ws := n.env.Workers()
		if len(ws) < 2 {
			return completed(op, nil, fmt.Errorf("clock-client nemesis: %d live workers, want at least 2", len(ws)))
		}
		real := -1 // the slot that keeps the real clock when none holds
		anyHolder := false
		for _, w := range ws {
			anyHolder = anyHolder || w.Key != ""
		}
		if !anyHolder {
			real = ws[n.rng.IntN(len(ws))].Slot
		}
		var procs []int
		var errs []error
		for _, w := range ws {
			if w.Key != "" || w.Slot == real {
				continue
			}
			if w.ClockFile == "" {
				return completed(op, nil, errors.New("clock-client nemesis: the workers have no clock files"))
			}
			if err := n.set(w.ClockFile, w.Process, n.Offset); err != nil {
				errs = append(errs, err)
				continue
			}
			procs = append(procs, w.Process)
		}
		sort.Ints(procs)
		words := make([]string, len(procs))
		for i, p := range procs {
			words[i] = strconv.Itoa(p)
		}
		detail := fmt.Sprintf("client clocks of processes %s set %s ahead", strings.Join(words, ", "), seconds(n.Offset))
		hit := &history.Hit{Nemesis: "clock-client", Lease: leaseOf(n.env)}
		for _, w := range ws {
			if w.Key != "" {
				hit.Holders++
			}
		}
		return completed(op, &history.Value{Extra: &history.Extra{Targets: procs, Detail: detail, Hit: hit}}, errors.Join(errs...))
	case history.FUnskew:
		procs, err := n.resetAll()
		return completed(op, &history.Value{Extra: &history.Extra{Targets: procs, Detail: "client clocks put back"}}, err)
	}
	return completed(op, nil, fmt.Errorf("clock-client nemesis cannot %q", op.F))
}

// set writes a clock setting and remembers the file for the reset.
func (n *ClockClient) set(file string, process int, offset time.Duration) error {
	if err := n.cc.SetClientClock(file, offset); err != nil {
		return err
	}
	n.skewed.add(file, process)
	return nil
}

// resetAll puts back every clock this nemesis skewed.
func (n *ClockClient) resetAll() ([]int, error) {
	procs, err := n.skewed.undoAll(context.Background(), func(_ context.Context, file string) error {
		return n.cc.SetClientClock(file, 0)
	})
	sort.Ints(procs)
	return procs, err
}

// Heal puts back every clock this nemesis skewed.
func (n *ClockClient) Heal(ctx context.Context) error {
	_, err := n.resetAll()
	return err
}
