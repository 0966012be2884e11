package history

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// Recorder appends ops to a history as they happen, stamping each with the
// next index and the controller's monotonic time since the recorder started.
// Each op is written to the sink as one line at once, so a crashed run still
// leaves a readable history. Recorder is safe for concurrent use.
//
// A long run records millions of ops, so the recorder keeps them small
// until they are read: each in a 40-byte record (its strings as numbers in
// a table of the distinct ones, its value shared), in blocks of a fixed
// size, so that the history never grows by copying itself. View turns them
// into one History of exactly their number and lets the records go.
type Recorder struct {
	mu    sync.Mutex
	start time.Time
	sink  io.Writer
	err   error
	// viewed holds the ops View has already turned into a History;
	// blocks holds those recorded since, n counts them all.
	viewed History
	blocks [][]packedOp
	n      int
	// strs and ids are the table of the distinct strings the ops carry
	// (type, name, key, error); strs[0] is "".
	strs []string
	ids  map[string]uint32
	// wide holds the process of an op whose process does not fit a
	// record, by index (none in practice: processes are small numbers).
	wide map[int]int
	// subs are called with every op recorded (Subscribe).
	subs []func(Op)
}

// packedOp is a recorded op as the recorder keeps it: its index is its
// place, its strings are numbers in the recorder's table.
type packedOp struct {
	time              time.Duration
	value             *Value
	process           int32
	typ, f, key, errs uint32
}

// blockOps is how many records a block holds: a fixed size, so a long
// run's history grows a block at a time, never by copying itself. A
// variable so that a test can cross blocks with a few ops.
var blockOps = 1 << 14

// wideProcess marks a record whose process is in Recorder.wide.
const wideProcess = math.MinInt32

// NewRecorder returns a recorder whose clock starts now. sink may be nil.
func NewRecorder(sink io.Writer) *Recorder {
	return &Recorder{start: time.Now(), sink: sink, strs: []string{""}, ids: map[string]uint32{"": 0}}
}

// Now returns the monotonic time since the recorder started.
func (r *Recorder) Now() time.Duration { return time.Since(r.start) }

// Record stamps op with its index and the current time, appends it, writes it
// to the sink, tells the subscribers (Subscribe), and returns the stamped
// op.
func (r *Recorder) Record(op Op) Op {
	op, subs := r.record(op)
	for _, f := range subs {
		f(op)
	}
	return op
}

// Subscribe has f called with every op recorded from then on, stamped, on
// the goroutine that records it, after it is stored and outside the
// recorder's lock: f must be quick, and ops recorded by different
// goroutines at the same moment may reach it out of index order (those of
// one goroutine never do). The trigger engine (package schedule) matches
// lock events with it.
func (r *Recorder) Subscribe(f func(Op)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = append(r.subs[:len(r.subs):len(r.subs)], f)
}

// record stores op and returns it stamped, with the subscribers to tell.
func (r *Recorder) record(op Op) (Op, []func(Op)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Index = r.n
	op.Time = time.Since(r.start)
	r.pack(op)
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
	return op, r.subs
}

// pack appends op's record, in a new block when the last one is full.
func (r *Recorder) pack(op Op) {
	last := len(r.blocks) - 1
	if last < 0 || len(r.blocks[last]) == cap(r.blocks[last]) {
		r.blocks = append(r.blocks, make([]packedOp, 0, blockOps))
		last++
	}
	p := packedOp{time: op.Time, value: op.Value, process: int32(op.Process),
		typ: r.id(string(op.Type)), f: r.id(op.F), key: r.id(op.Key), errs: r.id(op.Error)}
	if int(p.process) != op.Process || p.process == wideProcess {
		if r.wide == nil {
			r.wide = make(map[int]int)
		}
		r.wide[op.Index] = op.Process
		p.process = wideProcess
	}
	r.blocks[last] = append(r.blocks[last], p)
	r.n++
}

// id returns s's number in the table, adding it the first time.
func (r *Recorder) id(s string) uint32 {
	if i, ok := r.ids[s]; ok {
		return i
	}
	i := uint32(len(r.strs))
	r.strs = append(r.strs, s)
	r.ids[s] = i
	return i
}

// at returns the op of index i, which must be recorded.
func (r *Recorder) at(i int) Op {
	if i < len(r.viewed) {
		return r.viewed[i]
	}
	j := i - len(r.viewed)
	p := &r.blocks[j/blockOps][j%blockOps]
	op := Op{Index: i, Time: p.time, Process: int(p.process), Type: Type(r.strs[p.typ]),
		F: r.strs[p.f], Key: r.strs[p.key], Value: p.value, Error: r.strs[p.errs]}
	if p.process == wideProcess {
		op.Process = r.wide[i]
	}
	return op
}

// since returns a new History of the ops from index i on, nil when there
// are none.
func (r *Recorder) since(i int) History {
	i = min(max(i, 0), r.n)
	if i == r.n {
		return nil
	}
	h := make(History, r.n-i)
	for k := range h {
		h[k] = r.at(i + k)
	}
	return h
}

// History returns a copy of everything recorded so far.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.since(0)
}

// View returns everything recorded so far as one History of exactly its
// length, and from then on keeps the ops in it instead of in records: a
// long run's history is hundreds of megabytes, and the run checks and
// reports it through its view. Ops are never changed once recorded; later
// ops go elsewhere (the view's capacity ends at its length), and a view
// asked for again with nothing recorded since is the same one. The caller
// must not change it.
func (r *Recorder) View() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.blocks) > 0 {
		h := make(History, r.n)
		for i := range h {
			h[i] = r.at(i)
		}
		r.viewed, r.blocks = h, nil
	}
	return r.viewed[:r.n:r.n]
}

// Each calls f with every op recorded so far, in order, until f returns
// false; it copies none of them into a History. f must not record.
func (r *Recorder) Each(f func(op Op) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.n {
		if !f(r.at(i)) {
			return
		}
	}
}

// Since returns a copy of the ops recorded from index i on (none when i is
// past the end), so that a watcher can follow the history as it grows
// without copying all of it each time.
func (r *Recorder) Since(i int) History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.since(i)
}

// Err returns the first error writing to the sink, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
