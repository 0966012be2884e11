package workerproc

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/workloads"
)

// waitFile waits up to 10 s for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

// TestMuxOrder: two workers on one mux, the second writing only after
// the first has written (as a rival is granted only after its holder's
// release, which the holder reported first). With the mux's own reader
// held until both have written, Sync hands the lines over in the order
// they were written.
func TestMuxOrder(t *testing.T) {
	for try := range 20 {
		dir := t.TempDir()
		first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
		m := newMux(t)
		var mu sync.Mutex
		var order []string
		onReply := func(r workloads.Reply) {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, r.Error)
		}
		a := sh(t, `while [ ! -e `+first+` ]; do sleep 0.01; done; echo '{"id":1,"type":"ok","error":"after"}'; : > `+second+`; sleep 30`,
			Options{Mux: m, OnReply: onReply})
		b := sh(t, `echo '{"id":1,"type":"ok","error":"before"}'; : > `+first+`; sleep 30`, Options{Mux: m, OnReply: onReply})
		m.held.Store(true) // nothing is read until both have written
		var wg sync.WaitGroup
		for _, p := range []*Proc{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := p.Call(context.Background(), workloads.Request{F: "acquire"}, 20*time.Second); err != nil {
					t.Error(err)
				}
			}()
		}
		waitFile(t, second)
		m.Sync()
		m.held.Store(false)
		wg.Wait()
		mu.Lock()
		if len(order) != 2 || order[0] != "before" || order[1] != "after" {
			t.Fatalf("try %d: replies handed over in the order %v, want [before after]", try, order)
		}
		mu.Unlock()
		a.Kill()
		b.Kill()
	}
}

// TestMuxSync: a line a worker wrote before Sync is handed over by the
// time Sync returns, the mux's own reader held.
func TestMuxSync(t *testing.T) {
	dir := t.TempDir()
	wrote := filepath.Join(dir, "wrote")
	m := newMux(t)
	var got atomic.Bool
	p := sh(t, `echo '{"event":"session"}'; : > `+wrote+`; sleep 30`, Options{Mux: m, OnEvent: func(workloads.Reply) { got.Store(true) }})
	m.held.Store(true)
	if _, err := p.stdin.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	waitFile(t, wrote)
	m.Sync()
	if !got.Load() {
		t.Fatal("Sync returned before handing over the event the worker wrote before it")
	}
}

// TestMuxPieces: a line a worker writes in pieces, with another worker's
// line between them, reaches each worker's call whole; so does a last
// line with no newline before the worker exits.
func TestMuxPieces(t *testing.T) {
	dir := t.TempDir()
	half, other := filepath.Join(dir, "half"), filepath.Join(dir, "other")
	m := newMux(t)
	a := sh(t, `printf '{"id":1,'; : > `+half+`; while [ ! -e `+other+` ]; do sleep 0.01; done; printf '"type":"ok"}\n'; sleep 30`, Options{Mux: m})
	b := sh(t, `while [ ! -e `+half+` ]; do sleep 0.01; done; echo '{"id":1,"type":"fail"}'; : > `+other+`; sleep 30`, Options{Mux: m})
	c := sh(t, `printf '{"id":1,"type":"info"}'`, Options{Mux: m})
	var wg sync.WaitGroup
	for _, w := range []struct {
		p    *Proc
		want string
	}{{a, "ok"}, {b, "fail"}, {c, "info"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := w.p.Call(context.Background(), workloads.Request{F: "acquire"}, 20*time.Second)
			if err != nil || string(r.Type) != w.want {
				t.Errorf("reply %+v, %v; want %s", r, err, w.want)
			}
		}()
	}
	wg.Wait()
}

// TestCallThenSteps: a request with then cs+release takes three ids.
func TestCallThenSteps(t *testing.T) {
	p := sh(t, `echo '{"id":1,"type":"ok"}'; sleep 5`, Options{})
	if _, err := p.Call(context.Background(), workloads.Request{F: "acquire", Then: workloads.ThenCSRelease}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if p.LastID() != 3 {
		t.Fatalf("LastID %d after a request with then cs+release, want 3", p.LastID())
	}
}

// TestMuxDropped: what a worker's child writes to the stdout it inherited
// is not the worker's, and is counted as dropped.
func TestMuxDropped(t *testing.T) {
	m := newMux(t)
	p := sh(t, `/bin/echo '{"id":1,"type":"ok"}'; sleep 30`, Options{Mux: m})
	if _, err := p.stdin.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); m.Dropped() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the line a worker's child wrote was not counted as dropped")
		}
	}
	if r, err := p.Await(context.Background(), 1, 100*time.Millisecond); err == nil {
		t.Fatalf("the line a worker's child wrote reached the worker's call: %+v", r)
	}
}
