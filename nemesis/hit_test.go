package nemesis

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// holdersEnv is an Env whose holders are fixed, with a lease.
type holdersEnv struct{ hs []Target }

func (e holdersEnv) Holders() []Target         { return e.hs }
func (e holdersEnv) Workers() []Target         { return e.hs }
func (e holdersEnv) Cluster() clusters.Cluster { return nil }
func (e holdersEnv) Lease() time.Duration      { return 700 * time.Millisecond }

func TestAimHolder(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	idle := Target{Process: 1, Key: "k"}
	working := Target{Process: 2, Key: "k", InCS: true}
	for _, tt := range []struct {
		name  string
		hs    []Target
		inCS  bool
		want  int // process, -1 for an error
		waits bool
	}{
		{"prefers the holder in its critical section", []Target{idle, working}, true, 2, false},
		{"takes any holder once the wait is over", []Target{idle}, true, 1, true},
		{"without inCS, any holder at once", []Target{idle}, false, 1, false},
		{"no holder: an error after the wait", nil, true, -1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, waited, err := aimHolder(ctx, holdersEnv{tt.hs}, rng, 30*time.Millisecond, tt.inCS)
			switch {
			case tt.want < 0 && err == nil:
				t.Fatalf("got %+v, want an error", got)
			case tt.want >= 0 && (err != nil || got.Process != tt.want):
				t.Fatalf("got %+v (%v), want process %d", got, err, tt.want)
			case tt.waits != (waited >= 30*time.Millisecond):
				t.Errorf("waited %s", waited)
			}
		})
	}
}

// TestPauseRecordsHit pauses a real process group (a sleep this test
// starts) and checks what the start and end ops say it hit.
func TestPauseRecordsHit(t *testing.T) {
	pid := sleeperGroup(t)
	env := holdersEnv{[]Target{{Process: 4, Slot: 4, Pid: pid, Key: "k0", InCS: true}}}
	n, err := newPause(env, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := n.Invoke(ctx, history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: history.FPause})
	hit := history.HitOf(&start)
	if start.Error != "" || hit == nil || hit.Nemesis != "pause" || !hit.Holder || !hit.InCS || hit.Key != "k0" ||
		hit.Lease != 700*time.Millisecond || !strings.Contains(start.Value.Ext().Detail, "holding k0 in its critical section") {
		t.Fatalf("start op %+v, hit %+v", start, hit)
	}
	time.Sleep(50 * time.Millisecond)
	end := n.Invoke(ctx, history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: history.FResume})
	hit = history.HitOf(&end)
	if end.Error != "" || hit == nil || hit.Lasted < 50*time.Millisecond || hit.Outlasted != 0 || len(end.Value.Ext().Targets) != 1 {
		t.Fatalf("end op %+v, hit %+v", end, hit)
	}
}

// deadlineFake records whether its end op got a context with a deadline.
type deadlineFake struct {
	fake
	endDeadline chan bool
}

func (f *deadlineFake) Invoke(ctx context.Context, op history.Op) history.Op {
	if op.F == history.FResume {
		_, ok := ctx.Deadline()
		f.endDeadline <- ok
	}
	return f.fake.Invoke(ctx, op)
}

// TestScheduleStoppedEndOpIsBounded: a schedule stopped during a fault ends
// it with a context that has a deadline (StopEndWait), so a slow undo
// cannot hold up a run that stops at its first anomaly.
func TestScheduleStoppedEndOpIsBounded(t *testing.T) {
	f := &deadlineFake{endDeadline: make(chan bool, 10)}
	ctx, cancel := context.WithCancel(context.Background())
	s := Schedule{Nemeses: []Nemesis{f}, Interval: 10 * time.Millisecond, Duration: time.Hour,
		Rng: rand.New(rand.NewPCG(1, 2)), Record: history.NewRecorder(nil).Record}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, time.Now().Add(2*time.Hour)) }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		f.mu.Lock()
		n := len(f.calls)
		f.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no fault started")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ok := <-f.endDeadline; !ok {
		t.Error("the end op of a stopped schedule had no deadline")
	}
}

func TestAwaitHolder(t *testing.T) {
	ctx := context.Background()
	if !awaitHolder(ctx, holdersEnv{[]Target{{Process: 1, Key: "k"}}}, time.Hour) {
		t.Error("a holder was there: want true at once")
	}
	if awaitHolder(ctx, holdersEnv{}, 20*time.Millisecond) {
		t.Error("no holder: want false after the wait")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if awaitHolder(cancelled, holdersEnv{}, time.Hour) {
		t.Error("cancelled: want false at once")
	}
}
