package nemesis

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestClockClientRateRunsNonHoldersFast: every non-holder's client clock
// gains on real time at Rate - 1 (never more than the real time since the
// start allows, never going back) while the fault lasts, the holder's is
// never touched, and every clock reads real time after it.
func TestClockClientRateRunsNonHoldersFast(t *testing.T) {
	ws := []Target{{Process: 0, Slot: 0, ClockFile: "w0"}, {Process: 11, Slot: 1, ClockFile: "w1", Key: "k0"}, {Process: 2, Slot: 2, ClockFile: "w2"}}
	env := &strobeClientEnv{clockEnv: clockEnv{lease: time.Second}, workers: ws}
	nm, err := newClockClientRate(env, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	op := nm.Invoke(ctx, history.Op{F: history.FSkew})
	hit := history.HitOf(&op)
	if op.Error != "" || len(op.Value.Ext().Targets) != 2 || hit == nil || hit.Rate != 2 || hit.Strobe || hit.Holders != 1 || hit.Nemesis != "clock-client-rate" {
		t.Fatalf("skew op %+v, hit %+v", op, hit)
	}
	// Wait (bounded) until w0's clock has gained 100 ms.
	gained := func() time.Duration {
		s := env.seen("w0")
		if len(s) == 0 {
			return 0
		}
		return s[len(s)-1]
	}
	deadline := time.Now().Add(20 * time.Second)
	for gained() < 100*time.Millisecond && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	if end := nm.Invoke(ctx, history.Op{F: history.FUnskew}); end.Error != "" || len(end.Value.Ext().Targets) != 2 {
		t.Fatalf("unskew op %+v", end)
	}
	for _, f := range []string{"w0", "w2"} {
		got := env.seen(f)
		if len(got) < 3 || got[len(got)-1] != 0 {
			t.Fatalf("clock %s set to %v: want a run of growing offsets, then 0", f, got)
		}
		run := got[:len(got)-1]
		if run[0] != 0 {
			t.Errorf("clock %s started at %s, want 0 (it runs fast from the start)", f, run[0])
		}
		for k := 1; k < len(run); k++ {
			if run[k] < run[k-1] {
				t.Errorf("clock %s went back while the fault lasted: %v", f, run)
				break
			}
		}
		// At rate 2 the offset is the real time since the start: never
		// more than the time the test saw pass.
		if last := run[len(run)-1]; last < 100*time.Millisecond || last > elapsed+50*time.Millisecond {
			t.Errorf("clock %s gained %s in %s at rate 2", f, last, elapsed)
		}
	}
	if got := env.seen("w1"); len(got) != 0 {
		t.Errorf("the holder's clock was set: %v", got)
	}
	n := len(env.seen("w0"))
	if err := nm.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * DriftStep)
	if again := env.seen("w0"); len(again) != n {
		t.Errorf("the clock kept moving after the end op: %v", again)
	}
}
