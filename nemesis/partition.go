package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Kind{Name: "partition", Summary: "cut the holding worker's links to the lock nodes (Toxiproxy timeout toxic both ways: packets vanish, connections hang), heal after the fault duration", New: newPartition,
		Exercise: &history.ExerciseRule{F: history.FPartition, Shape: history.ExercisePartition, Matches: onWorkers,
			Missed: "no partition cut a lock holder off for longer than {lease}"}})
}

// Partition cuts the holding worker off from every lock node: its proxies
// drop all traffic both ways, so its connections hang (a grudge against one
// client). Heal restores the links.
type Partition struct {
	env Env
	rng *rand.Rand
	p   clusters.Partitioner
	cut undoSet[int, struck] // slot -> process, when
}

var _ Nemesis = (*Partition)(nil)

func newPartition(env Env, rng *rand.Rand) (Nemesis, error) {
	p, ok := env.Cluster().(clusters.Partitioner)
	if !ok {
		return nil, fmt.Errorf("partition nemesis: %w", clusters.ErrUnsupported)
	}
	return &Partition{env: env, rng: rng, p: p}, nil
}

// Fs returns partition and heal.
func (n *Partition) Fs() (string, string) { return history.FPartition, history.FHeal }

// partitionAimWait bounds how long a partition waits for a fresh holder
// (aimFreshHolder): a cut-off holder shows the lock's behaviour only if it
// goes on working after its lease ran out, so the cut strikes a holder at
// the start of its critical section when one comes within this time.
const partitionAimWait = 5 * time.Second

// Invoke cuts a holder off (partition) or restores every cut link (heal).
func (n *Partition) Invoke(ctx context.Context, op history.Op) history.Op {
	switch op.F {
	case history.FPartition:
		t, waited, err := aimFreshHolder(ctx, n.env, n.rng, partitionAimWait)
		if err != nil {
			return completed(op, nil, err)
		}
		if err := n.p.Partition(ctx, t.Slot); err != nil {
			return completed(op, nil, err)
		}
		n.cut.add(t.Slot, struck{process: t.Process, at: time.Now()})
		hit := holderHit("partition", t, leaseOf(n.env))
		hit.Waited = waited
		return completed(op, &history.Value{
			Extra: &history.Extra{Targets: []int{t.Process}, Hit: hit, Detail: fmt.Sprintf("process %d cut off from the lock service%s", t.Process, where(t))},
		}, nil)
	case history.FHeal:
		ss, err := n.cut.undoAll(ctx, n.p.Heal)
		targets, lasted := lastedOf(ss)
		return completed(op, &history.Value{Extra: &history.Extra{Targets: targets, Detail: "links restored", Hit: endHit("partition", lasted, leaseOf(n.env))}}, err)
	}
	return completed(op, nil, fmt.Errorf("partition nemesis cannot %q", op.F))
}

// Heal restores every link this nemesis cut.
func (n *Partition) Heal(ctx context.Context) error {
	_, err := n.cut.undoAll(ctx, n.p.Heal)
	return err
}
