package history

import (
	"sync"
	"testing"
)

func TestSubscribeSeesEveryLaterOpStamped(t *testing.T) {
	r := NewRecorder(nil)
	r.Record(Op{Process: 0, Type: Invoke, F: FAcquire, Key: "k"}) // before any subscriber
	var mu sync.Mutex
	var a, b []Op
	r.Subscribe(func(op Op) { mu.Lock(); a = append(a, op); mu.Unlock() })
	r.Record(Op{Process: 0, Type: OK, F: FAcquire, Key: "k"})
	r.Subscribe(func(op Op) { mu.Lock(); b = append(b, op); mu.Unlock() })
	var wg sync.WaitGroup
	for p := 1; p <= 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				r.Record(Op{Process: p, Type: Invoke, F: FCS, Key: "k"})
			}
		}()
	}
	wg.Wait()
	h := r.History()
	if len(a) != len(h)-1 || len(b) != len(h)-2 {
		t.Fatalf("first subscriber saw %d ops, second %d, of %d recorded", len(a), len(b), len(h))
	}
	if a[0].Index != 1 || a[0].Type != OK || a[0].Time != h[1].Time {
		t.Errorf("first op seen %+v, want op 1 as recorded (%+v)", a[0], h[1])
	}
	last := make(map[int]int)
	for _, op := range b {
		if op != h[op.Index] {
			t.Errorf("saw %+v, recorded %+v", op, h[op.Index])
		}
		if prev, ok := last[op.Process]; ok && op.Index <= prev {
			t.Errorf("process %d's op %d came after its op %d", op.Process, op.Index, prev)
		}
		last[op.Process] = op.Index
	}
}
