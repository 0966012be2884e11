package history

import (
	"encoding/binary"
	"testing"
)

// The tests of this file pin lines changed since 7c82881 that gremlins'
// mutants of them (make mutation MUTATION_DIFF=7c82881) showed no other
// test pinned; each names the mutants it kills.

// TestOpenPairsClearPastTheSlice checks that clearing a process the slice
// has not grown to (the one just past its end, and the one after) changes
// nothing and does not index past the slice. Pairs clears only processes
// it has set, so it never does this; the guard is openPairs' own contract.
// Kills history.go:136:10 (`p+1 < len(o.dense)` → `<=`) and 136:7
// (`p+1` → `p-1`).
func TestOpenPairsClearPastTheSlice(t *testing.T) {
	o := newOpenPairs()
	o.set(1, 4) // the slice holds processes -1 to 1
	for _, p := range []int{2, 3} {
		o.clear(p)
		if _, ok := o.get(p); ok {
			t.Errorf("process %d open after clear", p)
		}
	}
	if j, ok := o.get(1); !ok || j != 4 {
		t.Errorf("get(1) = %d, %v; want 4, true", j, ok)
	}
}

// TestSidecarOpCut checks that a binary op cut anywhere, even between two
// of its varints (where the bytes left are simply used up), is refused:
// reading a varint from no bytes is an error, not a 0. The body's chunk
// lengths and CRC catch a cut sidecar before its ops are read
// (TestSidecarTruncated), so this reads the op directly. Kills
// sidecar.go:385:7 (`k <= 0` → `k < 0`).
func TestSidecarOpCut(t *testing.T) {
	b := binary.AppendUvarint(nil, 3) // index
	b = binary.AppendVarint(b, 1000)  // time
	b = binary.AppendVarint(b, 2)     // process
	for _, id := range []uint64{1, 2, 0, 0} {
		b = binary.AppendUvarint(b, id) // type, f, key, error
	}
	b = binary.AppendUvarint(b, vToken|vBackend)
	b = binary.AppendVarint(b, 5)  // token
	b = binary.AppendVarint(b, 11) // backend
	strs := []string{"", string(OK), FAcquire}
	r := &sidecarReader{b: b, strs: strs}
	op, err := r.op(&arena{})
	if err != nil || op.Index != 3 || op.Value == nil || op.Value.Token != 5 || op.Value.Backend != 11 || len(r.b) != 0 {
		t.Fatalf("the whole op: %+v, %v, %d bytes left", op, err, len(r.b))
	}
	for i := range b {
		r := &sidecarReader{b: b[:i], strs: strs}
		if op, err := r.op(&arena{}); err == nil {
			t.Errorf("the op cut to %d of %d bytes was read: %+v", i, len(b), op)
		}
	}
}

// TestSidecarLargestIndex checks that an op numbered 1<<62, the largest
// index the binary form holds, is read from the sidecar as the JSON gives
// it. Kills sidecar.go:547:27 (`index > 1<<62` → `>=`: the sidecar was
// refused and the JSON decoded instead).
func TestSidecarLargestIndex(t *testing.T) {
	op := Op{Index: 1 << 62, Time: 12345, Process: 3, Type: OK, F: FAcquire, Key: "k0", Value: &Value{Token: 2}}
	if _, binary := binaryFields(&op); !binary {
		t.Fatal("not held in binary form")
	}
	sidecarMatchesJSON(t, History{op}, "")
}
