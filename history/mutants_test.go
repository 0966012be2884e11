package history

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// Tests that pin behaviour the mutation run (make mutation, docs/testing.md)
// found unpinned: each case fails on at least one mutant that survived the
// suite before.

func TestPairAccessors(t *testing.T) {
	inv := &Op{Index: 0, Time: time.Second, Process: 0, Type: Invoke, F: FCS, Value: &Value{Token: 3}}
	done := &Op{Index: 1, Time: 2 * time.Second, Process: 0, Type: OK, F: FCS, Value: &Value{Token: 4}}
	bare := &Op{Index: 1, Time: 3 * time.Second, Process: 0, Type: Fail, F: FCS}
	info := &Op{Index: 1, Time: 4 * time.Second, Process: 0, Type: Info, F: FCS}
	tests := []struct {
		name     string
		p        Pair
		typ      Type
		end      time.Duration
		returned time.Duration
		token    int64 // of Value(), 0 for nil
	}{
		{"never completed", Pair{Invoke: inv}, Info, math.MaxInt64, time.Second, 3},
		{"completed with a value", Pair{Invoke: inv, Complete: done}, OK, 2 * time.Second, 2 * time.Second, 4},
		{"completed without a value", Pair{Invoke: inv, Complete: bare}, Fail, 3 * time.Second, 3 * time.Second, 3},
		{"info", Pair{Invoke: inv, Complete: info}, Info, math.MaxInt64, 4 * time.Second, 3},
		{"no value at all", Pair{Invoke: &Op{Type: Invoke, F: FCS}, Complete: bare}, Fail, 3 * time.Second, 3 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Type(); got != tt.typ {
				t.Errorf("Type %v, want %v", got, tt.typ)
			}
			if got := tt.p.End(); got != tt.end {
				t.Errorf("End %v, want %v", got, tt.end)
			}
			if got := tt.p.Returned(); got != tt.returned {
				t.Errorf("Returned %v, want %v", got, tt.returned)
			}
			var tok int64
			if v := tt.p.Value(); v != nil {
				tok = v.Token
			}
			if tok != tt.token {
				t.Errorf("Value token %d, want %d", tok, tt.token)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	h := History{
		{Process: NemesisProcess, Type: Info, F: FPause},
		{Process: 0, Type: Invoke, F: FAcquire, Key: "b"},
		{Process: 1, Type: Invoke, F: FAcquire, Key: "a"},
		{Process: 0, Type: OK, F: FAcquire, Key: "b"},
		{Process: 2, Type: Invoke, F: FAcquire, Key: "c"},
	}
	if got := h.Keys(); !slices.Equal(got, []string{"b", "a", "c"}) {
		t.Fatalf("Keys %v, want [b a c]", got)
	}
	if got := (History{}).Keys(); got != nil {
		t.Fatalf("Keys of nothing %v", got)
	}
}

func TestOpString(t *testing.T) {
	tests := []struct {
		op   Op
		want string
	}{
		{Op{Index: 3, Time: 1500 * time.Millisecond, Process: 2, Type: Invoke, F: FAcquire},
			"3 1.500s p2 invoke acquire"},
		{Op{Index: 4, Time: 2 * time.Second, Process: 1, Type: Fail, F: FCS, Key: "k",
			Value: &Value{Token: 7, Read: Int64(3), Wrote: Int64(4), Extra: &Extra{Rejected: "write", Detail: "stale"}}, Error: "boom"},
			"4 2.000s p1 fail cs k token=7 read=3 wrote=4 rejected=write stale error=boom"},
		{Op{Index: 5, Time: 0, Process: 1, Type: OK, F: FCS, Key: "k", Value: &Value{}},
			"5 0.000s p1 ok cs k"},
		{Op{Index: 6, Time: 0, Process: 1, Type: OK, F: FCS, Value: &Value{Read: Int64(0)}},
			"6 0.000s p1 ok cs read=0"},
	}
	for _, tt := range tests {
		if got := tt.op.String(); got != tt.want {
			t.Errorf("String\n got %q\nwant %q", got, tt.want)
		}
	}
}

// TestFaultEndingAtZero: a fault undone at time 0 ends at 0, not at the end
// of the history (End < 0 means never undone).
func TestFaultEndingAtZero(t *testing.T) {
	h := History{
		{Index: 0, Time: 0, Process: NemesisProcess, Type: Info, F: FPause, Value: &Value{Extra: &Extra{Targets: []int{1}}}},
		{Index: 1, Time: 0, Process: NemesisProcess, Type: Info, F: FResume},
		{Index: 2, Time: time.Second, Process: 0, Type: Invoke, F: FAcquire, Key: "k"},
	}
	fs := h.Faults()
	if len(fs) != 1 || fs[0].Start != 0 || fs[0].End != 0 {
		t.Fatalf("faults %+v, want one from 0 to 0", fs)
	}
}

// TestDecodeLongHistoryInParallel decodes more lines than one worker
// parses, on several processors, and checks every op landed in its place.
func TestDecodeLongHistoryInParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var b strings.Builder
	const n = 3001
	for i := range n {
		fmt.Fprintf(&b, `{"index":%d,"time":%d,"process":%d,"type":"invoke","f":"acquire","key":"k"}`+"\n", i, i*1000, i%7)
	}
	h, err := Decode(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != n {
		t.Fatalf("%d ops, want %d", len(h), n)
	}
	for i, op := range h {
		if op.Index != i || op.Time != time.Duration(i*1000) || op.Process != i%7 || op.F != FAcquire {
			t.Fatalf("op %d decoded as %v", i, op)
		}
	}
	// A malformed line deep inside: the ops before it, and its number.
	bad := strings.Replace(b.String(), `{"index":2500,`, `{"index":2500,,`, 1)
	h, err = Decode(strings.NewReader(bad))
	if err == nil || !strings.HasPrefix(err.Error(), "line 2501: malformed op") {
		t.Fatalf("error %v, want line 2501", err)
	}
	if len(h) != 2500 || h[2499].Index != 2499 {
		t.Fatalf("%d ops before the malformed line, want 2500", len(h))
	}
}

func TestDecodeReadErrors(t *testing.T) {
	good := `{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k"}` + "\n"
	long := good + strings.Repeat(" ", maxLine+1) + "x\n"
	if _, err := Decode(strings.NewReader(long)); err == nil || err.Error() != fmt.Sprintf("line 2: longer than %d bytes", maxLine) {
		t.Fatalf("long line: %v", err)
	}
	boom := errors.New("boom")
	_, err := Decode(io.MultiReader(strings.NewReader(good+good), iotest.ErrReader(boom)))
	if err == nil || err.Error() != "line 3: boom" || !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}

func TestValidateOpFields(t *testing.T) {
	tests := []struct {
		op   Op
		want string
	}{
		{Op{Time: -1, Process: 0, Type: Invoke, F: FAcquire}, "line 1: negative time -1"},
		{Op{Time: 0, Process: -2, Type: Invoke, F: FAcquire}, "line 1: invalid process -2"},
		{Op{Time: 0, Process: NemesisProcess, Type: Invoke, F: FPause}, ""},
		{Op{Time: 0, Process: 0, Type: Invoke, F: FAcquire}, ""},
	}
	for _, tt := range tests {
		err := Validate(History{tt.op})
		if (err == nil) != (tt.want == "") || (err != nil && err.Error() != tt.want) {
			t.Errorf("Validate(%v): %v, want %q", tt.op, err, tt.want)
		}
	}
}

func TestRecorderSince(t *testing.T) {
	r := NewRecorder(nil)
	for range 3 {
		r.Record(Op{Process: 0, Type: Invoke, F: FAcquire, Key: "k"})
	}
	for _, tt := range []struct {
		from int
		want []int // indices
	}{{-1, []int{0, 1, 2}}, {0, []int{0, 1, 2}}, {2, []int{2}}, {3, nil}, {4, nil}} {
		got := r.Since(tt.from)
		var idx []int
		for _, op := range got {
			idx = append(idx, op.Index)
		}
		if !slices.Equal(idx, tt.want) || (tt.want == nil && got != nil) {
			t.Errorf("Since(%d) = %v, want %v", tt.from, idx, tt.want)
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRecorderSinkError(t *testing.T) {
	var buf strings.Builder
	ok := NewRecorder(&buf)
	ok.Record(Op{Process: 0, Type: Invoke, F: FAcquire, Key: "k"})
	if err := ok.Err(); err != nil || !strings.HasSuffix(buf.String(), "\n") {
		t.Fatalf("good sink: %v %q", err, buf.String())
	}
	bad := NewRecorder(failingWriter{})
	bad.Record(Op{Process: 0, Type: Invoke, F: FAcquire, Key: "k"})
	bad.Record(Op{Process: 0, Type: OK, F: FAcquire, Key: "k"})
	if err := bad.Err(); err == nil || err.Error() != "write history op 0: disk full" {
		t.Fatalf("failing sink: %v", err)
	}
	if len(bad.History()) != 2 {
		t.Fatalf("the ops are kept when the sink fails")
	}
}

func TestReadFileTorn(t *testing.T) {
	good := `{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k"}` + "\n"
	path := t.TempDir() + "/history.jsonl"
	if err := os.WriteFile(path, []byte(good+`{"index":1,"ti`), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := ReadFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+": line 2: ") || len(h) != 1 {
		t.Fatalf("ReadFile of a torn file: %d ops, %v", len(h), err)
	}
	h, torn, err := ReadFileTorn(path)
	if err != nil || torn == nil || torn.Line != 2 || len(h) != 1 {
		t.Fatalf("ReadFileTorn: %d ops, torn %v, %v", len(h), torn, err)
	}
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := ReadFile(path); err != nil || len(h) != 1 {
		t.Fatalf("ReadFile: %d ops, %v", len(h), err)
	}
}
