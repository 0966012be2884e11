package history

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// goldenHistories returns the paths of the committed real and hand-made
// histories (the checkers' testdata).
func goldenHistories(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "checker", "testdata", "histories", "*", "history.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden histories: %v", err)
	}
	return paths
}

// writeWithSidecar writes h as history.jsonl in a new directory, as the
// recorder writes it, with its sidecar, and returns the JSON file's path.
func writeWithSidecar(t *testing.T, h History) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSidecar(path, h); err != nil {
		t.Fatal(err)
	}
	return path
}

// decodeJSONFile decodes the file at path as JSON only.
func decodeJSONFile(t *testing.T, path string) History {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSidecarReadsAsTheJSON checks, on every golden history, that the
// sidecar gives exactly the ops that decoding the JSON file gives, and
// that ReadFile uses it.
func TestSidecarReadsAsTheJSON(t *testing.T) {
	for _, golden := range goldenHistories(t) {
		t.Run(filepath.Base(filepath.Dir(golden)), func(t *testing.T) {
			h, err := ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			sidecarMatchesJSON(t, h, "")
		})
	}
}

// TestSidecarChunks checks a history of several chunks (decoded in
// parallel) against its JSON, and that a chunk count or length that does
// not add up is refused.
func TestSidecarChunks(t *testing.T) {
	h, err := Decode(bytes.NewReader(benchHistoryJSONL(2*sidecarChunk + 5)))
	if err != nil {
		t.Fatal(err)
	}
	// Chunks with a short last one, and whole chunks only.
	for _, n := range []int{len(h), 2 * sidecarChunk} {
		sidecarMatchesJSON(t, h[:n], fmt.Sprintf("%d ops: ", n))
	}
	var buf bytes.Buffer
	if err := encodeSidecar(&buf, h[:sidecarChunk+1], 0, 0); err != nil {
		t.Fatal(err)
	}
	_, _, body, err := sidecarHeader(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSidecar(body); err != nil {
		t.Fatalf("two chunks: %v", err)
	}
	// The chunk table follows the strings; find it by re-encoding the
	// count and the first length, and move a byte from one to the other.
	r := &sidecarReader{b: body}
	r.u()
	for range r.u() {
		r.bytes(r.u())
	}
	table := len(body) - len(r.b)
	if body[table] != 2 {
		t.Fatalf("chunk count %d, want 2", body[table])
	}
	for _, bad := range []func([]byte){
		func(b []byte) { b[table] = 1 },
		func(b []byte) { b[table] = 3 },
		func(b []byte) { b[table+1]-- },
		func(b []byte) { b[table+1]++ },
	} {
		b := bytes.Clone(body)
		bad(b)
		if _, err := decodeSidecar(b); err == nil {
			t.Errorf("a damaged chunk table was accepted")
		}
	}
}

// TestSidecarEdgeOps checks ops at the edges of the binary form against
// what their JSON lines decode to: the sidecar must hold what the file
// says, not what the recorder had in memory where the two differ.
func TestSidecarEdgeOps(t *testing.T) {
	zero, no := Int64(0), Bool(false)
	cases := []struct {
		name   string
		v      *Value
		binary bool // the op is held in binary form
		op     func(*Op)
	}{
		{"no value", nil, true, nil},
		{"empty value", &Value{}, true, nil},
		{"zero read and wrote, released false", &Value{Read: zero, Wrote: zero, Released: no}, true, nil},
		{"released true", &Value{Released: Bool(true), Token: -3}, true, nil},
		{"every binary field", &Value{
			Token:    7,
			Owner:    "p1-x",
			Read:     Int64(-4),
			Wrote:    Int64(5),
			Released: no,
			Backend:  99,
			Extra:    &Extra{Nodes: []string{"lock0", "lock2"}, Release: &Release{How: ReleaseExpired, At: time.Second, Lease: "694d", Probe: true, Lag: time.Millisecond}},
		}, true, nil},
		{"a release with how only", &Value{Extra: &Extra{Release: &Release{How: ReleaseDeleted}}}, true, nil},
		{"nodes last", &Value{Extra: &Extra{Nodes: []string{"lock0", "lock1"}}}, true, nil}, // the list ends the chunk
		{"empty nodes", &Value{Extra: &Extra{Nodes: []string{}}}, false, nil},
		{"bad UTF-8 owner", &Value{Owner: "p\xff"}, false, nil},
		{"bad UTF-8 node", &Value{Extra: &Extra{Nodes: []string{"n\xfe"}}}, false, nil},
		{"bad UTF-8 how", &Value{Extra: &Extra{Release: &Release{How: "x\xff"}}}, false, nil},
		{"bad UTF-8 lease", &Value{Extra: &Extra{Release: &Release{How: "x", Lease: "\xff"}}}, false, nil},
		{"server time", &Value{Extra: &Extra{Release: &Release{How: ReleaseExpired, ServerTime: time.Unix(5, 6)}}}, false, nil},
		{"detail", &Value{Extra: &Extra{Detail: "SIGSTOP"}}, false, nil},
		{"targets", &Value{Extra: &Extra{Targets: []int{1}}}, false, nil},
		{"empty targets", &Value{Extra: &Extra{Targets: []int{}}}, false, nil},
		{"hit", &Value{Extra: &Extra{Hit: &Hit{}}}, false, nil},
		{"rejected", &Value{Extra: &Extra{Rejected: "write", MaxToken: 3}}, false, nil},
		{"max token", &Value{Extra: &Extra{MaxToken: 3}}, false, nil},
		{"deleted owner", &Value{Extra: &Extra{DeletedOwner: "p2"}}, false, nil},
		{"commands", &Value{Extra: &Extra{Nodes: []string{"lock0"}, Commands: []Command{{Node: "lock0", Word: "kill", Line: "docker kill lock0", Took: time.Second}}}}, false, nil},
		{"empty commands", &Value{Extra: &Extra{Commands: []Command{}}}, false, nil},
		{"duration", &Value{Extra: &Extra{Duration: time.Second}}, false, nil},
		{"escaped strings", &Value{Owner: "a\"b\\c<d>&\n"}, true, func(op *Op) { op.Error = "x\ty" }},
		{"bad UTF-8 error", nil, false, func(op *Op) { op.Error = "\xff" }},
		{"bad UTF-8 key", nil, false, func(op *Op) { op.Key = "k\xff" }},
		{"the nemesis's process", &Value{Token: 1}, true, func(op *Op) { op.Process = NemesisProcess }},
		{"negative index", nil, false, func(op *Op) { op.Index = -1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := Op{Index: 0, Time: 12345, Process: 3, Type: OK, F: FAcquire, Key: "k0", Value: c.v}
			if c.op != nil {
				c.op(&op)
			}
			if _, binary := binaryFields(&op); binary != c.binary {
				t.Errorf("binary form = %v, want %v", binary, c.binary)
			}
			sidecarMatchesJSON(t, History{op}, "")
		})
	}
}

// TestSidecarRefusesWhatJSONRefuses checks that an op the JSON reader
// refuses (a negative time, an unknown type, no name, a process below the
// nemesis's) makes the sidecar unused, so that ReadFile reports the
// file's line.
func TestSidecarRefusesWhatJSONRefuses(t *testing.T) {
	for _, bad := range []func(*Op){
		func(op *Op) { op.Time = -5 },
		func(op *Op) { op.Type = "done" },
		func(op *Op) { op.F = "" },
		func(op *Op) { op.Process = NemesisProcess - 1 },
	} {
		op := Op{Time: 1, Process: 0, Type: Invoke, F: FAcquire, Key: "k0"}
		bad(&op)
		path := writeWithSidecar(t, History{{Time: 0, Process: 1, Type: Invoke, F: FAcquire}, op})
		if _, ok := readSidecar(path); ok {
			t.Errorf("the sidecar of %s was used", op)
		}
		if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ReadFile of %s: %v, want an error on line 2", op, err)
		}
	}
}

// TestSidecarFields fails when Op, Value, Extra or Release gains or loses a
// field: the binary form must then learn it (binaryFields, value, op), or
// refuse ops that have it.
func TestSidecarFields(t *testing.T) {
	names := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			out = append(out, ty.Field(i).Name)
		}
		return out
	}
	for _, c := range []struct {
		v    any
		want []string
	}{
		{Op{}, []string{"Index", "Time", "Process", "Type", "F", "Key", "Value", "Error"}},
		{Value{}, []string{"Token", "Owner", "Read", "Wrote", "Released", "Extra", "Backend"}},
		{Extra{}, []string{"Rejected", "MaxToken", "DeletedOwner", "Targets", "Nodes", "Duration", "Detail", "Hit", "Release", "Unheard", "Commands"}},
		{Release{}, []string{"How", "ServerTime", "At", "Lease", "Probe", "Lag"}},
	} {
		if got := names(c.v); !slices.Equal(got, c.want) {
			t.Errorf("%T has fields %v; the sidecar knows %v", c.v, got, c.want)
		}
	}
}

// TestSidecarIgnoredWhenStale checks that a sidecar is not used when the
// JSON file changed after it was written (the same size, one byte), when
// it is damaged or cut short, of another version, or missing: then the
// JSON file is what ReadFile reads.
func TestSidecarIgnoredWhenStale(t *testing.T) {
	h, err := ReadFile(goldenHistories(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	edits := []struct {
		name string
		edit func(t *testing.T, jsonPath, binPath string)
	}{
		{"the JSON edited in place", func(t *testing.T, jsonPath, _ string) {
			b, _ := os.ReadFile(jsonPath)
			i := bytes.Index(b, []byte(`"time":`)) + len(`"time":`)
			b[i] = '0' + (b[i]-'0'+1)%10 // the first op's time, one digit on
			if err := os.WriteFile(jsonPath, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"the JSON appended to", func(t *testing.T, jsonPath, _ string) {
			f, _ := os.OpenFile(jsonPath, os.O_APPEND|os.O_WRONLY, 0)
			defer f.Close()
			_, _ = f.WriteString("\n")
		}},
		{"a byte of the sidecar flipped", func(t *testing.T, _, binPath string) {
			b, _ := os.ReadFile(binPath)
			b[len(b)-3] ^= 0x40
			_ = os.WriteFile(binPath, b, 0o644)
		}},
		{"the sidecar cut short", func(t *testing.T, _, binPath string) {
			b, _ := os.ReadFile(binPath)
			_ = os.WriteFile(binPath, b[:len(b)/2], 0o644)
		}},
		{"another version", func(t *testing.T, _, binPath string) {
			b, _ := os.ReadFile(binPath)
			b[len(sidecarMagic)]++
			_ = os.WriteFile(binPath, b, 0o644)
		}},
		{"no sidecar", func(t *testing.T, _, binPath string) { _ = os.Remove(binPath) }},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			path := writeWithSidecar(t, h)
			e.edit(t, path, filepath.Join(filepath.Dir(path), SidecarName))
			if _, ok := readSidecar(path); ok {
				t.Fatal("the sidecar was used")
			}
			got, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := decodeJSONFile(t, path); !reflect.DeepEqual(got, want) {
				t.Fatalf("ReadFile does not read the JSON:\n%s", firstDiff(got, want))
			}
		})
	}
}

// TestSidecarWriteFails checks that a sidecar that cannot be written is an
// error and leaves no file behind.
func TestSidecarWriteFails(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSidecar(filepath.Join(dir, "history.jsonl"), nil); err == nil {
		t.Fatal("a sidecar of a missing file was written")
	}
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, SidecarName), 0o755); err != nil { // the name is taken by a directory
		t.Fatal(err)
	}
	if err := WriteSidecar(filepath.Join(dir, "history.jsonl"), nil); err == nil {
		t.Fatal("no error over a directory")
	}
	if _, err := os.Stat(filepath.Join(dir, SidecarName+".tmp")); !os.IsNotExist(err) {
		t.Fatalf("the temporary file is left: %v", err)
	}
}

// TestSidecarEmpty checks an empty history's sidecar (no chunk).
func TestSidecarEmpty(t *testing.T) {
	path := writeWithSidecar(t, History{})
	got, ok := readSidecar(path)
	if !ok || len(got) != 0 {
		t.Fatalf("empty history: %d ops, used %v", len(got), ok)
	}
}

// TestSidecarTruncated checks that a header or body cut anywhere is
// refused, never read short and never a panic: the body's own CRC guards
// a file, so this is what stands behind it.
func TestSidecarTruncated(t *testing.T) {
	h, err := ReadFile(goldenHistories(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := encodeSidecar(&buf, h, 7, 9); err != nil {
		t.Fatal(err)
	}
	whole := buf.Bytes()
	size, sum, body, err := sidecarHeader(whole)
	if err != nil || size != 7 || sum != 9 {
		t.Fatalf("header: %d %d %v", size, sum, err)
	}
	for i := range len(whole) - len(body) {
		if _, _, _, err := sidecarHeader(whole[:i]); err == nil {
			t.Fatalf("a header cut to %d bytes was read", i)
		}
	}
	for i := range body {
		if _, err := decodeSidecar(body[:i]); err == nil {
			t.Fatalf("a body cut to %d of %d bytes was read", i, len(body))
		}
	}
}

// TestSidecarStringNumbers checks that a string number past the table is
// an error, not a panic, and the last one is read.
func TestSidecarStringNumbers(t *testing.T) {
	for _, c := range []struct {
		id   uint64
		want string
		ok   bool
	}{{0, "", true}, {1, "a", true}, {2, "", false}, {1 << 40, "", false}} {
		r := &sidecarReader{b: binary.AppendUvarint(nil, c.id), strs: []string{"", "a"}}
		if got := r.str(); got != c.want || (r.err == nil) != c.ok {
			t.Errorf("string %d: %q, error %v", c.id, got, r.err)
		}
	}
	r := &sidecarReader{strs: []string{"", "a"}, err: errSidecar, b: binary.AppendUvarint(nil, 1)}
	if got := r.str(); got != "" {
		t.Errorf("a reader with an error read %q", got)
	}
}

// TestSidecarOpFields checks that an op naming a value field the format
// does not have, or a field of a release with no release, is refused.
func TestSidecarOpFields(t *testing.T) {
	op := func(fields uint64) []byte {
		b := binary.AppendUvarint(nil, 0) // index
		b = binary.AppendVarint(b, 1)     // time
		b = binary.AppendVarint(b, 0)     // process
		for _, id := range []uint64{1, 2, 0, 0} {
			b = binary.AppendUvarint(b, id) // type, f, key, error
		}
		return binary.AppendUvarint(b, fields)
	}
	strs := []string{"", string(OK), FAcquire}
	for _, c := range []struct {
		fields uint64
		ok     bool
	}{
		{0, true}, {vEmpty, true}, {vEmpty << 1, false}, {vEmpty | vToken, false}, {vTrue, false}, {vAt, false}, {vProbe, false},
	} {
		b := op(c.fields)
		if c.fields&vToken != 0 {
			b = binary.AppendVarint(b, 5)
		}
		r := &sidecarReader{b: b, strs: strs}
		if _, err := r.op(&arena{}); (err == nil) != c.ok {
			t.Errorf("fields %b: error %v, want ok %v", c.fields, err, c.ok)
		}
	}
}

// FuzzDecodeSidecar checks that no sidecar body, however damaged, makes
// the decoder panic or allocate without bound, and that one it accepts
// holds ops whose JSON decodes to the same ops.
func FuzzDecodeSidecar(f *testing.F) {
	for _, golden := range goldenHistories(f)[:4] {
		h, err := ReadFile(golden)
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		if err := encodeSidecar(&buf, h, 0, 0); err != nil {
			f.Fatal(err)
		}
		_, _, body, err := sidecarHeader(buf.Bytes())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 1, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		h, err := decodeSidecar(body)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, h); err != nil {
			t.Fatalf("accepted ops do not encode: %v", err)
		}
		if len(h) == 0 {
			return
		}
		back, err := Decode(&buf)
		if err != nil {
			return // a binary op JSON cannot hold (a huge index, say) is not this decoder's to refuse
		}
		if len(back) != len(h) {
			t.Fatalf("%d ops became %d", len(h), len(back))
		}
	})
}

// firstDiff describes the first op where a and b differ.
func firstDiff(a, b History) string {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return a[i].String() + "\n" + b[i].String()
		}
	}
	return "lengths differ"
}

// sidecarMatchesJSON writes h with its sidecar and checks that the sidecar
// is used and reads as the JSON file does; what prefixes the failures.
func sidecarMatchesJSON(t *testing.T, h History, what string) {
	t.Helper()
	path := writeWithSidecar(t, h)
	got, ok := readSidecar(path)
	if !ok {
		t.Fatalf("%sthe sidecar was not used", what)
	}
	if want := decodeJSONFile(t, path); !reflect.DeepEqual(got, want) {
		t.Fatalf("%ssidecar and JSON differ:\n%s", what, firstDiff(got, want))
	}
}
