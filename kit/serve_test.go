package kit

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fakeLock grants k0 and times out on anything else.
type fakeLock struct{ closed bool }

func (f *fakeLock) Acquire(ctx context.Context, key string) (Grant, error) {
	switch key {
	case "k0":
		return Grant{Owner: "o1", Token: 7}, nil
	case "held":
		return Grant{}, ErrNotAcquired
	case "refused":
		return Grant{}, Definite(errors.New("connection refused"))
	}
	return Grant{}, context.DeadlineExceeded
}

func (f *fakeLock) Release(ctx context.Context, key string, g Grant) (bool, error) {
	return g.Owner == "o1", nil
}

func (f *fakeLock) Close() error { f.closed = true; return nil }

// TestServe: each request's reply and its completion, as the protocol
// states them: a timeout is info, a certain refusal fail, a bad open fail.
func TestServe(t *testing.T) {
	lock := &fakeLock{}
	open := func(ctx context.Context, cfg Config) (Lock, error) {
		if cfg.Lock == "nope" {
			return nil, errors.New("unknown design")
		}
		return lock, nil
	}
	in := strings.Join([]string{
		`{"id":1,"f":"acquire","key":"k0"}`,
		`{"id":2,"f":"open","config":{"protocol":999}}`,
		`{"id":3,"f":"open","config":{"protocol":2,"lock":"nope"}}`,
		`{"id":4,"f":"open","config":{"protocol":2,"workload":"inventory"}}`,
		`{"id":5,"f":"open","config":{"protocol":2,"lock":"x","acquire_timeout_ms":1000,"op_timeout_ms":100}}`,
		`{"id":6,"f":"acquire","key":"k0"}`,
		`{"id":7,"f":"acquire","key":"slow"}`,
		`{"id":8,"f":"acquire","key":"held"}`,
		`{"id":9,"f":"acquire","key":"refused"}`,
		`{"id":10,"f":"release","key":"k0","value":{"owner":"o1","token":7}}`,
		`{"id":11,"f":"release","key":"k0","value":{"owner":"o2"}}`,
		`{"id":12,"f":"frob"}`,
		`{"id":13,"f":"close"}`,
		`{"id":14,"f":"acquire","key":"k0"}`,
	}, "\n") + "\n"
	var out strings.Builder
	if err := Serve(context.Background(), strings.NewReader(in), &out, open); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"id":1,"type":"fail","error":"not open"}`,
		`{"id":2,"type":"fail","error":"protocol 999 not supported (this worker speaks 2)"}`,
		`{"id":3,"type":"fail","error":"open nope: unknown design"}`,
		`{"id":4,"type":"fail","error":"workload inventory: the kit runs the register workload only"}`,
		`{"id":5,"type":"ok","protocol":2}`,
		`{"id":6,"type":"ok","value":{"owner":"o1","token":7}}`,
		`{"id":7,"type":"info","error":"acquire slow: context deadline exceeded"}`,
		`{"id":8,"type":"fail","error":"acquire held: lock not acquired: held by another client until the acquire timeout"}`,
		`{"id":9,"type":"fail","error":"acquire refused: connection refused"}`,
		`{"id":10,"type":"ok","value":{"released":true}}`,
		`{"id":11,"type":"ok","value":{"released":false}}`,
		`{"id":12,"type":"fail","error":"unknown request \"frob\""}`,
		`{"id":13,"type":"ok"}`,
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("replies:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !lock.closed {
		t.Error("the lock was not closed at the end")
	}
}

// TestServeBadLine: a line that is not JSON ends the worker with an error.
func TestServeBadLine(t *testing.T) {
	err := Serve(context.Background(), strings.NewReader("hello\n"), &strings.Builder{}, nil)
	if err == nil || !strings.Contains(err.Error(), `request "hello"`) {
		t.Fatalf("err = %v", err)
	}
}
