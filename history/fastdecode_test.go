package history

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// sameAsJSON fails t when fastOp reads line other than encoding/json does:
// whatever it accepts, encoding/json must accept with the same op.
func sameAsJSON(t *testing.T, line []byte) (fast bool) {
	t.Helper()
	op, ok := fastOp(line, &arena{})
	if !ok {
		return false
	}
	want, err := decodeJSON(line)
	if err != nil {
		t.Fatalf("fastOp accepted %q, encoding/json refuses it: %v", line, err)
	}
	if !reflect.DeepEqual(op, want) {
		t.Fatalf("fastOp read %q as %+v, encoding/json as %+v", line, op, want)
	}
	return true
}

// realLines returns the lines of the committed real histories.
func realLines(t *testing.T) [][]byte {
	t.Helper()
	paths, err := filepath.Glob("../checker/testdata/histories/*/history.jsonl")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test histories: %v", err)
	}
	var out [][]byte
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, maxLine)
		for sc.Scan() {
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
				out = append(out, append([]byte(nil), l...))
			}
		}
		f.Close()
	}
	return out
}

// TestFastOpShapes checks that the lines a long run is made of take the
// fast path and read as encoding/json reads them.
func TestFastOpShapes(t *testing.T) {
	lines := bytes.Split(bytes.TrimSpace(benchHistoryJSONL(12)), []byte("\n"))
	lines = append(lines,
		[]byte(`{"index":14,"time":199008472,"process":-1,"type":"info","f":"server-release","key":"k0","value":{"owner":"p1-ff4ae39f6bb44fb8","nodes":["lock0","lock1"],"release":{"how":"deleted"}}}`),
		[]byte(`{"index":7,"time":0,"process":3,"type":"fail","f":"acquire","key":"k0","error":"timeout: i/o"}`),
		[]byte(`{"index":8,"time":5,"process":-1,"type":"ok","f":"release","value":{"released":false,"read":-0,"wrote":-12}}`),
		[]byte(`{"key":"k0","f":"cs","type":"invoke","process":2,"time":9,"index":123456789012345678}`),
	)
	for _, l := range lines {
		if !sameAsJSON(t, l) {
			t.Errorf("%s: not read by the fast path", l)
		}
	}
}

// TestFastOpRefuses checks lines the fast path must leave to encoding/json.
func TestFastOpRefuses(t *testing.T) {
	for _, l := range []string{
		``, `{}`, `{"index":1}x`, `{"index":1,}`, `{"index":1 ,"f":"a"}`, `{"index":1`, `{"index":`,
		`{"index":1,"index":2}`, `{"Index":1}`, `{"bogus":1}`, `{"index":1.5}`, `{"index":1e3}`, `{"index":01}`,
		`{"index":-}`, `{"index":1234567890123456789}`, `{"index":"1"}`, `{"f":"a\"b"}`, `{"f":"é"}`,
		"{\"f\":\"a\tb\"}", "{\"f\":\"a\x80\"}", "{\"f\":\"a\x7f\x80\"}", `{"value":{"released":tru`, `{"value":{"released":fals`, `{"f":"a`, `{"f":1}`, `{"f" :"a"}`, `{index:1}`, `{"index"`,
		`{"value":null}`, `{"value":{}}`, `{"value":{"token":1,"token":2}}`, `{"value":{"targets":[1]}}`,
		`{"value":{"token":1,}}`, `{"value":{"token":1`, `{"value":{"released":tru}}`, `{"value":{"released":1}}`,
		`{"value":{"nodes":[]}}`, `{"value":{"nodes":["a",]}}`, `{"value":{"nodes":["a"}}`, `{"value":{"nodes":"a"}}`,
		`{"value":{"nodes":["a"],"nodes":["b"]}}`, `{"value":{"release":{}}}`, `{"value":{"release":{"how":"x","at":1}}}`,
		`{"value":{"release":{"lease":"x"}}}`, `{"value":{"release":{"how":1}}}`, `{"value":{"release":"x"}}`,
		`{"value":{"owner":"a","owner":"b"}}`, `{"value":{"read":1,"read":2}}`, `{"value":{"wrote":1,"wrote":2}}`,
		`{"value":{"released":true,"released":false}}`, `{"value":{"release":{"how":"a"},"release":{"how":"b"}}}`,
		`{"value":{"token":1} }`, `{"value":{"token":1}`, `{"type":"ok","type":"ok"}`, `{"f":"a","f":"a"}`,
		`{"key":"a","key":"a"}`, `{"error":"a","error":"a"}`, `{"time":1,"time":1}`, `{"process":1,"process":1}`,
		`{"value":{"token":1},"value":{"token":1}}`, `{"index":1}}`, `{"index":1}{"index":2}`, `["index"]`,
	} {
		if _, ok := fastOp([]byte(l), &arena{}); ok {
			t.Errorf("fastOp accepted %q", l)
		}
	}
}

// TestFastOpAgrees reads every line of the committed histories, and many
// single-byte mutations of them, by both paths: whatever the fast path
// accepts, it reads as encoding/json does.
func TestFastOpAgrees(t *testing.T) {
	lines := realLines(t)
	fast := 0
	for _, l := range lines {
		if sameAsJSON(t, l) {
			fast++
		}
	}
	if fast < len(lines)/2 {
		t.Errorf("only %d of %d real lines took the fast path", fast, len(lines))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]":,-0123456789.etruflsaxnE\ ` + "\t\x01\xc3")
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		l := append([]byte(nil), lines[rng.IntN(len(lines))]...)
		i := rng.IntN(len(l))
		switch rng.IntN(3) {
		case 0:
			l[i] = alphabet[rng.IntN(len(alphabet))]
		case 1:
			l = append(l[:i], l[i+1:]...)
		default:
			l = append(l[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, l[i:]...)...)
		}
		sameAsJSON(t, l)
	}
}

// TestInternShares checks that repeated strings are shared, that the
// interner stops growing at its bound, and that a nil one allocates.
func TestInternShares(t *testing.T) {
	var in arena
	a, b := in.intern([]byte("k0")), in.intern([]byte("k0"))
	if a != "k0" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("intern gave %q and %q, not shared", a, b)
	}
	for i := range maxInterned + 10 {
		in.intern([]byte{byte(i), byte(i >> 8), 'x'})
	}
	if len(in.m) != maxInterned {
		t.Errorf("interner holds %d strings, want its bound %d", len(in.m), maxInterned)
	}
	var none *arena
	if s := none.intern([]byte("k0")); s != "k0" {
		t.Errorf("nil interner gave %q", s)
	}
	in = arena{}
	op, ok := fastOp([]byte(`{"index":1,"time":2,"process":0,"type":"ok","f":"acquire","key":"k0","value":{"nodes":["n1"],"release":{"how":"x"}}}`), &in)
	op2, _ := fastOp([]byte(`{"index":2,"time":2,"process":0,"type":"ok","f":"acquire","key":"k0","value":{"nodes":["n1"],"release":{"how":"x"}}}`), &in)
	if !ok || unsafe.StringData(op.F) != unsafe.StringData(op2.F) || unsafe.StringData(string(op.Type)) != unsafe.StringData(string(op2.Type)) ||
		unsafe.StringData(op.Value.Ext().Nodes[0]) != unsafe.StringData(op2.Value.Ext().Nodes[0]) ||
		unsafe.StringData(op.Value.Ext().Release.How) != unsafe.StringData(op2.Value.Ext().Release.How) {
		t.Errorf("f, type, nodes and how are not interned")
	}
}

// TestArenaSlabs checks that the values, numbers and booleans an arena
// hands out are distinct, keep what was put in them across slabs, and come
// from slabs (a nil arena allocates each).
func TestArenaSlabs(t *testing.T) {
	for _, in := range []*arena{{}, nil} {
		const n = 3*slabLen + 7
		vs := make([]*Value, n)
		ns := make([]*int64, n)
		bs := make([]*bool, n)
		for i := range n {
			vs[i] = in.value()
			if !reflect.DeepEqual(*vs[i], Value{}) {
				t.Fatalf("value %d is not zero: %+v", i, *vs[i])
			}
			vs[i].Token = int64(i)
			ns[i] = in.int64(int64(i))
			bs[i] = in.bool(i%2 == 0)
		}
		for i := range n {
			if vs[i].Token != int64(i) || *ns[i] != int64(i) || *bs[i] != (i%2 == 0) {
				t.Fatalf("nil=%v: slot %d holds token %d, number %d, bool %v", in == nil, i, vs[i].Token, *ns[i], *bs[i])
			}
		}
		// Consecutive values of one slab are neighbours in memory; a nil
		// arena's are not (each its own allocation of a larger size class).
		adjacent := uintptr(unsafe.Pointer(vs[1]))-uintptr(unsafe.Pointer(vs[0])) == unsafe.Sizeof(Value{})
		if adjacent != (in != nil) {
			t.Errorf("nil=%v: values adjacent = %v", in == nil, adjacent)
		}
	}
}

// TestReadFileSized checks that ReadFile sizes a history from its file:
// room for a line every lineBytes bytes, and none for an empty file.
func TestReadFileSized(t *testing.T) {
	dir := t.TempDir()
	// Padded lines: the file holds more than lineBytes a line, so the
	// size it gives is more than the ops need and shows in the capacity.
	data := bytes.ReplaceAll(benchHistoryJSONL(3000), []byte("\n"), []byte(strings.Repeat(" ", 200)+"\n"))
	path := filepath.Join(dir, "history.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := ReadFile(path)
	if err != nil || len(h) != 3000 {
		t.Fatalf("read %d ops: %v", len(h), err)
	}
	if want := len(data) / lineBytes; cap(h) != want {
		t.Errorf("capacity %d for %d ops of %d bytes, want %d", cap(h), len(h), len(data), want)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := ReadFile(empty); err != nil || h != nil {
		t.Errorf("empty file: %v (nil: %v), %v", h, h == nil, err)
	}
}
