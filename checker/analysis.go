package checker

import (
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// analysis is the view of a history that several checkers share: the
// invoke/completion pairs, the faults and the hold intervals, each computed
// once. Compose hands one analysis to all its sub-checkers.
type analysis struct {
	h     history.History
	pairs []pair
	err   error
	// end is the time of the last op: the end of the history.
	end time.Duration

	faultsOnce sync.Once
	faults     []history.Fault

	holdsOnce sync.Once
	holds     []hold

	invOnce sync.Once
	inv     bool

	// windowsOnce guards the lost-lock windows (lostWindows).
	windowsOnce sync.Once
	windows     []lostWindow
	lags        []time.Duration
	observed    int
}

// isInventory reports whether the history is of the inventory workload:
// it holds a seed op (history.FSeed) that set a stock.
func (a *analysis) isInventory() bool {
	a.invOnce.Do(func() {
		for i := range a.h {
			if a.h[i].F == history.FSeed {
				a.inv = true
				return
			}
		}
	})
	return a.inv
}

// analyzer is implemented by checkers that can work from a shared analysis.
type analyzer interface {
	checkAnalysis(ctx context.Context, a *analysis) Result
}

// newAnalysis pairs the ops of h. A pairing error is kept in err.
func newAnalysis(h history.History) *analysis {
	a := &analysis{h: h}
	a.pairs, a.err = h.Pairs()
	a.pairs = withoutReentry(a.pairs)
	for i := range h {
		if h[i].Time > a.end {
			a.end = h[i].Time
		}
	}
	return a
}

// pair is an invocation with its completion, pointing into the history.
type pair = history.Pair

// withoutReentry returns pairs without the re-entries of a re-entrant
// lock, as its holder counts them: an acquire granted to a process that
// already holds that lock by its own history adds one to its depth, and
// a release while the depth is above one takes one off. Neither changes
// who holds the lock, so the checkers see one hold, from the first grant
// to the release that brings the depth to zero (or a crash). A lock that
// is not re-entrant never grants its holder twice, so nothing is dropped
// from its history. pairs is returned as it is when it has no re-entry.
func withoutReentry(pairs []pair) []pair {
	type procKey struct {
		proc int
		key  string
	}
	var depth map[procKey]int
	var out []pair
	for i, pr := range pairs {
		inv := pr.Invoke
		k := procKey{inv.Process, inv.Key}
		inner := false
		switch inv.F {
		case history.FAcquire:
			if pr.Type() == history.OK {
				if depth == nil {
					depth = make(map[procKey]int)
				}
				inner = depth[k] > 0
				depth[k]++
			}
		case history.FRelease:
			if d := depth[k]; d > 1 {
				inner = true
				depth[k] = d - 1
			} else if d == 1 {
				delete(depth, k)
			}
		case history.FCrash:
			for pk := range depth {
				if pk.proc == inv.Process {
					delete(depth, pk)
				}
			}
		}
		if inner && out == nil {
			out = slices.Clone(pairs[:i])
		} else if !inner && out != nil {
			out = append(out, pr)
		}
	}
	if out == nil {
		return pairs
	}
	return out
}

// check runs c on a, through the shared analysis when c supports it.
func check(ctx context.Context, c Checker, a *analysis) Result {
	if an, ok := c.(analyzer); ok {
		return an.checkAnalysis(ctx, a)
	}
	return c.Check(ctx, a.h)
}

// getFaults returns the history's faults, sorted by start.
func (a *analysis) getFaults() []history.Fault {
	a.faultsOnce.Do(func() {
		a.faults = a.h.Faults()
		sort.SliceStable(a.faults, func(i, j int) bool { return a.faults[i].Start < a.faults[j].Start })
	})
	return a.faults
}

// endKind says what ended a hold.
type endKind uint8

const (
	endRelease endKind = iota // the holder invoked a release
	endCrash                  // the holder was retired
	endHistory                // the history ended first
)

// hold is the interval in which a process believed it held a lock: from the
// completion of its acquire ok to its next release invoke or crash invoke, or
// the end of the history.
type hold struct {
	key        string
	proc       int
	start, end time.Duration
	// acquire is the index in the history of the acquire ok.
	acquire int
	// endOp is the index of the release or crash invoke that ended the
	// hold, -1 when the history ended first.
	endOp   int
	endKind endKind
	token   int64
	owner   string
	// nodes are the lock nodes that granted it, when the design says
	// (RedLock's majority).
	nodes []string
}

// getHolds returns every hold interval, in order of grant. It needs pairs.
func (a *analysis) getHolds() []hold {
	a.holdsOnce.Do(func() {
		n := 0
		for _, pr := range a.pairs {
			if pr.Invoke.F == history.FAcquire && pr.Type() == history.OK {
				n++
			}
		}
		a.holds = make([]hold, 0, n)
		open := make(map[int][]int) // process -> indices of open holds
		closeHolds := func(p int, key string, at time.Duration, op int, kind endKind) {
			keep := open[p][:0]
			for _, i := range open[p] {
				if key != "" && a.holds[i].key != key {
					keep = append(keep, i)
					continue
				}
				a.holds[i].end, a.holds[i].endOp, a.holds[i].endKind = at, op, kind
			}
			if len(keep) == 0 {
				delete(open, p)
			} else {
				open[p] = keep
			}
		}
		for _, pr := range a.pairs {
			inv := pr.Invoke
			switch inv.F {
			case history.FAcquire:
				if pr.Type() != history.OK {
					continue
				}
				hd := hold{key: inv.Key, proc: inv.Process, start: pr.Complete.Time,
					acquire: pr.Complete.Index, endOp: -1, endKind: endHistory, end: a.end}
				if v := pr.Value(); v != nil {
					hd.token, hd.owner, hd.nodes = v.Token, v.Owner, v.Ext().Nodes
				}
				open[inv.Process] = append(open[inv.Process], len(a.holds))
				a.holds = append(a.holds, hd)
			case history.FRelease:
				closeHolds(inv.Process, inv.Key, inv.Time, inv.Index, endRelease)
			case history.FCrash:
				closeHolds(inv.Process, "", inv.Time, inv.Index, endCrash)
			}
		}
		sort.SliceStable(a.holds, func(i, j int) bool { return a.holds[i].start < a.holds[j].start })
	})
	return a.holds
}
