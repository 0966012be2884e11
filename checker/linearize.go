package checker

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockcheck/lockcheck/history"
)

// Porcupine's search keeps a bitset of the whole partition per cached state,
// so its memory grows with the square of the partition. The mutex and
// resource checkers decide keys of a lock client's shape directly
// (lockorder.go, regorder.go) and search only the others, cut into chunks.
//
// A cut is made at an instant t where no operation is in flight (every op
// either returned before t or was invoked after it; an op that may take
// effect at any later time is in flight forever), so every linearization
// puts the ops before t before the ops after t. If, in addition, every valid
// linearization of the ops before t ends in the same model state s (the
// tracker proves it per model), the whole history is linearizable iff each
// chunk is linearizable from its start state. Each chunk begins with a
// synthetic start op that sets the state.
const (
	// chunkTarget is the size at which a chunk is closed at the next cut.
	chunkTarget = 1024
	// maxChunk bounds one Porcupine search (about 1 GiB at the limit); a
	// larger chunk (a stretch without any cut) is not searched and makes
	// the verdict Unknown.
	maxChunk = 1 << 17
)

// linInput is the input of one model operation, which knows its interval.
type linInput interface {
	// operation returns the Porcupine operation, with the input itself as
	// Input.
	operation() porcupine.Operation
	// detached returns a copy of the input of its own, for what a result
	// keeps: an input is an element of its checker's array of them all.
	detached() linInput
}

// tracker follows the model state over a key's ops in call order, to tell the
// state at a cut.
type tracker interface {
	// add records the next op, in call order.
	add(in linInput)
	// settle returns the state every valid linearization of the ops added
	// so far ends in, and false when that state is not determined.
	settle() (any, bool)
}

// chunk is one piece of a key's ops, searched by Porcupine on its own.
type chunk struct {
	key string
	// start sets the model state the chunk starts in.
	start linInput
	ops   []linInput
	// from and to bound the chunk's ops in time (to ignores ops that never
	// return).
	from, to time.Duration
	// limit overrides maxChunk, for tests.
	limit int
}

// operations appends the chunk's Porcupine operations, start op first, to
// buf[:0].
func (c chunk) operations(buf []porcupine.Operation) []porcupine.Operation {
	buf = append(buf[:0], c.start.operation())
	for _, in := range c.ops {
		buf = append(buf, in.operation())
	}
	return buf
}

// detached returns the Porcupine operations of c as operations does, each
// with a copy of its input (linInput.detached).
func (c chunk) detached() []porcupine.Operation {
	ops := []porcupine.Operation{c.start.detached().operation()}
	for _, in := range c.ops {
		ops = append(ops, in.detached().operation())
	}
	return ops
}

// maxOps is the most ops one search may take.
func (c chunk) maxOps() int {
	if c.limit > 0 {
		return c.limit
	}
	return maxChunk
}

// startFunc builds the start op for a state, at a time, shown on a process's
// row.
type startFunc func(state any, at time.Duration, proc int) linInput

// split cuts one key's ops into chunks; ops are sorted by call time in
// place, and the chunks share them. A chunk is closed at the first cut after
// it holds target ops (chunkTarget when target is 0).
func split(key string, ops []linInput, tr tracker, init any, target int, start startFunc) []chunk {
	if len(ops) == 0 {
		return nil
	}
	if target <= 0 {
		target = chunkTarget
	}
	calls := make([]porcupine.Operation, len(ops))
	for i, in := range ops {
		calls[i] = in.operation()
	}
	sort.Stable(byCall{ops, calls})
	var chunks []chunk
	first := 0
	open := func(i int, state any) chunk {
		at := time.Duration(calls[i].Call)
		return chunk{key: key, start: start(state, at-1, calls[i].ClientId), from: at}
	}
	cur := open(0, init)
	maxRet := int64(math.MinInt64)
	for i, op := range calls {
		if i-first >= target && maxRet < op.Call {
			if st, ok := tr.settle(); ok {
				cur.ops = ops[first:i:i]
				chunks = append(chunks, cur)
				cur, first = open(i, st), i
			}
		}
		tr.add(ops[i])
		maxRet = max(maxRet, op.Return)
		if op.Return != math.MaxInt64 {
			cur.to = max(cur.to, time.Duration(op.Return))
		}
		cur.to = max(cur.to, time.Duration(op.Call))
	}
	cur.ops = ops[first:]
	return append(chunks, cur)
}

// groupByKey groups n inputs by lock key, the keys in order of first
// appearance; item returns the key and input of the i-th.
func groupByKey(n int, item func(i int) (string, linInput)) ([]string, map[string][]linInput) {
	count := make(map[string]int)
	var keys []string
	for i := range n {
		k, _ := item(i)
		if _, ok := count[k]; !ok {
			keys = append(keys, k)
		}
		count[k]++
	}
	by := make(map[string][]linInput, len(keys))
	for _, k := range keys {
		by[k] = make([]linInput, 0, count[k])
	}
	for i := range n {
		k, in := item(i)
		by[k] = append(by[k], in)
	}
	return keys, by
}

// byCall sorts inputs and their operations by call time.
type byCall struct {
	ins []linInput
	ops []porcupine.Operation
}

func (b byCall) Len() int           { return len(b.ins) }
func (b byCall) Less(i, j int) bool { return b.ops[i].Call < b.ops[j].Call }
func (b byCall) Swap(i, j int) {
	b.ins[i], b.ins[j] = b.ins[j], b.ins[i]
	b.ops[i], b.ops[j] = b.ops[j], b.ops[i]
}

// chunkOutcome is Porcupine's answer for one chunk, with the reason when it
// could not answer.
type chunkOutcome struct {
	res    porcupine.CheckResult
	reason string
}

// runChunks checks every chunk with Porcupine, in parallel, within one time
// budget. A chunk that runs out of time or context, or is too large, is
// Unknown.
func runChunks(ctx context.Context, model porcupine.Model, chunks []chunk, budget time.Duration) []chunkOutcome {
	out := make([]chunkOutcome, len(chunks))
	deadline := time.Now().Add(budget)
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(chunks))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []porcupine.Operation
			for {
				i := int(next.Add(1) - 1)
				if i >= len(chunks) {
					return
				}
				c := chunks[i]
				left := time.Until(deadline)
				switch {
				case len(c.ops) > c.maxOps():
					out[i] = chunkOutcome{porcupine.Unknown, fmt.Sprintf(
						"%d operations on key %q from %s could not be split and exceed the %d-operation limit of one search",
						len(c.ops), c.key, secs(c.from), c.maxOps())}
				case ctx.Err() != nil:
					out[i] = chunkOutcome{porcupine.Unknown, fmt.Sprintf("not searched: %v", ctx.Err())}
				case left <= 0:
					out[i] = chunkOutcome{porcupine.Unknown, fmt.Sprintf("timed out after %v", budget)}
				default:
					buf = c.operations(buf)
					res := porcupine.CheckOperationsTimeout(model, buf, left)
					out[i] = chunkOutcome{res: res}
					if res == porcupine.Unknown {
						out[i].reason = fmt.Sprintf("timed out after %v", budget)
					}
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// maxVisualized bounds the failing chunks drawn in one visualization.
const maxVisualized = 4

// verbose re-checks failing chunks with Porcupine's verbose search, for the
// visualization and the narrative. Processes are renumbered to rows 0..n-1
// (descriptions and inputs keep the real numbers, and the page labels each
// row with its process: see linviz.go); faults become annotations, and so
// does a time axis in the run's seconds.
func verbose(model porcupine.Model, chunks []chunk, faults []history.Fault, budget time.Duration) (porcupine.LinearizationInfo, [][]porcupine.Operation) {
	parts := make([][]porcupine.Operation, len(chunks))
	rows := make(map[int]int)
	var ids []int
	from, to := chunks[0].from, chunks[0].to
	for i, c := range chunks {
		// The parts are the result's (its visualization draws them): each
		// op is a copy, so that they do not keep the checker's array of
		// inputs, one per op of a long history, live for the rest of the
		// check.
		parts[i] = c.detached()
		for _, op := range parts[i] {
			if _, ok := rows[op.ClientId]; !ok {
				rows[op.ClientId] = 0
				ids = append(ids, op.ClientId)
			}
		}
		from, to = min(from, c.from), max(to, c.to)
	}
	sort.Ints(ids)
	for i, p := range ids {
		rows[p] = i
	}
	for _, part := range parts {
		for j := range part {
			part[j].ClientId = rows[part[j].ClientId]
		}
	}
	model.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return parts }
	_, info := porcupine.CheckOperationsVerbose(model, nil, budget)
	var notes []porcupine.Annotation
	for _, f := range faultsDuring(faults, from, to) {
		what := f.F
		if len(f.Targets) > 0 {
			what += " of " + procs(f.Targets)
		}
		notes = append(notes, porcupine.Annotation{
			Tag:             "nemesis",
			Start:           int64(f.Start),
			End:             int64(f.End),
			Description:     what,
			Details:         describeFault(f),
			BackgroundColor: "#fbe3d6",
		})
	}
	notes = append(notes, timeAxis(from, to)...)
	info.AddAnnotations(notes)
	return info, parts
}

// visualizer returns a Result.Visualize function for info.
func visualizer(model porcupine.Model, parts [][]porcupine.Operation, info porcupine.LinearizationInfo) func(io.Writer) error {
	model.Partition = func([]porcupine.Operation) [][]porcupine.Operation { return parts }
	return func(w io.Writer) error {
		page, err := writeDressed(model, info, parts)
		if err != nil {
			return fmt.Errorf("write porcupine visualization: %w", err)
		}
		if _, err := w.Write(page); err != nil {
			return fmt.Errorf("write porcupine visualization: %w", err)
		}
		return nil
	}
}

// stuckPoint reads Porcupine's longest partial linearization of failing
// partition part (whose ops are ops): it returns that prefix, the state after
// it, and the earliest-invoked op left out of it (nil when none).
func stuckPoint(model porcupine.Model, info porcupine.LinearizationInfo, part int, ops []porcupine.Operation) (prefix []porcupine.Operation, state any, stuck *porcupine.Operation) {
	state = model.Init()
	all := info.PartialLinearizationsOperations()
	if part >= len(all) {
		return nil, state, nil
	}
	for _, p := range all[part] {
		if len(p) > len(prefix) {
			prefix = p
		}
	}
	in := make(map[any]bool, len(prefix))
	for i := range prefix {
		in[prefix[i].Input] = true
		_, state = model.Step(state, prefix[i].Input, prefix[i].Output)
	}
	for i := range ops {
		if in[ops[i].Input] {
			continue
		}
		if stuck == nil || ops[i].Call < stuck.Call {
			stuck = &ops[i]
		}
	}
	return prefix, state, stuck
}

// stuck is what Porcupine's verbose search says about a failing chunk: the
// longest linearizable prefix, the state after it, and the earliest op it
// could not place. Their ClientIds are visualization rows; the inputs name
// the processes.
type stuck struct {
	prefix []porcupine.Operation
	state  any
	op     *porcupine.Operation
}

// linearizable checks chunks with Porcupine and records the outcome in r:
// the verdict, an Error for an Unknown, one "nonlinearizable" anomaly per
// failing chunk (explained by explain; s is nil for chunks beyond the
// visualized ones), and Visualize. faults feed the annotations.
func linearizable(ctx context.Context, r *Result, model porcupine.Model, chunks []chunk, budget time.Duration,
	faults func() []history.Fault, explain func(c chunk, s *stuck) Anomaly) {
	outcomes := runChunks(ctx, model, chunks, budget)
	var failing []chunk
	unknown, reason := 0, ""
	for i, o := range outcomes {
		switch o.res {
		case porcupine.Illegal:
			failing = append(failing, chunks[i])
		case porcupine.Unknown:
			if unknown == 0 {
				reason = o.reason
			}
			unknown++
		}
	}
	r.Stats["partitions"] = len(chunks)
	r.Stats["partitions_failed"] = len(failing)
	r.Stats["partitions_unknown"] = unknown
	if unknown > 0 {
		r.Valid = worse(r.Valid, Unknown)
		r.Error = fmt.Sprintf("porcupine could not decide %d of %d partitions: %s", unknown, len(chunks), reason)
	}
	if len(failing) == 0 {
		return
	}
	r.Valid = Invalid
	sort.SliceStable(failing, func(i, j int) bool { return failing[i].from < failing[j].from })
	shown := failing[:min(len(failing), maxVisualized)]
	info, parts := verbose(model, shown, faults(), budget)
	r.Visualize = visualizer(model, parts, info)
	for i, c := range failing {
		if len(r.Anomalies) >= maxListed {
			break
		}
		var s *stuck
		if i < len(shown) {
			s = &stuck{}
			s.prefix, s.state, s.op = stuckPoint(model, info, i, parts[i])
		}
		r.Anomalies = append(r.Anomalies, explain(c, s))
	}
}
