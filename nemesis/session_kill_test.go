package nemesis

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// killerEnv is an Env and a database cluster for session-kill: its holder
// appears after the fault began (a fresh grant), and once the holder's
// session was ended, another process (9) is granted the lock.
type killerEnv struct {
	mu        sync.Mutex
	calls     int
	holder    Target
	killed    bool
	stateSeen string // the holder's process state while its session ended
}

func (e *killerEnv) Holders() []Target {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	switch {
	case e.calls == 1:
		return nil
	case e.killed:
		return []Target{e.holder, {Process: 9, Key: e.holder.Key}}
	}
	return []Target{e.holder}
}
func (e *killerEnv) Workers() []Target              { return []Target{e.holder} }
func (e *killerEnv) Cluster() clusters.Cluster      { return e }
func (e *killerEnv) Lease() time.Duration           { return time.Second }
func (e *killerEnv) Setup(context.Context) error    { return nil }
func (e *killerEnv) Teardown(context.Context) error { return nil }
func (e *killerEnv) Nodes() []clusters.Node         { return []clusters.Node{{Name: "pg0", Role: "lock"}} }
func (e *killerEnv) KillSessions(_ context.Context, name string) ([]int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stateSeen = procState(e.holder.Pid)
	e.killed = true
	return []int64{42}, nil
}

// TestSessionKillHoldsHolderStill: the holder's process group is stopped
// while the server ends its session, and continued once another process
// was granted its lock; the detail says so.
func TestSessionKillHoldsHolderStill(t *testing.T) {
	pid := sleeperGroup(t)
	env := &killerEnv{holder: Target{Process: 4, Slot: 4, Pid: pid, Key: "k0", InCS: true}}
	n, err := newSessionKill(env, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	op := n.Invoke(context.Background(), history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: history.FSessionKill})
	if op.Error != "" || op.Value == nil {
		t.Fatalf("op %+v", op)
	}
	if env.stateSeen != "T" {
		t.Errorf("holder's state while its session ended = %q, want T (stopped)", env.stateSeen)
	}
	if s := procState(pid); s == "T" {
		t.Errorf("holder still stopped after the fault")
	}
	hit := history.HitOf(&op)
	if hit == nil || !hit.Holder || !hit.InCS {
		t.Errorf("hit %+v, want a holder in its critical section", hit)
	}
	for _, want := range []string{"ended the database session 42 of process 4", "in its critical section", "held still for", "until process 9 was granted it"} {
		if !strings.Contains(op.Value.Ext().Detail, want) {
			t.Errorf("detail %q lacks %q", op.Value.Ext().Detail, want)
		}
	}
}
