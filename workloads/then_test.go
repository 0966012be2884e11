package workloads

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func TestThen(t *testing.T) {
	grant := &history.Value{Owner: "o1", Token: 7}
	tests := []struct {
		name    string
		fencing bool
		req     Request
		reply   Reply
		want    *Request // nil: no critical section follows
	}{
		{"granted", false, Request{ID: 4, F: history.FAcquire, Key: "k1", Then: ThenCS}, Reply{ID: 4, Type: history.OK, Value: grant},
			&Request{ID: 5, F: history.FCS, Key: "k1", Value: &history.Value{Owner: "o1"}}},
		{"granted, fenced", true, Request{ID: 4, F: history.FAcquire, Key: "k1", Then: ThenCS}, Reply{ID: 4, Type: history.OK, Value: grant},
			&Request{ID: 5, F: history.FCS, Key: "k1", Value: &history.Value{Owner: "o1", Token: 7}}},
		{"granted with no value", true, Request{ID: 2, F: history.FAcquire, Key: "k0", Then: ThenCS}, Reply{ID: 2, Type: history.OK},
			&Request{ID: 3, F: history.FCS, Key: "k0", Value: &history.Value{}}},
		{"granted, then released", false, Request{ID: 4, F: history.FAcquire, Key: "k1", Then: ThenCSRelease}, Reply{ID: 4, Type: history.OK, Value: grant},
			&Request{ID: 5, F: history.FCS, Key: "k1", Value: &history.Value{Owner: "o1"}}},
		{"not asked", false, Request{ID: 4, F: history.FAcquire, Key: "k1"}, Reply{ID: 4, Type: history.OK, Value: grant}, nil},
		{"failed", false, Request{ID: 4, F: history.FAcquire, Key: "k1", Then: ThenCS}, Reply{ID: 4, Type: history.Fail}, nil},
		{"in doubt", false, Request{ID: 4, F: history.FAcquire, Key: "k1", Then: ThenCS}, Reply{ID: 4, Type: history.Info}, nil},
		{"not an acquire", false, Request{ID: 4, F: history.FRelease, Key: "k1", Then: ThenCS}, Reply{ID: 4, Type: history.OK}, nil},
		{"unknown then", false, Request{ID: 4, F: history.FAcquire, Key: "k1", Then: "release"}, Reply{ID: 4, Type: history.OK, Value: grant}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &worker{cfg: Config{Fencing: tt.fencing}}
			got, ok := w.then(tt.req, tt.reply)
			if (tt.want != nil) != ok {
				t.Fatalf("then = %+v, %v; want %+v", got, ok, tt.want)
			}
			if ok && (got.ID != tt.want.ID || got.F != tt.want.F || got.Key != tt.want.Key || *got.Value != *tt.want.Value) {
				t.Fatalf("then = %+v (value %+v), want %+v (value %+v)", got, got.Value, tt.want, tt.want.Value)
			}
		})
	}
	var none *worker
	if _, ok := none.then(Request{F: history.FAcquire, Then: ThenCS}, Reply{Type: history.OK}); ok {
		t.Fatal("a worker not open ran a critical section")
	}
}

// TestServeThenCS runs the worker side on a real Redis node: an acquire
// with then cs is answered twice when granted (the critical section's
// reply with the next id), once when not; with then cs+release three times
// (the release's reply with the id after that), and the lock is free
// after.
func TestServeThenCS(t *testing.T) {
	r := startRedis(t)
	cfg := testConfig(r, "redis-set-px", 0)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), inR, outW); outW.Close() }()
	replies := bufio.NewScanner(outR)
	send := func(req Request) {
		t.Helper()
		b, _ := json.Marshal(req)
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	next := func() Reply {
		t.Helper()
		if !replies.Scan() {
			t.Fatalf("no reply: %v", replies.Err())
		}
		var rep Reply
		if err := json.Unmarshal(replies.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	send(Request{ID: 1, F: FOpen, Config: &cfg})
	if rep := next(); rep.Type != history.OK || len(rep.Then) != 2 || rep.Then[0] != ThenCS || rep.Then[1] != ThenCSRelease {
		t.Fatalf("open reply %+v, want ok listing then cs and cs+release", rep)
	}
	send(Request{ID: 2, F: history.FAcquire, Key: "k0", Then: ThenCS})
	acq := next()
	if acq.ID != 2 || acq.Type != history.OK || acq.Value == nil || acq.Value.Owner == "" {
		t.Fatalf("acquire reply %+v, want id 2 ok with an owner", acq)
	}
	cs := next()
	if cs.ID != 3 || cs.Type != history.OK || cs.Value == nil || cs.Value.Wrote == nil {
		t.Fatalf("critical section reply %+v, want id 3 ok with a write", cs)
	}
	// Another client holds k1: the acquire fails and nothing follows it,
	// so the next reply is the next request's.
	other := newClient(t, testConfig(r, "redis-set-px", 1))
	if _, err := other.Acquire(context.Background(), "k1"); err != nil {
		t.Fatal(err)
	}
	send(Request{ID: 4, F: history.FAcquire, Key: "k1", Then: ThenCS})
	if rep := next(); rep.ID != 4 || rep.Type != history.Fail {
		t.Fatalf("acquire of a held lock: %+v, want id 4 fail", rep)
	}
	send(Request{ID: 6, F: history.FRelease, Key: "k0", Value: &history.Value{Owner: acq.Value.Owner}})
	if rep := next(); rep.ID != 6 || rep.Type != history.OK {
		t.Fatalf("release reply %+v, want id 6 ok", rep)
	}
	send(Request{ID: 7, F: history.FAcquire, Key: "k2", Then: ThenCSRelease})
	for i, want := range []string{history.FAcquire, history.FCS, history.FRelease} {
		rep := next()
		if rep.ID != int64(7+i) || rep.Type != history.OK {
			t.Fatalf("reply %d to acquire with then cs+release: %+v, want id %d ok (its %s)", i+1, rep, 7+i, want)
		}
		if want == history.FRelease && (rep.Value == nil || rep.Value.Released == nil || !*rep.Value.Released) {
			t.Fatalf("release reply %+v, want released", rep)
		}
	}
	if _, err := other.Acquire(context.Background(), "k2"); err != nil {
		t.Fatalf("k2 after the worker released it on its own: %v", err)
	}
	send(Request{ID: 10, F: FClose})
	if rep := next(); rep.ID != 10 {
		t.Fatalf("close reply %+v, want id 10", rep)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end after close")
	}
}
