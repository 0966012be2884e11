package checker

import (
	"bytes"
	"context"
	"fmt"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// genValid returns a valid fenced history of n ops (rounded down to whole
// cycles): 10 processes take turns on one key, each acquiring (with the next
// token), running its critical section (reading the register and writing it
// plus one, with the token) and releasing, while the next process's acquire
// fails against the held lock. One cycle is 8 ops and 600 µs.
func genValid(n int) history.History {
	h := make(history.History, 0, n)
	add := func(t time.Duration, p int, typ history.Type, f string, v *history.Value) {
		h = append(h, history.Op{Index: len(h), Time: t, Process: p, Type: typ, F: f, Key: "k", Value: v})
	}
	for i := 0; len(h)+8 <= n; i++ {
		p, q := i%10, (i+1)%10
		t0 := time.Duration(i) * 600 * time.Microsecond
		tok := int64(i + 1)
		owner := fmt.Sprintf("p%d-%d", p, tok)
		add(t0, p, history.Invoke, history.FAcquire, nil)
		add(t0+100*time.Microsecond, q, history.Invoke, history.FAcquire, nil)
		add(t0+200*time.Microsecond, p, history.OK, history.FAcquire, &history.Value{Token: tok, Owner: owner})
		add(t0+250*time.Microsecond, q, history.Fail, history.FAcquire, nil)
		add(t0+300*time.Microsecond, p, history.Invoke, history.FCS, &history.Value{Token: tok})
		add(t0+400*time.Microsecond, p, history.OK, history.FCS,
			&history.Value{Token: tok, Read: history.Int64(int64(i)), Wrote: history.Int64(int64(i + 1))})
		add(t0+450*time.Microsecond, p, history.Invoke, history.FRelease, &history.Value{Token: tok, Owner: owner})
		add(t0+500*time.Microsecond, p, history.OK, history.FRelease, &history.Value{Released: history.Bool(true)})
	}
	return h
}

func TestGeneratedHistories(t *testing.T) {
	ctx := context.Background()
	h := genValid(40000)
	if r := Default(Options{Fenced: true, StuckBound: time.Second}).Check(ctx, h); r.Valid != Valid {
		t.Fatalf("generated history: valid = %v (%s)\n%s", r.Valid, r.Error, dump(r.Anomalies))
	}
	// Plant a double grant deep inside: process 5's acquire in cycle 3000
	// is granted while the cycle's holder still holds the lock.
	bad := append(history.History(nil), h...)
	i := 3000*8 + 3 // the failed acquire of cycle 3000
	bad[i].Type = history.OK
	bad[i].Value = &history.Value{Token: 999999, Owner: "intruder"}
	r := Default(Options{}).Check(ctx, bad)
	if r.Valid != Invalid {
		t.Fatalf("planted double grant: valid = %v", r.Valid)
	}
	if k := kinds(r.Anomalies, false); fmt.Sprint(k) != "[double-holder nonlinearizable token-order]" {
		t.Errorf("planted double grant: kinds %v", k)
	}
	// Porcupine's longest partial order is not unique, so either process
	// may be the one that "cannot be placed"; the window must hold the
	// planted grant either way.
	a := find(t, r, "nonlinearizable")
	planted := 3000*600*time.Microsecond + 250*time.Microsecond
	procs := slices.Sorted(slices.Values(a.Processes))
	if !slices.Equal(procs, []int{0, 1}) || a.Start > planted || a.End < planted || a.End < a.Start {
		t.Errorf("planted double grant at %s: %+v", planted, a)
	}
	var buf bytes.Buffer
	if r.Visualize == nil {
		t.Fatal("planted double grant: no visualization")
	}
	if err := r.Visualize(&buf); err != nil {
		t.Fatal(err)
	}
	// Only the failing chunk is drawn, not all 40000 ops.
	if buf.Len() > 2<<20 {
		t.Errorf("visualization is %d bytes", buf.Len())
	}
	// Plant a lost update: cycle 4000's critical section reads what cycle
	// 3999's read.
	bad = append(history.History(nil), h...)
	i = 4000*8 + 5
	bad[i].Value = &history.Value{Token: 4001, Read: history.Int64(3999), Wrote: history.Int64(4000)}
	r = Default(Options{Fenced: true}).Check(ctx, bad)
	if r.Valid != Invalid {
		t.Fatalf("planted lost update: valid = %v", r.Valid)
	}
	if k := kinds(r.Anomalies, false); fmt.Sprint(k) != "[lost-update]" {
		t.Errorf("planted lost update: kinds %v\n%s", k, dump(r.Anomalies))
	}
}

// heapSampler records the peak of live heap objects while it runs.
type heapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func sampleHeap() *heapSampler {
	s := &heapSampler{stop: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		s.peak = max(s.peak, sample[0].Value.Uint64())
	}
	read()
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-s.stop:
				read()
				return
			case <-tk.C:
				read()
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peak in MiB.
func (s *heapSampler) Stop() float64 {
	close(s.stop)
	s.done.Wait()
	return float64(s.peak) / (1 << 20)
}
