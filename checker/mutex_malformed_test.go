package checker

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// completionBeforeInvocation is the double-holder history of issue 28
// with process 1's acquire completing (op 6, 0.5 µs) before it was
// invoked (op 5, 6 µs): the linearizability visualization panicked on it.
func completionBeforeInvocation(t *testing.T) history.History {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "cmd", "check", "testdata", "double-holder", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"index":6,"time":7000`), []byte(`"index":6,"time":500`), 1)
	h, err := history.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if h[6].Time != 500 {
		t.Fatal("the test history no longer has op 6 at 7 µs")
	}
	return h
}

// TestMutexMalformedIsNoVerdict checks that the mutex checker, called
// directly or composed, neither panics nor gives a verdict on a history
// whose completion precedes its invocation.
func TestMutexMalformedIsNoVerdict(t *testing.T) {
	h := completionBeforeInvocation(t)
	for _, c := range []Checker{NewMutex(Options{}), Default(Options{})} {
		t.Run(c.Name(), func(t *testing.T) {
			r := c.Check(context.Background(), h)
			if r.Valid != Unknown || !strings.Contains(r.Error, "completes acquire at 500ns, before its invocation (op 5)") {
				t.Fatalf("verdict %s, error %q; want unknown naming op 6", r.Valid, r.Error)
			}
			if r.Visualize != nil {
				var buf bytes.Buffer
				if err := r.Visualize(&buf); err != nil {
					t.Logf("visualize: %v", err)
				}
			}
		})
	}
}

// TestMutexPanicIsAnError checks that a panic inside the mutex checker
// is Unknown with the panic in Error.
func TestMutexPanicIsAnError(t *testing.T) {
	a := &analysis{pairs: []pair{{}}} // a pair with no invocation
	r := (&mutex{}).checkAnalysis(context.Background(), a)
	if r.Valid != Unknown || !strings.HasPrefix(r.Error, "internal error: ") || r.Checker != "mutex" {
		t.Fatalf("got %s %q from %q, want unknown with an internal error from mutex", r.Valid, r.Error, r.Checker)
	}
}

// TestMutexModelForeignInput checks that the model's functions refuse,
// rather than panic on, what is not one of its ops or states: Porcupine's
// visualization passes nil for a completion it saw before its call.
func TestMutexModelForeignInput(t *testing.T) {
	m := mutexModel()
	tests := []struct {
		name  string
		state any
		input any
	}{
		{"nil input", 0, nil},
		{"foreign input", 0, "acquire"},
		{"nil state", nil, &mutexOp{kind: mAcquire}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, _ := m.Step(tt.state, tt.input, nil)
			if _, isOp := tt.input.(*mutexOp); ok && !isOp {
				t.Errorf("Step accepted input %v", tt.input)
			}
			if d := m.DescribeOperation(tt.input, nil); !strings.Contains(d, "acquire") && d != "?" {
				t.Errorf("DescribeOperation(%v) = %q", tt.input, d)
			}
			if d := m.DescribeState(tt.state); tt.state == nil && d != "?" {
				t.Errorf("DescribeState(nil) = %q, want ?", d)
			}
			_ = m.Hash(tt.state)
			if m.Equal(tt.state, 1) {
				t.Errorf("Equal(%v, 1)", tt.state)
			}
		})
	}
	if !m.Equal(2, 2) || m.Equal(1, 2) || m.Hash(3) != 3 || m.DescribeState(0) != "free" {
		t.Error("the model's Equal, Hash or DescribeState changed on its own states")
	}
}

// TestMutexVisualizeReturnBeforeCall checks that drawing a check whose op
// returns before its call (which Porcupine cannot draw) is an error from
// Visualize, not a panic, and that so is any panic of a Visualize.
func TestMutexVisualizeReturnBeforeCall(t *testing.T) {
	a := &mutexOp{kind: mAcquire, proc: 0, call: 10, ret: 20}
	b := &mutexOp{kind: mAcquire, proc: 1, call: 30, ret: 5}
	info, parts := verbose(mutexModel(), []chunk{{key: "k", start: &mutexOp{kind: mStart, inv: -1, done: -1, call: 4, ret: 4},
		ops: []linInput{a, b}, from: 5, to: 30}}, nil, 0)
	var buf bytes.Buffer
	if err := safeVisualize(visualizer(mutexModel(), parts, info))(&buf); err != nil && !strings.Contains(err.Error(), "write porcupine visualization: internal error: ") {
		t.Fatalf("Visualize: %v", err)
	}
	if safeVisualize(nil) != nil {
		t.Fatal("safeVisualize(nil) is not nil")
	}
	boom := safeVisualize(func(io.Writer) error { panic("boom") })
	if err := boom(&buf); err == nil || err.Error() != "write porcupine visualization: internal error: boom" {
		t.Fatalf("a panicking Visualize returned %v", err)
	}
	fine := safeVisualize(func(w io.Writer) error { _, err := io.WriteString(w, "ok"); return err })
	if buf.Reset(); fine(&buf) != nil || buf.String() != "ok" {
		t.Fatalf("safeVisualize changed a working Visualize: %q", buf.String())
	}
}

// TestVerbosePartsAreCopies checks that the operations a visualization
// keeps are copies of the chunk's inputs, equal to them but not them: an
// input is an element of its checker's array of one per op, which a kept
// pointer would hold live for the rest of a long history's check.
func TestVerbosePartsAreCopies(t *testing.T) {
	start := &mutexOp{kind: mStart, inv: -1, done: -1, call: 4, ret: 4}
	ops := []linInput{&mutexOp{kind: mAcquire, proc: 0, inv: 1, done: 2, call: 10, ret: 20},
		&csOp{kind: rRMW, proc: 1, read: 2, wrote: 3, inv: 3, done: 4, call: 30, ret: 40}}
	_, parts := verbose(mutexModel(), []chunk{{key: "k", start: start, ops: ops, from: 4, to: 40}}, nil, 0)
	if len(parts) != 1 || len(parts[0]) != 3 {
		t.Fatalf("parts %v, want one of three ops", parts)
	}
	for i, in := range append([]linInput{start}, ops...) {
		got := parts[0][i].Input
		if got == any(in) {
			t.Errorf("op %d: the part holds the chunk's own input", i)
		}
		want := in.operation()
		want.Input = got
		if !reflect.DeepEqual(got, any(in)) || parts[0][i] != want {
			t.Errorf("op %d: part %+v (input %+v), want a copy of %+v", i, parts[0][i], got, in)
		}
	}
}
