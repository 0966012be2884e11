package checker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// A danger condition is a moment a lock can break in: a holder stopped
// while its lease ran out, the reply to a release lost, a grant made during
// a failover. A run that never reached the condition its cell exists for
// has not tested it, however valid it reads. Each condition is a registered
// record (RegisterCondition) decided from the history alone; the
// conditions checker (NewConditions) lists the ones a history reached.

// Condition is one named danger condition.
type Condition struct {
	// Name is its name in results and cells files: holder-paused-past-lease.
	Name string
	// Definition says in one line what reaching it means.
	Definition string
	// Detect returns each place the history reached it; nil for none.
	Detect func(e *Evidence) []Reach
	// Aim, when set, is the trigger that aims a fault at the condition
	// (EVENT[+OFFSET][:DURATION], as --nemesis spells it after a kind's
	// @): `check matrix --until-covered` fires a cell's faults so once
	// its seeds alone did not reach the condition. "" when no trigger
	// brings it about.
	Aim string
}

// Reach is one place a history reached a condition.
type Reach struct {
	// Ops are the history indices of the ops that show it.
	Ops []int `json:"ops"`
	// Process is the worker concerned, -1 when none is.
	Process int `json:"process"`
	// Key is the lock concerned, "" when none is.
	Key string `json:"key,omitempty"`
	// At is when it was reached, in seconds since the history began.
	At float64 `json:"at_s"`
}

// Reached is a condition a history reached, with every place it did.
type Reached struct {
	Name    string  `json:"name"`
	Count   int     `json:"count"`
	Reaches []Reach `json:"reaches"`
}

var (
	conditionsMu sync.RWMutex
	conditions   = map[string]Condition{}
)

// RegisterCondition adds c to the conditions every conditions checker
// looks for. It panics on an empty or repeated name or a nil detector: a
// condition is registered from an init function.
func RegisterCondition(c Condition) {
	conditionsMu.Lock()
	defer conditionsMu.Unlock()
	if c.Name == "" || c.Detect == nil || strings.ContainsAny(c.Name, " ,\t") {
		panic(fmt.Sprintf("checker: condition %q: needs a name without spaces or commas and a detector", c.Name))
	}
	if _, dup := conditions[c.Name]; dup {
		panic("checker: condition " + c.Name + " registered twice")
	}
	conditions[c.Name] = c
}

// Conditions returns every registered condition, sorted by name.
func Conditions() []Condition {
	conditionsMu.RLock()
	defer conditionsMu.RUnlock()
	out := make([]Condition, 0, len(conditions))
	for _, c := range conditions {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ConditionNamed returns the condition called name.
func ConditionNamed(name string) (Condition, bool) {
	conditionsMu.RLock()
	defer conditionsMu.RUnlock()
	c, ok := conditions[name]
	return c, ok
}

// Hold is a process's belief that it held a lock: from its acquire's ok to
// its next release or crash invoke, or the end of the history.
type Hold struct {
	Key        string
	Process    int
	Start, End time.Duration
	// Asked is when its acquire was invoked: the earliest its lease
	// could have begun.
	Asked time.Duration
	// Acquire is the history index of the acquire ok, EndOp of the op
	// that ended it (-1: the history ended first).
	Acquire, EndOp int
	Owner          string
}

// Evidence is what a condition's detector reads: the history and what the
// checkers made of it, each computed once and shared.
type Evidence struct {
	a *analysis

	holdsOnce sync.Once
	holds     []Hold

	csOnce sync.Once
	cs     map[int][]history.Pair // each process's critical sections, in order
}

// History returns the history.
func (e *Evidence) History() history.History { return e.a.h }

// Pairs returns every op with its completion, in invocation order.
func (e *Evidence) Pairs() []history.Pair { return e.a.pairs }

// Faults returns the nemesis faults, in order of their start.
func (e *Evidence) Faults() []history.Fault { return e.a.getFaults() }

// Holds returns every hold, in order of grant.
func (e *Evidence) Holds() []Hold {
	e.holdsOnce.Do(func() {
		asked := make(map[int]time.Duration) // acquire ok index -> its invocation
		for _, pr := range e.a.pairs {
			if pr.Invoke.F == history.FAcquire && pr.Complete != nil {
				asked[pr.Complete.Index] = pr.Invoke.Time
			}
		}
		hs := e.a.getHolds()
		e.holds = make([]Hold, 0, len(hs))
		for _, h := range hs {
			e.holds = append(e.holds, Hold{Key: h.key, Process: h.proc, Start: h.start, End: h.end,
				Asked: asked[h.acquire], Acquire: h.acquire, EndOp: h.endOp, Owner: h.owner})
		}
	})
	return e.holds
}

// criticalSections returns process p's critical sections, in order.
func (e *Evidence) criticalSections(p int) []history.Pair {
	e.csOnce.Do(func() {
		e.cs = make(map[int][]history.Pair)
		for _, pr := range e.a.pairs {
			if pr.Invoke.F == history.FCS {
				e.cs[pr.Invoke.Process] = append(e.cs[pr.Invoke.Process], pr)
			}
		}
	})
	return e.cs[p]
}

// Windows returns the lost-lock windows: each grant the lock service let go
// while its holder still held it (NewWindows).
func (e *Evidence) Windows() []Window {
	ws, _, _ := lostWindows(e.a)
	out := make([]Window, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.export())
	}
	return out
}

// HeldAt returns the holds of process at t (Start <= t < End).
func (e *Evidence) HeldAt(process int, t time.Duration) []Hold {
	var out []Hold
	for _, h := range e.Holds() {
		if h.Process == process && h.Start <= t && t < h.End {
			out = append(out, h)
		}
	}
	return out
}

// NewConditions returns the conditions checker: it lists every registered
// condition the history reached (Result.Reached) and decides nothing, so
// its result is advisory and Valid (Unknown for a malformed history).
func NewConditions() Checker { return conditionsChecker{} }

// conditionsChecker implements NewConditions.
type conditionsChecker struct{}

var _ analyzer = conditionsChecker{}

// ConditionsName is the conditions checker's name, as its sub-result of a
// composition carries it.
const ConditionsName = "conditions"

// Name returns "conditions".
func (conditionsChecker) Name() string { return ConditionsName }

// Check checks h.
func (c conditionsChecker) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// checkAnalysis implements analyzer.
func (c conditionsChecker) checkAnalysis(_ context.Context, a *analysis) Result {
	if a.err != nil {
		r := malformed(c.Name(), a.err)
		r.Advisory = true
		return r
	}
	r := newResult(c.Name())
	r.Advisory = true
	r.Reached = ReachedIn(&Evidence{a: a})
	return r
}

// ReachedIn returns the registered conditions e reached, by name.
func ReachedIn(e *Evidence) []Reached {
	var out []Reached
	for _, c := range Conditions() {
		if rs := c.Detect(e); len(rs) > 0 {
			out = append(out, Reached{Name: c.Name, Count: len(rs), Reaches: rs})
		}
	}
	return out
}

// ReachedLine says in one line what a history reached: "reached:
// holder-paused-past-lease x3, release-reply-lost x1", or "reached: none".
func ReachedLine(rs []Reached) string {
	if len(rs) == 0 {
		return "reached: none"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s ×%d", r.Name, r.Count)
	}
	return "reached: " + strings.Join(parts, ", ")
}

// reachAt returns a Reach of process and key at t, shown by ops.
func reachAt(t time.Duration, process int, key string, ops ...int) Reach {
	return Reach{Ops: ops, Process: process, Key: key, At: seconds(t)}
}
