package history

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"
)

// A sidecar is a compact binary copy of a history.jsonl, written beside it
// (history.bin) by the run that recorded it, so that reading a long run
// back (check analyze, check serve, a re-check) does not parse hundreds of
// megabytes of JSON. history.jsonl stays the record users read and edit:
// the sidecar names the size and CRC-32C of the JSON Lines file it was
// made with, and ReadFile uses it only while the file still has them. A
// sidecar that is missing, stale, damaged or of another version is
// ignored, and the JSON is decoded as before.
//
// The layout, integers as unsigned (u) or zig-zag (s) varints:
//
//	"LCHB" version(1 byte) u:jsonl-size crc32c(4 bytes, little-endian)
//	crc32c of the body (4 bytes), then the body:
//	u:ops u:strings, each u:length and its bytes (string 0 is "")
//	u:chunks, each u:length in bytes of its ops (sidecarChunk ops a
//	chunk, the last one fewer), then the ops:
//	per op: a byte, opJSON or opBinary;
//	  opJSON: u:length and the op's JSON line, decoded as the file's is;
//	  opBinary: u:index s:time s:process u:type u:f u:key u:error
//	    (string numbers), u:value-fields (a bit per field below, 0 for
//	    no value) and each field present, in the bits' order.
//
// The writer puts an op in binary form only when decoding its JSON line
// gives back exactly the op it holds (the fields below, strings valid
// UTF-8, no server wall-clock time); any other op is stored as its line.

// SidecarName is the sidecar's file name, beside history.jsonl.
const SidecarName = "history.bin"

// sidecarChunk is how many ops a chunk of the sidecar holds: the reader
// decodes chunks in parallel, each from its own offset.
const sidecarChunk = 1 << 16

const (
	sidecarMagic   = "LCHB"
	sidecarVersion = 1
	opJSON         = 0
	opBinary       = 1
)

// The value fields of a binary op, one bit each, in the order they follow.
const (
	vToken = 1 << iota
	vOwner
	vRead
	vWrote
	vReleased // Released is set; vTrue says to what
	vTrue
	vNodes
	vRelease // Release is set, with how; the next four are its other fields
	vAt
	vLease
	vProbe
	vLag
	vBackend
	vEmpty // a value with no field set ("value":{})
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileSum returns the size and CRC-32C of the file at path.
func fileSum(path string) (int64, uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	return n, h.Sum32(), err
}

// WriteSidecar writes the sidecar of the JSON Lines history at path, which
// must be what Encode or a Recorder wrote of h (the run's recorder, with
// no write error). It writes to a temporary name and renames, so a reader
// never sees half a sidecar.
func WriteSidecar(path string, h History) error {
	size, sum, err := fileSum(path)
	if err != nil {
		return fmt.Errorf("sidecar: %w", err)
	}
	out := filepath.Join(filepath.Dir(path), SidecarName)
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("sidecar: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = encodeSidecar(w, h, size, sum)
	if err == nil {
		err = w.Flush()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("sidecar: %w", err)
	}
	return nil
}

// sidecarWriter accumulates the string table and the ops' bytes.
type sidecarWriter struct {
	strs []string
	ids  map[string]uint64
	ops  []byte
}

func (w *sidecarWriter) u(n uint64) { w.ops = binary.AppendUvarint(w.ops, n) }
func (w *sidecarWriter) s(n int64)  { w.ops = binary.AppendVarint(w.ops, n) }

// str appends the number of s in the string table.
func (w *sidecarWriter) str(s string) {
	id, ok := w.ids[s]
	if !ok {
		id = uint64(len(w.strs))
		w.strs = append(w.strs, s)
		w.ids[s] = id
	}
	w.u(id)
}

// encodeSidecar writes h's sidecar, for a JSON file of size bytes and
// CRC-32C sum, to out.
func encodeSidecar(out io.Writer, h History, size int64, sum uint32) error {
	w := &sidecarWriter{strs: []string{""}, ids: map[string]uint64{"": 0}}
	var chunks []uint64 // each chunk's length in bytes
	for i := range h {
		if i%sidecarChunk == 0 && i > 0 {
			chunks = append(chunks, uint64(len(w.ops))-sum64(chunks))
		}
		op := &h[i]
		fields, ok := binaryFields(op)
		if !ok {
			b, err := json.Marshal(op)
			if err != nil {
				return err
			}
			w.ops = append(w.ops, opJSON)
			w.u(uint64(len(b)))
			w.ops = append(w.ops, b...)
			continue
		}
		w.ops = append(w.ops, opBinary)
		w.u(uint64(op.Index))
		w.s(int64(op.Time))
		w.s(int64(op.Process))
		w.str(string(op.Type))
		w.str(op.F)
		w.str(op.Key)
		w.str(op.Error)
		w.u(fields)
		w.value(op.Value, fields)
	}
	body := binary.AppendUvarint(nil, uint64(len(h)))
	body = binary.AppendUvarint(body, uint64(len(w.strs)))
	for _, s := range w.strs {
		body = binary.AppendUvarint(body, uint64(len(s)))
		body = append(body, s...)
	}
	if len(h) > 0 {
		chunks = append(chunks, uint64(len(w.ops))-sum64(chunks))
	}
	body = binary.AppendUvarint(body, uint64(len(chunks)))
	for _, n := range chunks {
		body = binary.AppendUvarint(body, n)
	}
	body = append(body, w.ops...)
	head := []byte(sidecarMagic)
	head = append(head, sidecarVersion)
	head = binary.AppendUvarint(head, uint64(size))
	head = binary.LittleEndian.AppendUint32(head, sum)
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(body, castagnoli))
	if _, err := out.Write(head); err != nil {
		return err
	}
	_, err := out.Write(body)
	return err
}

// value appends v's fields that fields names.
func (w *sidecarWriter) value(v *Value, fields uint64) {
	if fields&vToken != 0 {
		w.s(v.Token)
	}
	if fields&vOwner != 0 {
		w.str(v.Owner)
	}
	if fields&vRead != 0 {
		w.s(*v.Read)
	}
	if fields&vWrote != 0 {
		w.s(*v.Wrote)
	}
	x := v.Ext()
	if fields&vNodes != 0 {
		w.u(uint64(len(x.Nodes)))
		for _, n := range x.Nodes {
			w.str(n)
		}
	}
	if fields&vRelease != 0 {
		w.str(x.Release.How)
	}
	if fields&vAt != 0 {
		w.s(int64(x.Release.At))
	}
	if fields&vLease != 0 {
		w.str(x.Release.Lease)
	}
	if fields&vLag != 0 {
		w.s(int64(x.Release.Lag))
	}
	if fields&vBackend != 0 {
		w.s(v.Backend)
	}
}

// binaryFields returns the value-field bits of op, and whether the binary
// form holds op exactly: every string valid UTF-8 (JSON would replace a
// bad byte), and only the fields a binary op has. A value whose fields
// are all zero is written by JSON as {} and read back as an empty value:
// vEmpty says so.
func binaryFields(op *Op) (uint64, bool) {
	if op.Index < 0 {
		return 0, false
	}
	for _, s := range []string{string(op.Type), op.F, op.Key, op.Error} {
		if !utf8.ValidString(s) {
			return 0, false
		}
	}
	v := op.Value
	if v == nil {
		return 0, true
	}
	x := v.Ext()
	if x.Rejected != "" || x.MaxToken != 0 || x.DeletedOwner != "" || x.Targets != nil || x.Duration != 0 || x.Detail != "" || x.Hit != nil || x.Unheard ||
		x.Commands != nil {
		return 0, false
	}
	var f uint64
	if v.Token != 0 {
		f |= vToken
	}
	if v.Owner != "" {
		if !utf8.ValidString(v.Owner) {
			return 0, false
		}
		f |= vOwner
	}
	if v.Read != nil {
		f |= vRead
	}
	if v.Wrote != nil {
		f |= vWrote
	}
	if v.Released != nil {
		f |= vReleased
		if *v.Released {
			f |= vTrue
		}
	}
	if x.Nodes != nil {
		// JSON writes an empty list as [] and reads it back as an empty,
		// non-nil slice; omitempty leaves it out, and it reads back nil.
		if len(x.Nodes) == 0 {
			return 0, false
		}
		for _, n := range x.Nodes {
			if !utf8.ValidString(n) {
				return 0, false
			}
		}
		f |= vNodes
	}
	if r := x.Release; r != nil {
		if !r.ServerTime.IsZero() || !utf8.ValidString(r.How) || !utf8.ValidString(r.Lease) {
			return 0, false
		}
		f |= vRelease
		if r.At != 0 {
			f |= vAt
		}
		if r.Lease != "" {
			f |= vLease
		}
		if r.Probe {
			f |= vProbe
		}
		if r.Lag != 0 {
			f |= vLag
		}
	}
	if v.Backend != 0 {
		f |= vBackend
	}
	if f == 0 {
		f = vEmpty
	}
	return f, true
}

// errSidecar says a sidecar does not parse; the reader then decodes the
// JSON.
var errSidecar = errors.New("malformed sidecar")

// readSidecar returns the history in the sidecar beside the JSON Lines
// file at path when there is one and it was made from the file as it is
// now; ok is false otherwise (no sidecar, a stale or damaged one).
func readSidecar(path string) (h History, ok bool) {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(path), SidecarName))
	if err != nil {
		return nil, false
	}
	size, sum, body, err := sidecarHeader(b)
	if err != nil {
		return nil, false
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() != size {
		return nil, false
	}
	if n, s, err := fileSum(path); err != nil || n != size || s != sum {
		return nil, false
	}
	h, err = decodeSidecar(body)
	if err != nil {
		return nil, false
	}
	return h, true
}

// sidecarHeader splits a sidecar into the JSON file's size and CRC it
// names and the rest.
func sidecarHeader(b []byte) (int64, uint32, []byte, error) {
	if len(b) < len(sidecarMagic)+1 || string(b[:len(sidecarMagic)]) != sidecarMagic || b[len(sidecarMagic)] != sidecarVersion {
		return 0, 0, nil, errSidecar
	}
	r := sidecarReader{b: b[len(sidecarMagic)+1:]}
	size := r.u()
	if r.err != nil || len(r.b) < 8 || size > 1<<62 {
		return 0, 0, nil, errSidecar
	}
	sum := binary.LittleEndian.Uint32(r.b)
	body := r.b[8:]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(r.b[4:]) {
		return 0, 0, nil, errSidecar
	}
	return int64(size), sum, body, nil
}

// sidecarReader reads varints and strings from b; the first error sticks.
type sidecarReader struct {
	b    []byte
	strs []string
	err  error
}

func (r *sidecarReader) u() uint64 { return varint(r, binary.Uvarint) }
func (r *sidecarReader) s() int64  { return varint(r, binary.Varint) }

// varint reads one varint with read (binary.Uvarint or binary.Varint).
func varint[T uint64 | int64](r *sidecarReader, read func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	n, k := read(r.b)
	if k <= 0 {
		r.err = errSidecar
		return 0
	}
	r.b = r.b[k:]
	return n
}

// str reads a string number.
func (r *sidecarReader) str() string {
	id := r.u()
	if r.err == nil && id >= uint64(len(r.strs)) {
		r.err = errSidecar
	}
	if r.err != nil {
		return ""
	}
	return r.strs[id]
}

// bytes reads n bytes.
func (r *sidecarReader) bytes(n uint64) []byte {
	if r.err == nil && n > uint64(len(r.b)) {
		r.err = errSidecar
	}
	if r.err != nil {
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// decodeSidecar decodes a sidecar's body (after its header). Every count
// is checked against the bytes left, so a damaged body is an error, never
// a panic or a huge allocation.
func decodeSidecar(b []byte) (History, error) {
	r := &sidecarReader{b: b}
	nops := r.u()
	nstrs := r.u()
	// Each op takes at least two bytes and each string one.
	if r.err != nil || nops > uint64(len(r.b))/2 || nstrs > uint64(len(r.b)) || nstrs == 0 {
		return nil, errSidecar
	}
	// The strings are cut from one allocation: a long run's hundreds of
	// thousands of owners are one copy, not one each.
	lens := make([]uint64, nstrs)
	total := uint64(0)
	for i := range lens {
		lens[i] = r.u()
		if r.err != nil || lens[i] > uint64(len(r.b)) {
			return nil, errSidecar
		}
		total += lens[i]
		r.bytes(lens[i])
	}
	if r.err != nil {
		return nil, errSidecar
	}
	// Again from the start of the strings, now into one string.
	r = &sidecarReader{b: b}
	r.u()
	r.u()
	all := make([]byte, 0, total)
	for range lens {
		all = append(all, r.bytes(r.u())...)
	}
	joined := string(all)
	r.strs = make([]string, nstrs)
	at := uint64(0)
	for i, n := range lens {
		r.strs[i] = joined[at : at+n]
		at += n
	}
	if r.strs[0] != "" {
		return nil, errSidecar
	}
	nchunks := r.u()
	if r.err != nil || nchunks != (nops+sidecarChunk-1)/sidecarChunk {
		return nil, errSidecar
	}
	lens = make([]uint64, nchunks)
	for i := range lens {
		lens[i] = r.u()
	}
	parts := make([][]byte, nchunks)
	for i, n := range lens {
		parts[i] = r.bytes(n)
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errSidecar
	}
	h := make(History, nops)
	errs := make([]error, nchunks)
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from := uint64(i) * sidecarChunk
			cr := &sidecarReader{b: part, strs: r.strs}
			errs[i] = cr.ops(h[from:min(nops, from+sidecarChunk)])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return h, nil
}

// ops decodes len(h) ops into h, and must use up r's bytes.
func (r *sidecarReader) ops(h History) error {
	var in arena
	for i := range h {
		if len(r.b) == 0 {
			return errSidecar
		}
		kind := r.b[0]
		r.b = r.b[1:]
		switch kind {
		case opJSON:
			line := r.bytes(r.u())
			if r.err != nil {
				return errSidecar
			}
			op, err := decodeOp(line, &in)
			if err != nil {
				return errSidecar
			}
			h[i] = op
		case opBinary:
			op, err := r.op(&in)
			if err != nil || checkDecoded(&op) != nil {
				// An op the JSON reader would refuse: it reads the file
				// and says which line.
				return errSidecar
			}
			h[i] = op
		default:
			return errSidecar
		}
	}
	if len(r.b) != 0 {
		return errSidecar
	}
	return nil
}

// op reads a binary op.
func (r *sidecarReader) op(in *arena) (Op, error) {
	var op Op
	index := r.u()
	op.Time = time.Duration(r.s())
	process := r.s()
	op.Type = Type(r.str())
	op.F = r.str()
	op.Key = r.str()
	op.Error = r.str()
	fields := r.u()
	if r.err != nil || index > 1<<62 || process != int64(int(process)) || fields >= vEmpty<<1 ||
		(fields&vEmpty != 0 && fields != vEmpty) || (fields&vTrue != 0 && fields&vReleased == 0) {
		return Op{}, errSidecar
	}
	op.Index, op.Process = int(index), int(process)
	if fields == 0 {
		return op, nil
	}
	v := in.value()
	op.Value = v
	if fields&vToken != 0 {
		v.Token = r.s()
	}
	if fields&vOwner != 0 {
		v.Owner = r.str()
	}
	if fields&vRead != 0 {
		v.Read = in.int64(r.s())
	}
	if fields&vWrote != 0 {
		v.Wrote = in.int64(r.s())
	}
	if fields&vReleased != 0 {
		v.Released = in.bool(fields&vTrue != 0)
	}
	if fields&vNodes != 0 {
		n := r.u()
		if r.err != nil || n == 0 || n > uint64(len(r.b)) {
			return Op{}, errSidecar
		}
		nodes := make([]string, n)
		for i := range nodes {
			nodes[i] = r.str()
		}
		v.Mut().Nodes = nodes
	}
	if fields&vRelease != 0 {
		rel := &Release{How: r.str()}
		if fields&vAt != 0 {
			rel.At = time.Duration(r.s())
		}
		if fields&vLease != 0 {
			rel.Lease = r.str()
		}
		rel.Probe = fields&vProbe != 0
		if fields&vLag != 0 {
			rel.Lag = time.Duration(r.s())
		}
		v.Mut().Release = rel
	} else if fields&(vAt|vLease|vProbe|vLag) != 0 {
		return Op{}, errSidecar
	}
	if fields&vBackend != 0 {
		v.Backend = r.s()
	}
	if r.err != nil {
		return Op{}, errSidecar
	}
	return op, nil
}

// sum64 returns the sum of ns.
func sum64(ns []uint64) uint64 {
	t := uint64(0)
	for _, n := range ns {
		t += n
	}
	return t
}
