package checker

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockcheck/lockcheck/history"
)

// NewResource returns the resource checker. The protected resource is a
// register per lock key, starting at 0, and every critical section (cs) reads
// it and writes a new value. Two checks run:
//
//   - a direct scan: two or more accepted (ok) critical sections on the same
//     key that read the same value are a lost update. The scan is sound, so
//     it makes the verdict Invalid even when the search below times out.
//   - Porcupine over the critical sections, partitioned by key: an ok cs
//     read r and wrote w atomically; a failed cs had no effect and is
//     dropped; a cs that ended in info may take effect at any later time, or
//     never. When its read is known (r, and w or r+1) it moves r to w; when
//     it is not, it adds one to whatever the register holds. Such blind
//     increments are interchangeable, so they are kept as a count of
//     pending increments in the model state that later ops may draw on,
//     which is exactly equivalent and keeps the search small.
//
// The verdict is Invalid if either check finds a violation, Unknown if
// Porcupine could not decide and the scan found nothing.
func NewResource(opts Options) Checker { return &resource{opts: opts} }

// resource implements NewResource.
type resource struct {
	opts Options
	// target overrides chunkTarget, and limit maxChunk, for tests.
	target, limit int
}

// Name returns "resource".
func (c *resource) Name() string { return "resource" }

// Check checks h.
func (c *resource) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// appliesTo implements applier: the register checks do not judge an
// inventory history (its critical sections write read-1, or nothing when
// sold out, from a seeded stock); the inventory checker does.
func (c *resource) appliesTo(a *analysis) bool { return !a.isInventory() }

// csKind is the kind of one register model operation.
type csKind uint8

const (
	rStart  csKind = iota
	rRMW           // an ok cs: read r, wrote w
	rIncr          // an ok cs whose read is unknown: +1
	rMaybe         // an info cs with a known read: r -> w at any later time, or never
	rCredit        // an info cs with an unknown read: one more pending increment
)

// csOp is the input of one register model operation.
type csOp struct {
	kind csKind
	// zxid says token is a ZooKeeper zxid, described as epoch:counter
	// (beside kind, it takes no room).
	zxid        bool
	key         string
	proc        int
	read, wrote int64
	token       int64
	start       regState
	inv, done   int
	call, ret   time.Duration
	// returned is when the completion was recorded (an info one too).
	returned time.Duration
}

// detached implements linInput.
func (in *csOp) detached() linInput {
	c := *in
	return &c
}

// operation implements linInput.
func (in *csOp) operation() porcupine.Operation {
	return porcupine.Operation{ClientId: in.proc, Input: in, Call: int64(in.call), Return: int64(in.ret)}
}

// tokens says what the op's token is, for its description.
func (in *csOp) tokens() TokenKind {
	if in.zxid {
		return ZxidTokens
	}
	return NumberTokens
}

// regState is the register's value and the number of pending blind
// increments (info critical sections that may still land).
type regState struct{ v, c int64 }

func (s regState) String() string {
	if s.c == 0 {
		return fmt.Sprint(s.v)
	}
	return fmt.Sprintf("%d (+%d pending)", s.v, s.c)
}

// reach applies pending increments to bring the register from s to r, and
// reports whether it can.
func (s regState) reach(r int64) (regState, bool) {
	if r < s.v || r-s.v > s.c {
		return s, false
	}
	return regState{r, s.c - (r - s.v)}, true
}

// registerModel is the model of the protected register.
func registerModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return regState{} },
		Step: func(state, input, _ any) (bool, any) {
			s, in := state.(regState), input.(*csOp)
			switch in.kind {
			case rStart:
				return true, in.start
			case rRMW:
				t, ok := s.reach(in.read)
				return ok, regState{in.wrote, t.c}
			case rIncr:
				return true, regState{s.v + 1, s.c}
			case rMaybe:
				// Applied when it can be; "never" is the same op placed
				// after everything, which its open end allows.
				if t, ok := s.reach(in.read); ok {
					return true, regState{in.wrote, t.c}
				}
				return true, s
			case rCredit:
				return true, regState{s.v, s.c + 1}
			}
			return false, s
		},
		Equal: func(a, b any) bool { return a.(regState) == b.(regState) },
		Hash: func(st any) uint64 {
			s := st.(regState)
			return uint64(s.v)*0x9e3779b97f4a7c15 ^ uint64(s.c)
		},
		DescribeOperation: func(input, _ any) string {
			in := input.(*csOp)
			switch in.kind {
			case rStart:
				return "start: " + in.start.String()
			case rRMW:
				return fmt.Sprintf("%d cs %d→%d%s", in.proc, in.read, in.wrote, in.tokens().with(in.token))
			case rIncr:
				return fmt.Sprintf("%d cs +1%s", in.proc, in.tokens().with(in.token))
			case rMaybe:
				return fmt.Sprintf("%d cs %d→%d (info)%s", in.proc, in.read, in.wrote, in.tokens().with(in.token))
			case rCredit:
				return fmt.Sprintf("%d cs +1 (info)%s", in.proc, in.tokens().with(in.token))
			}
			return "?"
		},
		DescribeState: func(s any) string { return s.(regState).String() },
	}
}

// regTracker follows the register for the cuts. With every ok cs writing a
// value above the one it read, values only grow along a valid linearization,
// so the ok critical sections of a stretch are linearized in order of what
// they read, and the value and pending increments at the end are
// determined. An op that breaks this (a blind ok cs, a write not above its
// read, or an open-ended info cs, which spans every later cut anyway) stops
// all further cuts on the key.
type regTracker struct {
	base          regState
	edges         []*csOp
	credits       int64
	indeterminate bool
}

func (t *regTracker) add(input linInput) {
	in := input.(*csOp)
	switch in.kind {
	case rRMW:
		if in.wrote <= in.read {
			t.indeterminate = true
		}
		t.edges = append(t.edges, in)
	case rCredit:
		t.credits++
	default:
		t.indeterminate = true
	}
}

func (t *regTracker) settle() (any, bool) {
	if t.indeterminate {
		return nil, false
	}
	sort.Slice(t.edges, func(i, j int) bool { return t.edges[i].read < t.edges[j].read })
	s := regState{t.base.v, t.base.c + t.credits}
	for _, e := range t.edges {
		// A read below the register (a lost update) makes the stretch
		// nonlinearizable; it must not turn into pending increments.
		s = regState{e.wrote, max(0, s.c-max(0, e.read-s.v))}
	}
	t.base, t.edges, t.credits = s, t.edges[:0], 0
	return s, true
}

// checkAnalysis implements analyzer.
func (c *resource) checkAnalysis(ctx context.Context, a *analysis) Result {
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	r := newResult(c.Name())
	n := 0
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FCS {
			n++
		}
	}
	inputs := make([]csOp, 0, n)
	counts := make(map[csKind]int)
	for _, pr := range a.pairs {
		inv := pr.Invoke
		if inv.F != history.FCS || pr.Type() == history.Fail {
			continue
		}
		op := csOp{key: inv.Key, proc: inv.Process, inv: inv.Index, done: -1, call: inv.Time, ret: pr.End(), returned: pr.Returned()}
		if pr.Complete != nil {
			op.done = pr.Complete.Index
		}
		v := pr.Value()
		if v == nil {
			v = &history.Value{}
		}
		op.token, op.zxid = v.Token, c.opts.Tokens == ZxidTokens
		if v.Read != nil {
			op.read = *v.Read
			op.wrote = op.read + 1
			if v.Wrote != nil {
				op.wrote = *v.Wrote
			}
		}
		switch {
		case pr.Type() == history.OK && v.Read != nil:
			op.kind = rRMW
		case pr.Type() == history.OK:
			op.kind = rIncr
		case v.Read != nil:
			op.kind = rMaybe
		default:
			op.kind = rCredit
			op.ret = op.call
		}
		counts[op.kind]++
		inputs = append(inputs, op)
	}
	keys, byKey := groupByKey(len(inputs), func(i int) (string, linInput) { return inputs[i].key, &inputs[i] })
	r.Stats["keys"] = len(keys)
	r.Stats["cs_ok"] = counts[rRMW] + counts[rIncr]
	r.Stats["cs_indeterminate"] = counts[rMaybe] + counts[rCredit]

	// The sound scan for lost updates.
	lost := c.lostUpdates(keys, byKey, a.getFaults(), retirements(a))
	r.Stats["lost_updates"] = len(lost)
	if len(lost) > 0 {
		r.Valid = Invalid
		r.Anomalies = append(r.Anomalies, lost[:min(len(lost), maxListed)]...)
	}

	var chunks []chunk
	start := func(state any, at time.Duration, proc int) linInput {
		return &csOp{kind: rStart, start: state.(regState), proc: proc, inv: -1, done: -1, call: at, ret: at}
	}
	var failed []Anomaly
	var witnesses []chunk
	direct := 0
	for _, k := range keys {
		if ctx.Err() != nil {
			// Not decided: searched (and found unknown) below.
			chunks = append(chunks, split(k, boundMaybes(byKey[k]), &regTracker{}, regState{}, c.target, start)...)
			continue
		}
		d := decideRegister(byKey[k])
		if !d.simple {
			chunks = append(chunks, split(k, boundMaybes(byKey[k]), &regTracker{}, regState{}, c.target, start)...)
			continue
		}
		direct++
		if d.fail == regOK {
			continue
		}
		failed = append(failed, d.explain(k))
		if len(witnesses) < maxVisualized {
			if ch, ok := d.witnessChunk(k); ok {
				witnesses = append(witnesses, ch)
			}
		}
	}
	r.Stats["keys_decided_directly"] = direct
	// A key with one doubtful critical section of known read is searched
	// whole, but most of its chunks have the direct decision's shape: a
	// chunk ordered directly from its start state is linearizable, and only
	// the rest go to Porcupine (a long run's key is hundreds of chunks, each
	// search hundreds of kilobytes). A chunk the direct decision cannot
	// order is searched too, so its story is Porcupine's as before.
	searched := chunks[:0:0]
	decided := 0
	for _, ch := range chunks {
		if ctx.Err() == nil && chunkOrdered(ch) {
			decided++
			continue
		}
		ch.limit = c.limit
		searched = append(searched, ch)
	}
	r.Stats["partitions_decided_directly"] = decided
	lin := newResult(c.Name())
	linearizable(ctx, &lin, registerModel(), searched, c.opts.timeout(), a.getFaults, func(ch chunk, s *stuck) Anomaly {
		return explainRegister(ch, s, a.getFaults())
	})
	if len(failed) > 0 {
		for i := range failed {
			failed[i].Nemesis = describeFaults(faultsDuring(a.getFaults(), failed[i].Start, failed[i].End))
		}
		lin.Valid = Invalid
		lin.Anomalies = append(lin.Anomalies, failed...)
		sort.SliceStable(lin.Anomalies, func(i, j int) bool { return lin.Anomalies[i].Start < lin.Anomalies[j].Start })
		if lin.Visualize == nil && len(witnesses) > 0 {
			info, parts := verbose(registerModel(), witnesses, a.getFaults(), c.opts.timeout())
			lin.Visualize = visualizer(registerModel(), parts, info)
		}
	}
	for k, v := range lin.Stats {
		r.Stats[k] = v
	}
	r.Visualize = lin.Visualize
	switch {
	case r.Valid == Invalid:
		if lin.Error != "" {
			r.Stats["porcupine_error"] = lin.Error
		}
	case lin.Valid == Invalid:
		r.Valid = Invalid
		r.Anomalies = append(r.Anomalies, lin.Anomalies...)
	default:
		r.Valid, r.Error = lin.Valid, lin.Error
	}
	return r
}

// boundMaybes shortens the open end of indeterminate critical sections with
// a known read r. When every ok cs on the key wrote more than it read, the
// register only grows along any linearization, so once an ok cs that wrote
// more than r has returned, the register is above r for good and such an op
// can only be a no-op: its end is that return, and if that return came
// before the op was even invoked, the op is dropped. This keeps Porcupine
// from carrying it to the end of the history and changes no verdict.
func boundMaybes(ops []linInput) []linInput {
	var oks []*csOp
	maybes := 0
	for _, in := range ops {
		switch op := in.(*csOp); op.kind {
		case rRMW:
			if op.wrote <= op.read {
				return ops
			}
			oks = append(oks, op)
		case rIncr:
			return ops
		case rMaybe:
			maybes++
		}
	}
	if maybes == 0 || len(oks) == 0 {
		return ops
	}
	// oks by what they wrote; firstRet[i] is the earliest return among
	// oks[i:].
	sort.Slice(oks, func(i, j int) bool { return oks[i].wrote < oks[j].wrote })
	firstRet := make([]time.Duration, len(oks)+1)
	firstRet[len(oks)] = forever
	for i := len(oks) - 1; i >= 0; i-- {
		firstRet[i] = min(firstRet[i+1], oks[i].ret)
	}
	kept := ops[:0]
	for _, in := range ops {
		op := in.(*csOp)
		if op.kind == rMaybe {
			i := sort.Search(len(oks), func(i int) bool { return oks[i].wrote > op.read })
			if firstRet[i] < op.call {
				continue
			}
			op.ret = min(op.ret, firstRet[i])
		}
		kept = append(kept, in)
	}
	return kept
}

// lostUpdates scans each key's ok critical sections for reads of the same
// value.
func (c *resource) lostUpdates(keys []string, byKey map[string][]linInput, faults []history.Fault, retired map[int]*history.Op) []Anomaly {
	var out []Anomaly
	for _, k := range keys {
		var oks []*csOp
		for _, in := range byKey[k] {
			if in := in.(*csOp); in.kind == rRMW {
				oks = append(oks, in)
			}
		}
		groups := sameReads(oks, false)
		// A stale write that sets the register back makes every value
		// after it be read again: one anomaly for each such run of
		// consecutive values, not one per value.
		for i := 0; i < len(groups); {
			j := i + 1
			for j < len(groups) && groups[j][0].read == groups[j-1][0].read+1 {
				j++
			}
			late := findLateWrite(groups[i], byKey[k], retired)
			if j-i == 1 {
				out = append(out, lostUpdate(k, groups[i], faults, late))
			} else {
				out = append(out, rollback(k, groups[i:j], faults, late))
			}
			i = j
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// lostUpdate explains accepted critical sections that all read one value.
func lostUpdate(key string, ops []*csOp, faults []history.Fault, late *lateWrite) Anomaly {
	an, claim, runs := readTwice(key, ops, faults)
	lostN := "one update was"
	if len(ops) > 2 {
		lostN = fmt.Sprintf("%d updates were", len(ops)-1)
	}
	if late != nil {
		late.add(&an, faults)
		an.Explanation = fmt.Sprintf("%s, but %s. %s lost.", capitalize(claim), late.story(ops), capitalize(lostN))
		return an
	}
	an.Explanation = fmt.Sprintf("%s: %s lost (%s).", claim, lostN, runs)
	return an
}

// lateWrite is a critical section left in doubt whose write most likely
// landed late and set the register back.
type lateWrite struct {
	op *csOp
	// others counts further critical sections left in doubt that could
	// have done it.
	others int
	// retired is the crash that retired its process, or nil.
	retired *history.Op
}

// retirements returns the crash invocation of every retired process.
func retirements(a *analysis) map[int]*history.Op {
	out := make(map[int]*history.Op)
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FCrash {
			out[pr.Invoke.Process] = pr.Invoke
		}
	}
	return out
}

// findLateWrite looks, when the first two accepted critical sections that
// read one value r (ops, by invocation) did not overlap, for what wrote r
// again in between: a critical section left in doubt, invoked before the
// second returned and, when an accepted one wrote r, before that one
// returned (it read r-1, which the register held only until then). It
// returns nil when the two overlapped (a plain race), or when an accepted
// writer of r was still running after the first began.
func findLateWrite(ops []*csOp, all []linInput, retired map[int]*history.Op) *lateWrite {
	a, b := ops[0], ops[1]
	if a.ret >= b.call {
		return nil
	}
	r := a.read
	readBy := forever // the register held r-1 until then, at the latest
	for _, in := range all {
		if op := in.(*csOp); op.kind == rRMW && op.wrote == r {
			if op.ret > a.call {
				return nil
			}
			readBy = min(readBy, op.ret)
		}
	}
	ins := func(yield func(*csOp) bool) {
		for _, in := range all {
			if !yield(in.(*csOp)) {
				return
			}
		}
	}
	late := latestLate(ins, func(op *csOp) bool {
		switch {
		case op.kind != rMaybe && op.kind != rCredit:
			return false
		case op.call > b.ret || op.call > readBy:
			return false
		}
		return op.kind != rMaybe || op.wrote == r
	}, retired)
	if late.op == nil {
		return nil
	}
	return &late
}

// latestLate is, of the candidates that fits accepts, the latest invoked,
// with how many others could have done it and the crash that retired its
// process; its op is nil when none fits.
func latestLate(candidates iter.Seq[*csOp], fits func(*csOp) bool, retired map[int]*history.Op) lateWrite {
	var late lateWrite
	for op := range candidates {
		if !fits(op) {
			continue
		}
		if late.op != nil {
			late.others++
		}
		if late.op == nil || op.call > late.op.call {
			late.op = op
		}
	}
	if late.op != nil {
		late.retired = retired[late.op.proc]
	}
	return late
}

// add puts the late writer's process and ops into an.
func (l *lateWrite) add(an *Anomaly, faults []history.Fault) {
	an.Processes = append([]int{l.op.proc}, an.Processes...)
	an.Ops = append([]int{l.op.inv, l.op.done}, an.Ops...)
	an.Start = min(an.Start, l.op.call)
	an.Nemesis = describeFaults(faultsDuring(faults, an.Start, an.End))
}

// story tells how the late write explains ops reading one value twice.
func (l *lateWrite) story(ops []*csOp) string {
	a, b := ops[0], ops[1]
	op := l.op
	s := fmt.Sprintf("%d's critical section (%s) returned before %d's (%s) began, so the register was set back to %d in between: most likely by process %d's critical section, invoked at %s and left in doubt",
		a.proc, span(a.call, a.ret), b.proc, span(b.call, b.ret), a.read, op.proc, secs(op.call))
	if op.done >= 0 {
		s += fmt.Sprintf(" (info at %s, op %d)", secs(op.returned), op.done)
	}
	if l.retired != nil {
		s += fmt.Sprintf(", whose process was retired at %s", secs(l.retired.Time))
	}
	s += fmt.Sprintf(": it read %d before %d was first written, and its write of %d landed late", a.read-1, a.read, a.read)
	if l.others > 0 {
		s += fmt.Sprintf(" (%s left in doubt could have done the same)", plural(l.others, "other critical section", "other critical sections"))
	}
	return s
}

// readTwice is what a lost-update story and a rollback story share: the
// anomaly's processes, ops and window for critical sections that all read
// one value, the claim "processes 3 and 1 both read 41 ... and both wrote
// 42", and when each ran.
func readTwice(key string, ops []*csOp, faults []history.Fault) (an Anomaly, claim, runs string) {
	an = Anomaly{Kind: "lost-update", Key: key, Start: ops[0].call, Lost: len(ops) - 1}
	var ps, ran, wrote []string
	seenWrote := make(map[int64]bool)
	for i, op := range ops {
		an.Processes = append(an.Processes, op.proc)
		an.Ops = append(an.Ops, op.inv, op.done)
		an.Start, an.End = min(an.Start, op.call), max(an.End, op.ret)
		ps = append(ps, fmt.Sprint(op.proc))
		run := fmt.Sprintf("%d's %s", op.proc, span(op.call, op.ret))
		if i == 0 {
			run = fmt.Sprintf("%d's critical section ran %s", op.proc, span(op.call, op.ret))
		}
		ran = append(ran, run)
		if !seenWrote[op.wrote] {
			seenWrote[op.wrote] = true
			wrote = append(wrote, fmt.Sprint(op.wrote))
		}
	}
	an.Nemesis = describeFaults(faultsDuring(faults, an.Start, an.End))
	both := "both"
	if len(ops) > 2 {
		both = "all"
	}
	claim = fmt.Sprintf("processes %s %s read %d from the resource for lock %s and %s wrote %s",
		joinAnd(ps), both, ops[0].read, key, both, joinAnd(wrote))
	return an, claim, strings.Join(ran, ", ")
}

// rollback explains a run of consecutive values that were each read by more
// than one accepted critical section: the register was set back, and every
// update since was made a second time.
func rollback(key string, groups [][]*csOp, faults []history.Fault, late *lateWrite) Anomaly {
	an, claim, runs := readTwice(key, groups[0], faults)
	lost := 0
	for _, g := range groups {
		lost += len(g) - 1
		for _, op := range g {
			an.Start, an.End = min(an.Start, op.call), max(an.End, op.ret)
		}
	}
	an.Nemesis = describeFaults(faultsDuring(faults, an.Start, an.End))
	an.Lost = lost
	first, last := groups[0][0].read, groups[len(groups)-1][0].read
	how := fmt.Sprintf("It began when %s (%s).", claim, runs)
	if late != nil {
		late.add(&an, faults)
		how = fmt.Sprintf("It began when %s, but %s.", claim, late.story(groups[0]))
	}
	an.Explanation = fmt.Sprintf("The register of lock %s was set back: each value from %d to %d was read by more than one critical section, so %d updates were lost. %s",
		key, first, last, lost, how)
	return an
}

// explainRegister tells the story of a chunk of critical sections Porcupine
// could not linearize.
func explainRegister(ch chunk, s *stuck, faults []history.Fault) Anomaly {
	an := Anomaly{Kind: "nonlinearizable", Key: ch.key, Start: ch.from, End: ch.to}
	general := fmt.Sprintf("no order of the %s on lock %s between %s and %s fits a register that each one read and then wrote",
		plural(len(ch.ops), "critical section", "critical sections"), ch.key, secs(ch.from), secs(ch.to))
	if s == nil || s.op == nil {
		an.Nemesis = describeFaults(faultsDuring(faults, ch.from, ch.to))
		an.Explanation = capitalize(general) + "."
		return an
	}
	op := s.op.Input.(*csOp)
	st := s.state.(regState)
	an.Processes = []int{op.proc}
	an.Ops = []int{op.inv}
	if op.done >= 0 {
		an.Ops = append(an.Ops, op.done)
	}
	if len(s.prefix) > 0 {
		if last := s.prefix[len(s.prefix)-1].Input.(*csOp); last.kind != rStart {
			an.Processes = append([]int{last.proc}, an.Processes...)
			an.Ops = append([]int{last.inv}, an.Ops...)
			an.Start = last.call
		}
	}
	if op.ret != forever {
		an.End = op.ret
	}
	an.Nemesis = describeFaults(faultsDuring(faults, an.Start, an.End))
	an.Explanation = fmt.Sprintf("Process %d's critical section on lock %s (%s) read %d and wrote %d, but %s: in the longest order that fits, the register holds %s when it would have to run.",
		op.proc, ch.key, span(op.call, op.ret), op.read, op.wrote, general, st)
	return an
}

// chunkOrdered reports whether the direct decision orders ch's critical
// sections from the state its start op sets.
func chunkOrdered(ch chunk) bool {
	st, ok := ch.start.(*csOp)
	if !ok || st.kind != rStart {
		return false
	}
	d := decideRegisterFrom(ch.ops, st.start)
	return d.simple && d.fail == regOK
}
