package checker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// NewExercise returns the exercise checker. It judges whether a faulted
// run's faults could have produced the anomaly the run looks for, from the
// history alone (with opts.Lease, or the lease the nemesis recorded on its
// ops): a pause longer than the lease of a holder inside its critical
// section, a holder cut off for longer than the lease, a crash at a
// failpoint or of a holder, a lock node faulted while a lock was held, a
// clock jump on a node where a lock was held, a promotion while the old
// master still granted locks. Each nemesis kind registers its own rule
// (exerciseRule).
//
// A run whose faults all missed is not exercised: the verdict is Unknown,
// never Valid, and Result.NotExercised says why in one sentence ("no pause
// lasted longer than the 1 s lease while its process held the lock in (or
// entering) its critical section"). So is a run with fewer than
// MinGrantsBeforeFault grants before its first fault (the workload had not
// got going), and a fault with no grant in the HealthWindow before it does
// not count (the lock service was not serving). A fault whose start failed
// (its op carries an error) is no fault. A history with no nemesis fault
// ops at all is a control run: Valid, with Stats{"control": true}; unless
// opts.Faulted says the run was given a nemesis, which then never struck.
func NewExercise(opts Options) Checker { return &exercise{opts: opts} }

// MinGrantsBeforeFault is how many grants a faulted run must have made
// before its first fault to count as exercised: a fault before the first
// grant struck a workload that had not got going (workers still starting, a
// lock service that never served). One is enough: each fault must also
// follow a grant within HealthWindow, and a real run's first fault comes
// seconds in.
const MinGrantsBeforeFault = 1

// HealthWindow returns how long before a fault a grant must have completed
// for the lock service to count as healthy when the fault struck: three
// leases, at least 3 s.
func HealthWindow(lease time.Duration) time.Duration { return max(3*time.Second, 3*lease) }

// exercise implements NewExercise.
type exercise struct{ opts Options }

// Name returns "exercise".
func (c *exercise) Name() string { return "exercise" }

// Check checks h.
func (c *exercise) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// exerciseRule decides, for one nemesis kind, whether a fault could have
// produced the anomaly its run looks for.
type exerciseRule struct {
	// Nemesis is the kind's name (history.Hit.Nemesis); F the op that
	// starts its faults.
	Nemesis, F string
	// Matches tells this kind's faults from another kind's with the same F
	// in a history whose ops carry no Hit (pause of a worker, pause-leader
	// of a node); nil matches every fault with F.
	Matches func(f history.Fault) bool
	// Judge returns "" when f was exercised, else a short clause saying
	// why not ("shorter than the 1 s lease").
	Judge func(x *exerciseRun, f *fault) string
	// Missed is the sentence when none of the kind's faults was exercised.
	Missed func(x *exerciseRun) string
}

// exerciseRules returns every rule: the ones registered here with a judge
// of their own (RegisterExercise), in registration order, then the ones
// the nemesis kinds declared with their records
// (history.RegisterExerciseRule), each with its shape's judge.
func exerciseRules() []exerciseRule {
	out := append([]exerciseRule(nil), registeredRules...)
	for _, d := range history.ExerciseRules() {
		if r, ok := declaredRule(d); ok {
			out = append(out, r)
		}
	}
	return out
}

// registeredRules holds the rules registered from init; read-only after.
var registeredRules []exerciseRule

// registerExercise adds the rule of one nemesis kind with a judge of its own.
func registerExercise(r exerciseRule) { registeredRules = append(registeredRules, r) }

// declaredRule makes the rule a nemesis kind declared: its shape's judge,
// its sentence with the run's lease in words; false for a shape the
// checker does not know.
func declaredRule(d history.ExerciseRule) (exerciseRule, bool) {
	judge, ok := shapes[d.Shape]
	if !ok {
		return exerciseRule{}, false
	}
	missed := d.Missed
	if missed == "" {
		missed = "no " + d.Nemesis + " fault could have produced an anomaly"
	}
	return exerciseRule{Nemesis: d.Nemesis, F: d.F, Matches: d.Matches, Judge: judge,
		Missed: func(x *exerciseRun) string { return strings.ReplaceAll(missed, "{lease}", x.leaseWords()) }}, true
}

// HasExerciseRule reports whether the nemesis kind name has a registered
// exercise rule (a kind without one makes every faulted run not exercised).
func HasExerciseRule(name string) bool {
	for _, r := range exerciseRules() {
		if r.Nemesis == name {
			return true
		}
	}
	return false
}

// fault is one fault under judgement.
type fault struct {
	history.Fault
	// Invoked is when the start op was invoked: a fault that waits for its
	// target struck between Invoked and Start.
	Invoked time.Duration
	// Done is when the start op completed (Start, except for a failover,
	// whose Start is its invoke and Done its promotion).
	Done time.Duration
	// Hit is what the start op recorded, nil in an older history.
	Hit *history.Hit
	// Kind is the nemesis kind.
	Kind string
	// Lease is the lease the fault is measured against, 0 when unknown.
	Lease time.Duration
}

// exerciseRun is the shared state of one judgement.
type exerciseRun struct {
	a      *analysis
	holds  []hold
	grants []time.Duration // acquire ok completion times, sorted
	lease  time.Duration   // Options.Lease, else the first lease a fault recorded
}

// lastGrantBefore returns the completion time of the last grant at or before
// t, and false when there was none.
func (x *exerciseRun) lastGrantBefore(t time.Duration) (time.Duration, bool) {
	i := sort.Search(len(x.grants), func(i int) bool { return x.grants[i] > t })
	if i == 0 {
		return 0, false
	}
	return x.grants[i-1], true
}

// grantsBefore counts the grants completed before t.
func (x *exerciseRun) grantsBefore(t time.Duration) int {
	return sort.Search(len(x.grants), func(i int) bool { return x.grants[i] >= t })
}

// holdOf returns process p's hold that was in force at t, or nil.
func (x *exerciseRun) holdOf(p int, t time.Duration) *hold {
	for i := range x.holds {
		h := &x.holds[i]
		if h.proc == p && h.start <= t && h.end > t {
			return h
		}
	}
	return nil
}

// heldAt returns a hold (of any process) in force at t, or nil.
func (x *exerciseRun) heldAt(t time.Duration) *hold {
	for i := range x.holds {
		h := &x.holds[i]
		if h.start <= t && h.end > t {
			return h
		}
		if h.start > t {
			break
		}
	}
	return nil
}

// leaseWords renders the lease for a sentence: "the 1 s lease", or "the
// lease" when unknown.
func (x *exerciseRun) leaseWords() string {
	if x.lease <= 0 {
		return "the lease"
	}
	return "the " + secsShort(x.lease) + " lease"
}

// secsShort renders a duration as "1 s", "1.5 s" or "300 ms".
func secsShort(d time.Duration) string { return history.SecsShort(d) }

// outlasts reports whether f lasted longer than its lease; a fault with no
// known lease is not judged on its length.
func outlasts(f *fault) bool { return f.Lease <= 0 || f.End-f.Start > f.Lease }

// shorter is the clause of a fault that did not outlast its lease.
func shorter(f *fault) string {
	return fmt.Sprintf("lasted no longer than the %s lease", secsShort(f.Lease))
}

// checkAnalysis implements analyzer.
func (c *exercise) checkAnalysis(_ context.Context, a *analysis) Result {
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	r := newResult(c.Name())
	x := &exerciseRun{a: a, holds: a.getHolds(), lease: c.opts.Lease}
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FAcquire && pr.Type() == history.OK {
			x.grants = append(x.grants, pr.Complete.Time)
		}
	}
	sort.Slice(x.grants, func(i, j int) bool { return x.grants[i] < x.grants[j] })

	failed := make(map[string][]string) // kind -> errors of start ops that failed
	attempts, starts := 0, 0
	byIndex := make(map[int]*history.Op)
	invoked := make(map[string]time.Duration)
	invokedAt := make(map[int]time.Duration) // start completion index -> its invoke time
	for i := range a.h {
		op := &a.h[i]
		if !op.IsNemesis() {
			continue
		}
		if _, starts := history.EndOf(op.F); !starts {
			continue
		}
		if op.Type == history.Invoke {
			invoked[op.F] = op.Time
			starts++
			continue
		}
		attempts++
		byIndex[op.Index] = op
		invokedAt[op.Index] = invoked[op.F]
		if op.Error != "" {
			k := kindOf(op.F, history.Fault{F: op.F}, history.HitOf(op))
			failed[k] = append(failed[k], op.Error)
		}
	}
	if starts == 0 && !c.opts.Faulted {
		r.Stats["control"] = true
		return r
	}
	if attempts == 0 {
		r.Valid = Unknown
		r.NotExercised = "the nemesis started no fault before the run ended"
		if starts > 0 {
			r.NotExercised = "the nemesis's only fault never finished starting before the history ended"
		}
		return r
	}
	var faults []*fault
	for _, hf := range a.getFaults() {
		f := &fault{Fault: hf, Done: hf.Start, Invoked: hf.Start}
		if op := byIndex[hf.Ops[0]]; op != nil {
			f.Hit, f.Done, f.Invoked = history.HitOf(op), op.Time, invokedAt[hf.Ops[0]]
		}
		f.Kind = kindOf(hf.F, hf, f.Hit)
		f.Lease = c.opts.Lease
		if f.Lease <= 0 && f.Hit != nil {
			f.Lease = f.Hit.Lease
		}
		if x.lease <= 0 {
			x.lease = f.Lease
		}
		faults = append(faults, f)
	}

	type tally struct {
		faults, exercised int
		longest           time.Duration
		misses            map[string]int
		order             []string
	}
	tallies := make(map[string]*tally)
	var kinds []string
	startOf := make(map[string]string) // kind -> its start op
	for _, f := range faults {
		startOf[f.Kind] = f.F
	}
	miss := func(kind, why string) {
		t := tallies[kind]
		if t == nil {
			t = &tally{misses: make(map[string]int)}
			tallies[kind] = t
			kinds = append(kinds, kind)
		}
		if why == "" {
			t.exercised++
			return
		}
		if t.misses[why] == 0 {
			t.order = append(t.order, why)
		}
		t.misses[why]++
	}
	exercised := 0
	window := HealthWindow(x.lease)
	for _, f := range faults {
		why := c.judge(x, f, window)
		miss(f.Kind, why)
		tallies[f.Kind].faults++
		tallies[f.Kind].longest = max(tallies[f.Kind].longest, f.End-f.Start)
		if why == "" {
			exercised++
		}
	}
	for _, k := range sortedKeys(failed) {
		for _, e := range failed[k] {
			miss(k, "failed to start ("+e+")")
			tallies[k].faults++
		}
	}

	byKind := make(map[string]map[string]int, len(tallies))
	for k, t := range tallies {
		byKind[k] = map[string]int{"faults": t.faults, "exercised": t.exercised}
	}
	r.Stats["faults"] = len(faults)
	r.Stats["failed_to_start"] = attempts - len(faults)
	r.Stats["exercised"] = exercised
	r.Stats["by_nemesis"] = byKind

	if len(faults) > 0 {
		first := faults[0].Start
		for _, f := range faults {
			first = min(first, f.Start)
		}
		if n := x.grantsBefore(first); n < MinGrantsBeforeFault {
			r.Valid = Unknown
			r.NotExercised = fmt.Sprintf("only %s before the first fault at %s (want at least %d): the workload had not got going",
				plural(n, "grant", "grants"), secs(first), MinGrantsBeforeFault)
			return r
		}
	}
	if exercised > 0 {
		return r
	}
	var sentences []string
	for _, k := range kinds {
		t := tallies[k]
		rule, ok := ruleOf(k, startOf[k])
		s := "no exercise rule for the " + k + " nemesis"
		if ok {
			s = rule.Missed(x)
		}
		var parts []string
		for _, why := range t.order {
			parts = append(parts, fmt.Sprintf("%d %s", t.misses[why], why))
		}
		longest := ""
		if t.longest > 0 {
			longest = ", the longest " + secsShort(t.longest)
		}
		s += fmt.Sprintf(" (%s%s: %s)", plural(t.faults, k+" fault", k+" faults"), longest, strings.Join(parts, ", "))
		sentences = append(sentences, s)
	}
	if len(faults) == 0 {
		var parts []string
		for _, k := range sortedKeys(failed) {
			parts = append(parts, fmt.Sprintf("%s failed to start (%s)", plural(len(failed[k]), k+" fault", k+" faults"), failed[k][0]))
		}
		sentences = []string{"no fault took effect: " + strings.Join(parts, ", ")}
	}
	r.Valid = Unknown
	r.NotExercised = strings.Join(sentences, "; ")
	return r
}

// judge returns "" when f was exercised, else why not.
func (c *exercise) judge(x *exerciseRun, f *fault, window time.Duration) string {
	rule, ok := ruleOf(f.Kind, f.F)
	if !ok {
		return "no rule"
	}
	// The service must have granted a lock within the window before the
	// fault began: its invocation, for a fault that then waited for its
	// target (a fresh holder, a holder in its critical section).
	began := f.Start
	if f.Invoked > 0 && f.Invoked < began {
		began = f.Invoked
	}
	if g, ok := x.lastGrantBefore(f.Start); !ok || began-g > window {
		return fmt.Sprintf("struck with no grant in the %s before it (the lock service was not serving)", secsShort(window))
	}
	return rule.Judge(x, f)
}

// ruleFor returns the rule of the nemesis kind name.
func ruleFor(name string) (exerciseRule, bool) {
	for _, r := range exerciseRules() {
		if r.Nemesis == name {
			return r, true
		}
	}
	return exerciseRule{}, false
}

// kindOf returns the nemesis kind of a fault: what its start op recorded,
// else the first registered rule for its F that matches it.
func kindOf(f string, hf history.Fault, hit *history.Hit) string {
	if hit != nil && hit.Nemesis != "" {
		return hit.Nemesis
	}
	for _, r := range exerciseRules() {
		if r.F == f && (r.Matches == nil || r.Matches(hf)) {
			return r.Nemesis
		}
	}
	return f
}

// sortedKeys returns m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// liftNotExercised returns c (a composition) with its exercise sub-result's
// NotExercised set on the composed result too.
func liftNotExercised(c Checker) Checker { return &lifted{c: c} }

// lifted implements liftNotExercised.
type lifted struct{ c Checker }

var _ analyzer = (*lifted)(nil)

// Name returns the composition's name.
func (l *lifted) Name() string { return l.c.Name() }

// Check runs the composition on h.
func (l *lifted) Check(ctx context.Context, h history.History) Result { return lift(l.c.Check(ctx, h)) }

// checkAnalysis implements analyzer.
func (l *lifted) checkAnalysis(ctx context.Context, a *analysis) Result {
	return lift(check(ctx, l.c, a))
}

// lift copies the first non-advisory NotExercised of r's sub-results to
// r, and the conditions the conditions checker found reached.
func lift(r Result) Result {
	for _, sub := range r.Results {
		if sub.NotExercised != "" && !sub.Advisory && r.NotExercised == "" {
			r.NotExercised = sub.NotExercised
		}
		if sub.Checker == ConditionsName && r.Reached == nil {
			r.Reached = sub.Reached
		}
	}
	return r
}
