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
	register(Kind{Name: "clock-client", Words: &history.FaultWords{F: history.FSkew, Noun: "client clock skew", Why: skewWhy},
		Exercise: &history.ExerciseRule{F: history.FSkew, Shape: history.ExerciseClockClient, Missed: "no worker with a skewed clock tried to take a lock while another worker held it"}, ClientClocks: true, New: newClockClient,
		Summary: "set the client clock of every worker that does not hold the lock 3 x the lease ahead (the holders keep the real clock), put them back after the fault duration: a lock client that judges expiry by its own clock takes a live lock (M5)"})
}

// ClockClient skews workers' client clocks (workloads.Clock, a file per
// worker slot). It reproduces M5: when the fault starts, every worker that
// does not hold a lock gets a clock JumpLeases leases ahead, and the holders
// keep the real clock (with no holder, or every worker holding, one random
// worker keeps it: see skewTargets). A
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
		skew, holders := skewTargets(ws, n.rng)
		var procs []int
		var errs []error
		for _, w := range skew {
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
		if len(procs) == 0 {
			detail = "no client clock set ahead"
		}
		hit := &history.Hit{Nemesis: "clock-client", Lease: leaseOf(n.env), Holders: holders}
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

// skewTargets returns the live workers a client-clock fault skews, and how
// many of ws hold a lock. It skews the workers that hold none, so that a
// skewed worker tries to take a lock a worker with the real clock holds.
// When none holds, or every one does (a design that takes no lock, whose
// workers are inside their critical sections nearly all the time), it
// skews all but one, chosen at random, which keeps the real clock.
func skewTargets(ws []Target, rng *rand.Rand) (skew []Target, holders int) {
	for _, w := range ws {
		if w.Key != "" {
			holders++
		}
	}
	real := -1 // the slot that keeps the real clock when all or none hold
	if holders == 0 || holders == len(ws) {
		real = ws[rng.IntN(len(ws))].Slot
	}
	for _, w := range ws {
		if w.Slot == real || (w.Key != "" && real < 0) {
			continue
		}
		skew = append(skew, w)
	}
	return skew, holders
}

// skewWhy says how skewed client clocks let a second client in: a client
// judged a live lock expired by its own clock.
func skewWhy(f history.Fault) string {
	what := "clocks of " + history.Procs(f.Targets)
	if len(f.Targets) == 0 {
		what = "client clocks"
	}
	return "the " + what + " were skewed, so a client judged a live lock expired by its own clock and took it over"
}
