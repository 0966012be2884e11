package workerproc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/workloads"
)

// stdouts runs f with a worker's stdout on a pipe of its own, and again on
// a Mux.
func stdouts(t *testing.T, f func(t *testing.T, mux *Mux)) {
	t.Run("pipe", func(t *testing.T) { f(t, nil) })
	t.Run("mux", func(t *testing.T) { f(t, newMux(t)) })
}

// newMux opens a mux that is closed when t ends, after its workers.
func newMux(t *testing.T) *Mux {
	t.Helper()
	m, err := NewMux()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// sh starts a shell worker that reads one request and then runs script.
func sh(t *testing.T, script string, o Options) *Proc {
	t.Helper()
	p, err := Start([]string{"sh", "-c", "read req; " + script}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

func TestCall(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		want    string // the reply's type, or the error's kind
	}{
		{"reply", `echo '{"id":1,"type":"ok"}'; sleep 5`, 5 * time.Second, "ok"},
		{"event then reply", `echo '{"event":"session"}'; echo '{"id":1,"type":"fail"}'; sleep 5`, 5 * time.Second, "fail"},
		{"stray then reply", `echo '{"id":9,"type":"ok"}'; echo '{"id":1,"type":"info"}'; sleep 5`, 5 * time.Second, "info"},
		{"not protocol", `echo 'hello'; sleep 5`, 5 * time.Second, "protocol"},
		{"exits", `exit 3`, 5 * time.Second, "exited"},
		{"silent", `sleep 5`, 100 * time.Millisecond, "timeout"},
	}
	stdouts(t, func(t *testing.T, mux *Mux) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var events, strays int
				p := sh(t, tt.script, Options{
					OnEvent: func(workloads.Reply) { events++ },
					OnStray: func(int64, workloads.Reply) { strays++ },
					Mux:     mux,
				})
				r, err := p.Call(context.Background(), workloads.Request{F: "acquire"}, tt.timeout)
				var late *Timeout
				got := string(r.Type)
				switch {
				case errors.As(err, &late):
					got = "timeout"
				case errors.Is(err, ErrProtocol):
					got = "protocol"
				case err != nil && strings.Contains(err.Error(), "exited"):
					got = "exited"
				}
				if got != tt.want {
					t.Fatalf("got %q (%v), want %q", got, err, tt.want)
				}
				if err != nil && !errors.Is(err, ErrNoReply) {
					t.Errorf("%v does not wrap ErrNoReply", err)
				}
				if tt.name == "event then reply" && events != 1 {
					t.Errorf("%d events, want 1", events)
				}
				if tt.name == "stray then reply" && strays != 1 {
					t.Errorf("%d strays, want 1", strays)
				}
			})
		}
	})
}

func TestProtocolErrorKillsWorker(t *testing.T) {
	stdouts(t, testProtocolErrorKillsWorker)
}

func testProtocolErrorKillsWorker(t *testing.T, mux *Mux) {
	p, err := Start([]string{"sh", "-c", "echo banner; sleep 30"}, Options{Mux: mux})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	if !p.WaitExit(10 * time.Second) {
		t.Fatal("a worker that wrote a non-protocol line is still running")
	}
	if !errors.Is(p.ReadErr(), ErrProtocol) {
		t.Errorf("ReadErr %v, want ErrProtocol", p.ReadErr())
	}
}

func TestLongLine(t *testing.T) {
	// On a mux, only the worker's own writes count: the shell writes the
	// line itself.
	stdouts(t, func(t *testing.T, mux *Mux) {
		p := sh(t, `x=x; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21; do x=$x$x; done; echo $x; sleep 30`, Options{
			Line: func(*Proc, string, bool) (workloads.Reply, Verdict, error) { return workloads.Reply{}, Skip, nil },
			Mux:  mux,
		})
		if _, err := p.Call(context.Background(), workloads.Request{F: "x"}, 10*time.Second); !errors.Is(err, ErrProtocol) {
			t.Errorf("a line over MaxLine: %v, want ErrProtocol", err)
		}
	})
}

func TestCloseAndCPU(t *testing.T) { stdouts(t, testCloseAndCPU) }

func testCloseAndCPU(t *testing.T, mux *Mux) {
	p := sh(t, `echo '{"id":1,"type":"ok"}'; read next; echo '{"id":2,"type":"ok"}'`, Options{Mux: mux})
	if _, err := p.Call(context.Background(), workloads.Request{F: "acquire"}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if p.CPU() != 0 || p.ExitErr() != nil {
		t.Error("CPU or ExitErr before exit")
	}
	p.Close(5 * time.Second)
	if !p.Exited() {
		t.Fatal("not exited after Close")
	}
	if p.ExitErr() != nil {
		t.Errorf("exit %v, want 0", p.ExitErr())
	}
}

// TestReplyThenExit: a worker that replies and exits at once (as after
// close) gives its reply, never "exited", however the reader and the exit
// race.
func TestReplyThenExit(t *testing.T) { stdouts(t, testReplyThenExit) }

func testReplyThenExit(t *testing.T, mux *Mux) {
	for i := range 100 {
		p, err := Start([]string{"sh", "-c", `read req; echo '{"id":1,"type":"ok"}'`}, Options{Mux: mux})
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Call(context.Background(), workloads.Request{F: "close"}, 10*time.Second)
		p.Kill()
		if err != nil || r.Type != "ok" {
			t.Fatalf("try %d: %+v %v, want the ok reply", i, r, err)
		}
	}
}

// nopStdin is a worker's stdin that takes every request.
type nopStdin struct{}

func (nopStdin) Write(b []byte) (int, error) { return len(b), nil }
func (nopStdin) Close() error                { return nil }

// TestReplyBeforeDone: when the worker's reply and its exit are both in by
// the time the call looks (a slow caller on a busy machine), the call takes
// the reply: the reader handed it over before it closed done.
func TestReplyBeforeDone(t *testing.T) {
	for i := range 200 {
		done := make(chan struct{})
		close(done)
		p := &Proc{stdin: nopStdin{}, replies: make(chan workloads.Reply, 1), done: done}
		p.replies <- workloads.Reply{ID: 1, Type: "ok"}
		r, err := p.Call(context.Background(), workloads.Request{F: "close"}, time.Second)
		if err != nil || r.Type != "ok" {
			t.Fatalf("try %d: %+v %v, want the ok reply", i, r, err)
		}
	}
}

// TestCallThen checks that a request with Then takes two ids, and that
// Await finds the second reply after a stray.
func TestCallThen(t *testing.T) {
	var strays []int64
	p := sh(t, `echo '{"id":1,"type":"ok"}'; echo '{"id":7,"type":"ok"}'; echo '{"id":2,"type":"fail"}'; read req; echo "$req"; sleep 5`,
		Options{OnStray: func(_ int64, r workloads.Reply) { strays = append(strays, r.ID) }})
	r, err := p.Call(context.Background(), workloads.Request{F: "acquire", Then: workloads.ThenCS}, 5*time.Second)
	if err != nil || r.ID != 1 {
		t.Fatalf("first reply %+v, %v; want id 1", r, err)
	}
	if p.LastID() != 2 {
		t.Fatalf("LastID %d after a request with Then, want 2", p.LastID())
	}
	r, err = p.Await(context.Background(), p.LastID(), 5*time.Second)
	if err != nil || r.ID != 2 || r.Type != "fail" {
		t.Fatalf("second reply %+v, %v; want id 2, fail", r, err)
	}
	if len(strays) != 1 || strays[0] != 7 {
		t.Fatalf("strays %v, want [7]", strays)
	}
	// The shell echoes the next request back as its reply: its id is 3.
	if r, err := p.Call(context.Background(), workloads.Request{F: "close"}, 5*time.Second); err != nil || r.ID != 3 {
		t.Fatalf("the next request's echo %+v, %v; want id 3", r, err)
	}
}
