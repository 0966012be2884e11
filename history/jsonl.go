package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// maxLine bounds one JSON line; a longer line is reported as malformed.
const maxLine = 1 << 20

// Decode reads a JSON Lines history from r. Blank lines are skipped. A line
// that is not a valid op gives an error naming its line number.
func Decode(r io.Reader) (History, error) {
	var h History
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		op, err := decodeOp(b)
		if err != nil {
			return h, fmt.Errorf("line %d: %w", line, err)
		}
		h = append(h, op)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return h, fmt.Errorf("line %d: longer than %d bytes", line+1, maxLine)
		}
		return h, fmt.Errorf("line %d: %w", line+1, err)
	}
	return h, nil
}

// decodeOp parses and validates one line.
func decodeOp(b []byte) (Op, error) {
	var op Op
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&op); err != nil {
		return Op{}, fmt.Errorf("malformed op: %w", err)
	}
	if dec.More() {
		return Op{}, errors.New("malformed op: trailing data after the JSON object")
	}
	if !op.Type.Valid() {
		return Op{}, fmt.Errorf("unknown type %q (want invoke, ok, fail or info)", op.Type)
	}
	if op.F == "" {
		return Op{}, errors.New(`missing "f"`)
	}
	if op.Time < 0 {
		return Op{}, fmt.Errorf("negative time %d", op.Time)
	}
	if op.Process < NemesisProcess {
		return Op{}, fmt.Errorf("invalid process %d", op.Process)
	}
	return op, nil
}

// ReadFile decodes the history stored at path.
func ReadFile(path string) (History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := Decode(f)
	if err != nil {
		return h, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// Encode writes h to w as JSON Lines.
func Encode(w io.Writer, h History) error {
	enc := json.NewEncoder(w)
	for _, op := range h {
		if err := enc.Encode(op); err != nil {
			return err
		}
	}
	return nil
}

// Recorder appends ops to a history as they happen, stamping each with the
// next index and the controller's monotonic time since the recorder started.
// Each op is written to the sink as one line at once, so a crashed run still
// leaves a readable history. Recorder is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	sink  io.Writer
	ops   History
	err   error
}

// NewRecorder returns a recorder whose clock starts now. sink may be nil.
func NewRecorder(sink io.Writer) *Recorder {
	return &Recorder{start: time.Now(), sink: sink}
}

// Now returns the monotonic time since the recorder started.
func (r *Recorder) Now() time.Duration { return time.Since(r.start) }

// Record stamps op with its index and the current time, appends it, writes it
// to the sink, and returns the stamped op.
func (r *Recorder) Record(op Op) Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Index = len(r.ops)
	op.Time = time.Since(r.start)
	r.ops = append(r.ops, op)
	if r.sink != nil && r.err == nil {
		b, err := json.Marshal(op)
		if err == nil {
			b = append(b, '\n')
			_, err = r.sink.Write(b)
		}
		if err != nil {
			r.err = fmt.Errorf("write history op %d: %w", op.Index, err)
		}
	}
	return op
}

// History returns a copy of everything recorded so far.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(History(nil), r.ops...)
}

// Since returns a copy of the ops recorded from index i on (none when i is
// past the end), so that a watcher can follow the history as it grows
// without copying all of it each time.
func (r *Recorder) Since(i int) History {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < 0 {
		i = 0
	}
	if i >= len(r.ops) {
		return nil
	}
	return append(History(nil), r.ops[i:]...)
}

// Err returns the first error writing to the sink, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
