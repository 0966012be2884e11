package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// maxLine bounds one JSON line; a longer line is reported as malformed.
const maxLine = 1 << 20

// Decode reads a JSON Lines history from r. Blank lines are skipped. A line
// that is not a valid op gives an error naming its line number, a torn last
// line included (DecodeTorn accepts one).
func Decode(r io.Reader) (History, error) {
	h, torn, err := DecodeTorn(r)
	if err == nil && torn != nil {
		err = fmt.Errorf("line %d: %w", torn.Line, torn.Err)
	}
	return h, err
}

// TornLine is a last line that a crash cut short: it has no newline and
// does not parse.
type TornLine struct {
	// Line is its line number, from 1.
	Line int
	// Err says why it does not parse.
	Err error
}

func (t *TornLine) String() string {
	return fmt.Sprintf("line %d is torn (no newline, %v): checked the ops before it", t.Line, t.Err)
}

// DecodeTorn is Decode for a history a crashed run may have left: a last
// line that lacks its newline and does not parse is not an error but a
// *TornLine, returned with the ops before it. A malformed line anywhere
// else is still an error naming the line.
//
// Lines are parsed in batches of decodeBatch, spread over the processors:
// each line is an op of its own, and parsing, not reading, is what a long
// history's decode costs.
func DecodeTorn(r io.Reader) (History, *TornLine, error) {
	return decodeTorn(r, 0)
}

// lineBytes is about the length of a long run's average line (130 bytes in
// a think-0 redis-set-px run), a little under it: ReadFileTorn sizes the
// history from the file's size so that a long one is not copied as it
// grows.
const lineBytes = 120

// decodeTorn is DecodeTorn into a history with room for hint ops.
func decodeTorn(r io.Reader, hint int) (History, *TornLine, error) {
	var h History
	if hint > 0 {
		h = make(History, 0, hint)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	unterminated := false // the token just scanned ended at EOF without a newline
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		unterminated = atEOF && tok != nil && adv == len(data) && data[len(data)-1] != '\n'
		return adv, tok, err
	})
	var batch lineBatch
	flush := func() error {
		var err error
		h, err = batch.decodeInto(h)
		batch.reset()
		return err
	}
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !unterminated {
			if batch.add(line, b) == decodeBatch {
				if err := flush(); err != nil {
					return h, nil, err
				}
			}
			continue
		}
		// The last line, with no newline after it: torn if it does not parse.
		if err := flush(); err != nil {
			return h, nil, err
		}
		op, err := decodeOp(b, nil)
		if err != nil {
			return h, &TornLine{Line: line, Err: err}, nil
		}
		h = append(h, op)
	}
	if err := flush(); err != nil {
		return h, nil, err
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return h, nil, fmt.Errorf("line %d: longer than %d bytes", line+1, maxLine)
		}
		return h, nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return h, nil, nil
}

// decodeBatch is how many lines DecodeTorn parses at once, and parseChunk
// how many of them one goroutine parses.
const (
	decodeBatch = 1 << 14
	parseChunk  = 1 << 12
)

// lineBatch holds lines to parse: their bytes copied end to end into one
// buffer, each line's number and end, and room for each line's error.
type lineBatch struct {
	buf   []byte
	ends  []int
	lines []int
	errs  []error
}

// add appends line number n with bytes b and returns the batch's size.
func (l *lineBatch) add(n int, b []byte) int {
	l.buf = append(l.buf, b...)
	l.ends = append(l.ends, len(l.buf))
	l.lines = append(l.lines, n)
	return len(l.ends)
}

func (l *lineBatch) reset() {
	l.buf, l.ends, l.lines = l.buf[:0], l.ends[:0], l.lines[:0]
}

// decodeInto parses every line of the batch, in parallel, straight into h's
// tail, and returns h with the ops in order up to the first malformed line,
// with that line's error.
func (l *lineBatch) decodeInto(h History) (History, error) {
	n := len(l.ends)
	if n == 0 {
		return h, nil
	}
	base := len(h)
	h = slices.Grow(h, n)[:base+n]
	ops := h[base:]
	l.errs = slices.Grow(l.errs[:0], n)[:n]
	clear(l.errs)
	parse := func(from, to int) {
		var in arena
		for i := from; i < to; i++ {
			start := 0
			if i > 0 {
				start = l.ends[i-1]
			}
			ops[i], l.errs[i] = decodeOp(l.buf[start:l.ends[i]], &in)
		}
	}
	// Chunks of parseChunk lines, each on a goroutine of its own: every
	// split parses each line once into its own place, so the result is
	// the same whatever the split; the runtime spreads them over the
	// processors.
	var wg sync.WaitGroup
	for from := 0; from < n; from += parseChunk {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			parse(from, to)
		}(from, min(n, from+parseChunk))
	}
	wg.Wait()
	for i, err := range l.errs {
		if err != nil {
			return h[:base+i], fmt.Errorf("line %d: %w", l.lines[i], err)
		}
	}
	return h, nil
}

// decodeOp parses and validates one line: by fastOp when it can, else by
// encoding/json. in interns shared strings; it may be nil.
func decodeOp(b []byte, in *arena) (Op, error) {
	op, ok := fastOp(b, in)
	if !ok {
		var err error
		if op, err = decodeJSON(b); err != nil {
			return Op{}, err
		}
	}
	if err := checkDecoded(&op); err != nil {
		return Op{}, err
	}
	return op, nil
}

// checkDecoded checks what a line's op must have whatever it is read
// from: a known type, a name, a time and a process in range.
func checkDecoded(op *Op) error {
	if !op.Type.Valid() {
		return fmt.Errorf("unknown type %q (want invoke, ok, fail or info)", op.Type)
	}
	if op.F == "" {
		return errors.New(`missing "f"`)
	}
	if op.Time < 0 {
		return fmt.Errorf("negative time %d", op.Time)
	}
	if op.Process < NemesisProcess {
		return fmt.Errorf("invalid process %d", op.Process)
	}
	return nil
}

// decodeJSON parses one line with encoding/json, refusing unknown fields
// and trailing data.
func decodeJSON(b []byte) (Op, error) {
	var op Op
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&op); err != nil {
		return Op{}, fmt.Errorf("malformed op: %w", err)
	}
	if dec.More() {
		return Op{}, errors.New("malformed op: trailing data after the JSON object")
	}
	return op, nil
}

// ReadFile decodes the history stored at path.
func ReadFile(path string) (History, error) {
	h, torn, err := ReadFileTorn(path)
	if err == nil && torn != nil {
		err = fmt.Errorf("%s: line %d: %w", path, torn.Line, torn.Err)
	}
	return h, err
}

// ReadFileTorn decodes the history stored at path as DecodeTorn does.
//
// A sidecar beside the file (SidecarName), written by the run that
// recorded it, is read instead when it names the file as it is now: the
// same ops, without parsing the JSON.
func ReadFileTorn(path string) (History, *TornLine, error) {
	if h, ok := readSidecar(path); ok {
		return h, nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	hint := 0
	if st, err := f.Stat(); err == nil {
		hint = int(st.Size() / lineBytes)
	}
	h, torn, err := decodeTorn(f, hint)
	if err != nil {
		return h, nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, torn, nil
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
