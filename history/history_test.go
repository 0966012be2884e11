package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	r := NewRecorder(nil)
	r.Record(Op{Process: 0, Type: Invoke, F: FAcquire, Key: "k"})
	r.Record(Op{Process: 0, Type: OK, F: FAcquire, Key: "k", Value: &Value{Token: 7, Owner: "o"}})
	r.Record(Op{Process: 0, Type: Invoke, F: FCS, Key: "k", Value: &Value{Token: 7}})
	r.Record(Op{Process: 0, Type: Fail, F: FCS, Key: "k", Value: &Value{Token: 7, Read: Int64(3), Extra: &Extra{Rejected: "write", MaxToken: 9}}})
	r.Record(Op{Process: NemesisProcess, Type: Invoke, F: FPause})
	r.Record(Op{Process: NemesisProcess, Type: Info, F: FPause, Value: &Value{Extra: &Extra{Targets: []int{0}, Duration: time.Second}}})
	want := r.History()
	var buf bytes.Buffer
	if err := Encode(&buf, want); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("decoded %d ops, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Errorf("op %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func TestRecorderSinkIsLineAtATime(t *testing.T) {
	var buf bytes.Buffer
	r := NewRecorder(&buf)
	r.Record(Op{Process: 1, Type: Invoke, F: FAcquire, Key: "k"})
	if !strings.HasSuffix(buf.String(), "\n") || strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("sink holds %q, want one full line", buf.String())
	}
	h, err := Decode(&buf)
	if err != nil || len(h) != 1 || h[0].Index != 0 {
		t.Fatalf("decode sink: %v %v", h, err)
	}
}

func TestDecodeErrorsNameTheLine(t *testing.T) {
	good := `{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k"}`
	tests := []struct {
		name, input, want string
	}{
		{"not json", good + "\n{oops\n", "line 2: malformed op"},
		{"unknown type", good + "\n" + `{"index":1,"time":2,"process":0,"type":"done","f":"acquire"}`, `line 2: unknown type "done"`},
		{"missing f", `{"index":0,"time":1,"process":0,"type":"ok"}`, `line 1: missing "f"`},
		{"unknown field", `{"index":0,"time":1,"process":0,"type":"ok","f":"x","bogus":1}`, "line 1: malformed op"},
		{"negative time", `{"index":0,"time":-5,"process":0,"type":"ok","f":"x"}`, "line 1: negative time"},
		{"bad process", `{"index":0,"time":5,"process":-3,"type":"ok","f":"x"}`, "line 1: invalid process"},
		{"blank lines count", "\n\n{", "line 3: malformed op"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got error %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestPairs(t *testing.T) {
	h := History{
		{Index: 0, Process: 0, Type: Invoke, F: FAcquire},
		{Index: 1, Process: 1, Type: Invoke, F: FAcquire},
		{Index: 1, Process: 1, Type: Info, F: FEvent, Value: &Value{Extra: &Extra{Detail: "session expired"}}},
		{Index: 2, Process: 0, Type: OK, F: FAcquire, Time: 5},
		{Index: 3, Process: 0, Type: Invoke, F: FRelease, Time: 6},
	}
	pairs, err := h.Pairs()
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 3 {
		t.Fatalf("got %d pairs, want 3", len(pairs))
	}
	if pairs[0].Type() != OK || pairs[0].End() != 5 {
		t.Errorf("pair 0: type %s end %d", pairs[0].Type(), pairs[0].End())
	}
	if pairs[1].Type() != Info || pairs[2].Type() != Info {
		t.Errorf("open ops must count as info")
	}
	if _, err := (History{{Process: 0, Type: Invoke, F: FAcquire, Time: 7}, {Index: 1, Process: 0, Type: OK, F: FAcquire, Time: 7}}).Pairs(); err != nil {
		t.Errorf("a completion at its invocation's time: %v", err)
	}
	bad := []struct {
		h    History
		want string
	}{
		{History{{Process: 0, Type: OK, F: FAcquire}}, "op 0: process 0 completes acquire with no open invocation"},
		{History{{Process: 0, Type: Invoke, F: FAcquire}, {Index: 1, Process: 0, Type: Invoke, F: FRelease}}, "op 1: process 0 invokes release while op 0 (acquire) is open"},
		{History{{Process: 0, Type: Invoke, F: FAcquire}, {Index: 1, Process: 0, Type: OK, F: FRelease}}, "op 1: process 0 completes release but invoked acquire"},
		{History{{Process: 0, Type: Invoke, F: FAcquire, Time: 7}, {Index: 1, Process: 0, Type: OK, F: FAcquire, Time: 6}},
			"op 1: process 0 completes acquire at 6ns, before its invocation (op 0) at 7ns"},
	}
	for _, tt := range bad {
		if _, err := tt.h.Pairs(); err == nil || err.Error() != tt.want {
			t.Errorf("Pairs: %v, want %s", err, tt.want)
		}
	}
}

func TestFaults(t *testing.T) {
	h := History{
		{Index: 0, Time: 10, Process: -1, Type: Invoke, F: FPause},
		{Index: 1, Time: 11, Process: -1, Type: Info, F: FPause, Value: &Value{Extra: &Extra{Targets: []int{3}}}},
		{Index: 2, Time: 20, Process: -1, Type: Invoke, F: FResume},
		{Index: 3, Time: 21, Process: -1, Type: Info, F: FResume},
		{Index: 4, Time: 30, Process: -1, Type: Invoke, F: FKill},
		{Index: 5, Time: 31, Process: -1, Type: Info, F: FKill, Error: "no such node"},
		{Index: 6, Time: 32, Process: -1, Type: Invoke, F: FFailover},
		{Index: 7, Time: 35, Process: -1, Type: Info, F: FFailover},
		{Index: 8, Time: 36, Process: -1, Type: Invoke, F: FHeal},
		{Index: 9, Time: 38, Process: -1, Type: Info, F: FHeal},
		{Index: 10, Time: 40, Process: -1, Type: Invoke, F: FPartition},
		{Index: 11, Time: 41, Process: -1, Type: Info, F: FPartition},
		{Index: 12, Time: 50, Process: 2, Type: Invoke, F: FAcquire},
	}
	f := h.Faults()
	if len(f) != 3 {
		t.Fatalf("got %d faults, want 3: %+v", len(f), f)
	}
	if f[1].F != FFailover || f[1].Start != 32 || f[1].End != 38 {
		t.Errorf("a failover is in force from its invoke (the cut) to its heal: %+v", f[1])
	}
	if f[0].F != FPause || f[0].Start != 11 || f[0].End != 21 || f[0].Targets[0] != 3 {
		t.Errorf("pause fault: %+v", f[0])
	}
	if f[2].F != FPartition || f[2].Start != 41 || f[2].End != 50 {
		t.Errorf("unhealed partition must last to the end: %+v", f[2])
	}
	for i, want := range []time.Duration{10, 32, 40} {
		if f[i].Invoked != want {
			t.Errorf("fault %d (%s) invoked at %d, want %d", i, f[i].F, f[i].Invoked, want)
		}
	}
	// A start op with no invocation (a history written by hand) was
	// invoked, as far as anyone knows, when it took effect.
	if g := (History{{Index: 0, Time: 7, Process: -1, Type: Info, F: FKill}}).Faults(); len(g) != 1 || g[0].Invoked != 7 || g[0].Start != 7 {
		t.Errorf("a fault with no invocation: %+v, want invoked at its start, 7", g)
	}
}

func TestDecodeTornLastLine(t *testing.T) {
	good := `{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k"}`
	tests := []struct {
		name, input string
		ops         int
		tornLine    int    // 0: not torn
		wantErr     string // "": no error
	}{
		{"whole", good + "\n" + good + "\n", 2, 0, ""},
		{"last line without newline parses", good + "\n" + good, 2, 0, ""},
		{"torn last line", good + "\n" + good + "\n" + `{"index":2,"ti`, 2, 3, ""},
		{"torn after blank lines", good + "\n\n" + `{"ind`, 1, 3, ""},
		{"malformed last line with its newline", good + "\n{oops\n", 1, 0, "line 2: malformed op"},
		{"malformed line in the middle", good + "\n{oops\n" + good + "\n", 1, 0, "line 2: malformed op"},
		{"valid JSON but not an op, torn", good + "\n" + `{"index":1,"time":2,"process":0,"type":"done","f":"x"}`, 1, 2, ""},
		// Longer than one parsing batch: line numbers and ops still count
		// from the start, and the first malformed line wins.
		{"malformed line in a later batch", lines(good, decodeBatch+7) + "{oops\n" + lines(good, 3), decodeBatch + 7, 0,
			fmt.Sprintf("line %d: malformed op", decodeBatch+8)},
		{"first of two malformed lines", lines(good, 5) + "{oops\n" + lines(good, decodeBatch) + "{again\n", 5, 0, "line 6: malformed op"},
		{"torn after two batches", lines(good, 2*decodeBatch+3) + `{"ind`, 2*decodeBatch + 3, 2*decodeBatch + 4, ""},
		{"whole, three batches", lines(good, 3*decodeBatch), 3 * decodeBatch, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, torn, err := DecodeTorn(strings.NewReader(tt.input))
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case len(h) != tt.ops:
				t.Fatalf("%d ops, want %d", len(h), tt.ops)
			case tt.tornLine == 0 && torn != nil:
				t.Fatalf("torn %v, want none", torn)
			case tt.tornLine != 0 && (torn == nil || torn.Line != tt.tornLine):
				t.Fatalf("torn %v, want line %d", torn, tt.tornLine)
			}
			if _, err := Decode(strings.NewReader(tt.input)); (err != nil) != (tt.wantErr != "" || tt.tornLine != 0) {
				t.Fatalf("strict Decode error %v", err)
			}
		})
	}
}

// lines is n copies of line, each with its newline.
func lines(line string, n int) string { return strings.Repeat(line+"\n", n) }

// benchHistoryJSONL is n ops shaped as a harness run writes them: polling
// acquires, grants with a token and owner, critical sections with their
// read and write, releases.
func benchHistoryJSONL(n int) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	read, wrote := int64(0), int64(0)
	released := true
	for i := 0; i < n; i++ {
		op := Op{Index: i, Time: time.Duration(i) * 37 * time.Microsecond, Process: i % 10, Key: "k0"}
		switch i % 6 {
		case 0:
			op.Type, op.F = Invoke, FAcquire
		case 1:
			op.Type, op.F, op.Value = OK, FAcquire, &Value{Token: int64(i), Owner: fmt.Sprintf("p%d-a52340028d65cecf", i%10)}
		case 2:
			op.Type, op.F, op.Value = Invoke, FCS, &Value{Owner: fmt.Sprintf("p%d-a52340028d65cecf", i%10)}
		case 3:
			read, wrote = wrote, wrote+1
			op.Type, op.F, op.Value = OK, FCS, &Value{Read: &read, Wrote: &wrote}
		case 4:
			op.Type, op.F, op.Value = Invoke, FRelease, &Value{Owner: fmt.Sprintf("p%d-a52340028d65cecf", i%10), Token: int64(i)}
		default:
			op.Type, op.F, op.Value = OK, FRelease, &Value{Released: &released}
		}
		if err := enc.Encode(op); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}

// BenchmarkDecode decodes a harness-shaped history of 10^5 ops, as check
// analyze reads history.jsonl.
func BenchmarkDecode(b *testing.B) {
	data := benchHistoryJSONL(100_000)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		h, err := Decode(bytes.NewReader(data))
		if err != nil || len(h) != 100_000 {
			b.Fatalf("decoded %d ops: %v", len(h), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100_000, "ns/line")
}

// TestRecorderView checks that a view shares the recorded ops and that
// later ops do not show in it.
func TestRecorderView(t *testing.T) {
	r := NewRecorder(nil)
	r.Record(Op{Process: 0, Type: Invoke, F: FAcquire, Key: "k"})
	v := r.View()
	r.Record(Op{Process: 0, Type: OK, F: FAcquire, Key: "k"})
	if len(v) != 1 || cap(v) != 1 || v[0].F != FAcquire {
		t.Fatalf("view %v (cap %d), want the one op recorded before it", v, cap(v))
	}
	w := r.View()
	if len(w) != 2 || w[1].Type != OK {
		t.Fatalf("second view %v, want both ops", w)
	}
	if again := r.View(); &again[0] != &w[0] || len(again) != 2 {
		t.Errorf("a view asked for again with nothing recorded since is a copy")
	}
}

// TestRecorderBlocks records across several blocks, with a view between,
// and checks that every way of reading gives back each op as recorded:
// its index, strings, process (a wide one too) and value.
func TestRecorderBlocks(t *testing.T) {
	defer func(n int) { blockOps = n }(blockOps)
	blockOps = 3
	r := NewRecorder(nil)
	var want History
	record := func(k int) {
		for range k {
			i := len(want)
			op := Op{Process: i % 4, Type: []Type{Invoke, OK, Fail, Info}[i%4], F: []string{FAcquire, FRelease, FCS}[i%3],
				Key: fmt.Sprintf("k%d", i%2), Value: &Value{Token: int64(i)}}
			switch i {
			case 4:
				op.Error = "timeout"
			case 5:
				op.Process = math.MaxInt32 + 5 // wraps to no marker: only the range check finds it
			case 6:
				op.Process = math.MinInt32
			case 7:
				op.Process = NemesisProcess
				op.Value = nil
			}
			got := r.Record(op)
			op.Index, op.Time = i, got.Time
			if got.Index != i {
				t.Fatalf("op %d recorded as %d", i, got.Index)
			}
			want = append(want, op)
		}
	}
	same := func(what string, got, want History) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d ops, want %d", what, len(got), len(want))
		}
		for i := range want {
			if g, w := got[i], want[i]; g.Index != w.Index || g.Time != w.Time || g.Process != w.Process || g.Type != w.Type ||
				g.F != w.F || g.Key != w.Key || g.Error != w.Error || g.Value != w.Value {
				t.Errorf("%s: op %d = %+v, want %+v", what, i, g, w)
			}
		}
	}
	record(8)
	same("History", r.History(), want)
	same("Since(5)", r.Since(5), want[5:])
	v := r.View()
	same("View", v, want)
	if cap(v) != len(v) {
		t.Errorf("view's capacity %d, want %d", cap(v), len(v))
	}
	record(7)
	same("View before", v, want[:8])
	same("Since(6) across the view", r.Since(6), want[6:])
	var each History
	r.Each(func(op Op) bool { each = append(each, op); return true })
	same("Each", each, want)
	n := 0
	r.Each(func(Op) bool { n++; return n < 4 })
	if n != 4 {
		t.Errorf("Each went on after false: %d calls", n)
	}
	same("View again", r.View(), want)
	same("History after views", r.History(), want)
}

// TestValueExtra checks the split of Value: Ext reads the fields few ops
// carry (all zero on a value without them, or no value), Mut adds them,
// and the JSON form is one object, as if the fields were Value's own.
func TestValueExtra(t *testing.T) {
	var none *Value
	if x := none.Ext(); x.Detail != "" || x.Hit != nil {
		t.Errorf("nil value's Ext = %+v", x)
	}
	plain := &Value{Token: 3, Owner: "o"}
	if x := plain.Ext(); x.Detail != "" || plain.Extra != nil {
		t.Errorf("plain value's Ext = %+v, Extra %v", x, plain.Extra)
	}
	plain.Mut().Detail = "d"
	plain.Mut().Targets = []int{1}
	if x := plain.Ext(); x.Detail != "d" || len(x.Targets) != 1 {
		t.Errorf("after Mut, Ext = %+v", x)
	}
	x := plain.Ext()
	x.Detail = "changed"
	if plain.Ext().Detail != "d" {
		t.Error("a change to Ext's copy reached the value")
	}
	for _, c := range []struct {
		v     Value
		json  string
		extra bool
	}{
		{Value{Token: 3, Owner: "o"}, `{"token":3,"owner":"o"}`, false},
		{Value{Token: 3, Extra: &Extra{Detail: "d", Targets: []int{1, 2}}, Backend: 7},
			`{"token":3,"targets":[1,2],"detail":"d","backend":7}`, true},
		{Value{Extra: &Extra{Rejected: "write", MaxToken: 9}}, `{"rejected":"write","max_token":9}`, true},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.json {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", c.v, b, err, c.json)
		}
		var back Value
		if err := json.Unmarshal([]byte(c.json), &back); err != nil || (back.Extra != nil) != c.extra || !reflect.DeepEqual(back, c.v) {
			t.Errorf("Unmarshal(%s) = %+v (extra %+v), %v", c.json, back, back.Extra, err)
		}
	}
}

// BenchmarkRecorderLive records a run's shape of ops (an acquire, a
// critical section and a release of ten processes, one key, each op's
// value its own) and reports what the recorder holds live per op while
// the workload runs ("live-B/op": its records and their values), and
// after View made the History the checkers read ("view-B/op"), against
// issue 26's budget for a long run (docs/performance.md).
func BenchmarkRecorderLive(b *testing.B) {
	const n = 1 << 18
	live := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for range b.N {
		base := live()
		r := NewRecorder(nil)
		for i := range n / 6 {
			p, tok := i%10, int64(i)
			owner := fmt.Sprintf("p%d-%016x", p, i)
			r.Record(Op{Process: p, Type: Invoke, F: FAcquire, Key: "k0"})
			r.Record(Op{Process: p, Type: OK, F: FAcquire, Key: "k0", Value: &Value{Token: tok, Owner: owner}})
			r.Record(Op{Process: p, Type: Invoke, F: FCS, Key: "k0", Value: &Value{Token: tok, Owner: owner}})
			read, wrote := tok, tok+1
			r.Record(Op{Process: p, Type: OK, F: FCS, Key: "k0", Value: &Value{Read: &read, Wrote: &wrote}})
			r.Record(Op{Process: p, Type: Invoke, F: FRelease, Key: "k0", Value: &Value{Token: tok, Owner: owner}})
			r.Record(Op{Process: p, Type: OK, F: FRelease, Key: "k0", Value: &Value{Released: Bool(true)}})
		}
		recorded := live()
		h := r.View()
		viewed := live()
		b.ReportMetric(float64(recorded-base)/float64(len(h)), "live-B/op")
		b.ReportMetric(float64(viewed-base)/float64(len(h)), "view-B/op")
		runtime.KeepAlive(r)
		runtime.KeepAlive(h)
	}
}
