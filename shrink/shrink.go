// Package shrink cuts a failing run down to its smallest reproducer: it
// proposes smaller cases (fewer faults, a random fault turned into the
// event trigger that preceded it, fewer workers and keys, shorter faults
// and runs), tries each a number of times through a Tester, and keeps each
// one whose anomaly recurs at the rate asked for (delta debugging, greedy:
// the first smaller case that holds becomes the case to shrink next).
//
// shrink may import history and schedule; it runs nothing itself: the
// Tester (cmd/check's, over `check run` subprocesses) does.
package shrink

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/schedule"
)

// Case is what one candidate runs: its faults, workers, keys and time; the
// rest of the test map stays the original's.
type Case struct {
	Faults  []schedule.Fault
	Workers int
	Keys    int
	Time    time.Duration
}

// Args returns c as `check run` flags.
func (c Case) Args() []string {
	return []string{"--nemesis", schedule.Join(c.Faults), "--workers", strconv.Itoa(c.Workers),
		"--keys", strconv.Itoa(c.Keys), "--time", c.Time.String()}
}

// Trial is what a Tester found of a case: in how many runs the anomaly
// recurred (Hits), of how many that ended with a verdict (Runs), and the
// median time from a run's start to its first anomaly among the hits.
type Trial struct {
	Hits, Runs   int
	FirstAnomaly time.Duration
}

// Tester runs c up to count times and says how often the anomaly recurred.
// It may stop early once c cannot reach need hits.
type Tester func(ctx context.Context, c Case, count, need int) (Trial, error)

// Options bound a shrink.
type Options struct {
	// Count is how many runs a candidate gets; Need how many of them must
	// show the anomaly for it to be kept.
	Count, Need int
	// Budget bounds the whole search; past it Shrink returns the smallest
	// case kept so far.
	Budget time.Duration
	// Lease is the design's lease, for the sentence.
	Lease time.Duration
	// Progress gets one line per candidate tried (nil: none).
	Progress io.Writer
}

// Hints are what the original run says about where to look.
type Hints struct {
	// Culprit is the index of the fault most likely to have caused the
	// first anomaly (the last to start before it), -1 for none known.
	Culprit int
	// Triggered maps a random fault's index to the event trigger that
	// preceded it in the original run (see EventTriggers).
	Triggered map[int]schedule.Fault
	// FirstAnomaly is when the original's first anomaly came, from the
	// workload's start; 0 when unknown.
	FirstAnomaly time.Duration
}

// Result is the smallest case kept, and how the search went.
type Result struct {
	Best  Case
	Trial Trial
	// Tried counts the candidates run; Kept how many were kept.
	Tried, Kept int
	// Stopped says why the search stopped early ("" when no smaller case
	// held any more).
	Stopped string
}

// Shrink cuts start down while tester keeps finding its anomaly at
// opt.Need of opt.Count. base is start's trial when the caller has one (a
// zero Trial: start is taken as failing, as the original run did).
func Shrink(ctx context.Context, start Case, base Trial, hints Hints, test Tester, opt Options) (Result, error) {
	res := Result{Best: start, Trial: base}
	deadline := time.Now().Add(opt.Budget)
	tctx := ctx
	if opt.Budget > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	tried := make(map[string]bool)
	var dropped []Case
	for {
		kept := false
		for _, cand := range Candidates(res.Best, res.Trial, hints) {
			key := strings.Join(cand.Case.Args(), " ")
			if tried[key] || covered(cand.Case, dropped) {
				continue
			}
			tried[key] = true
			if opt.Budget > 0 && time.Now().After(deadline) {
				res.Stopped = fmt.Sprintf("the budget of %s ran out", opt.Budget)
				return res, nil
			}
			if err := ctx.Err(); err != nil {
				res.Stopped = "interrupted"
				return res, err
			}
			tr, err := test(tctx, cand.Case, opt.Count, opt.Need)
			if err != nil {
				return res, err
			}
			res.Tried++
			ok := tr.Hits >= opt.Need
			if opt.Progress != nil {
				verdict := "dropped"
				if ok {
					verdict = "kept"
				}
				fmt.Fprintf(opt.Progress, "shrink: %d. %s: %d of %d: %s\n", res.Tried, cand.What, tr.Hits, tr.Runs, verdict)
			}
			if !ok {
				dropped = append(dropped, cand.Case)
				continue
			}
			res.Best, res.Trial, kept = cand.Case, tr, true
			res.Kept++
			hints = cand.Hints
			break
		}
		if !kept {
			return res, nil
		}
	}
}

// covered reports whether a case with c's faults and keys, and as many
// workers and as much time or more, was dropped already: fewer workers and
// less time do not bring back an anomaly that more did not show, so c is
// not worth its runs.
func covered(c Case, dropped []Case) bool {
	spec := schedule.Join(c.Faults)
	for _, d := range dropped {
		if schedule.Join(d.Faults) == spec && d.Keys == c.Keys && d.Workers >= c.Workers && d.Time >= c.Time {
			return true
		}
	}
	return false
}

// Candidate is one smaller case, what makes it smaller, and the hints that
// hold for it.
type Candidate struct {
	Case  Case
	What  string
	Hints Hints
}

// minDur is the shortest fault a halving proposes.
const minDur = 100 * time.Millisecond

// Candidates returns the cases one step smaller than c, the most
// promising first: no fault; the culprit alone; each fault left out; a
// random fault as the event trigger that preceded it; two workers; one
// key; one firing of a repeated fault; each fault at half its length; a
// shorter run.
func Candidates(c Case, tr Trial, h Hints) []Candidate {
	var out []Candidate
	add := func(what string, nc Case, nh Hints) { out = append(out, Candidate{Case: nc, What: what, Hints: nh}) }
	n := len(c.Faults)
	if n > 0 {
		nc := c
		nc.Faults = nil
		add("no fault", nc, Hints{Culprit: -1})
	}
	if n > 1 {
		order := make([]int, 0, n)
		if h.Culprit >= 0 && h.Culprit < n {
			order = append(order, h.Culprit)
		}
		for i := n - 1; i >= 0; i-- { // the later faults first: nearer the anomaly
			if i != h.Culprit {
				order = append(order, i)
			}
		}
		for _, i := range order {
			nc := c
			nc.Faults = []schedule.Fault{c.Faults[i]}
			add("only "+c.Faults[i].String(), nc, h.keep(i))
		}
		if n > 2 {
			for _, i := range order {
				nc := c
				nc.Faults = append(append([]schedule.Fault(nil), c.Faults[:i]...), c.Faults[i+1:]...)
				add("without "+c.Faults[i].String(), nc, h.drop(i))
			}
		}
	}
	for i, f := range c.Faults {
		if t, ok := h.Triggered[i]; ok {
			nc := c.with(i, t)
			nh := h
			nh.Triggered = without(h.Triggered, i)
			add(fmt.Sprintf("%s as %s", f, t), nc, nh)
		}
	}
	if c.Workers > 2 {
		nc := c
		nc.Workers = 2
		add("2 workers", nc, h)
	}
	if c.Keys > 1 {
		nc := c
		nc.Keys = 1
		add("1 key", nc, h)
	}
	for i, f := range c.Faults {
		if f.Repeat > 1 {
			g := f
			g.Repeat = 0
			add(fmt.Sprintf("%s once", f), c.with(i, g), h)
		}
	}
	for i, f := range c.Faults {
		if f.Duration == nil {
			continue
		}
		d := f.Duration.Of(0) // the absolute part: a lease-relative one is not halved
		if f.Duration.Leases != 0 || d/2 < minDur {
			continue
		}
		g := f
		half := schedule.Dur{Abs: (d / 2).Round(time.Millisecond)}
		g.Duration = &half
		add(fmt.Sprintf("%s for %s", f, half), c.with(i, g), h)
	}
	if t := shorter(c, tr); t > 0 {
		nc := c
		nc.Time = t
		add("--time "+t.String(), nc, h)
	}
	return out
}

// shorter returns a --time shorter than c's that still fits every fault
// and twice the median time to the first anomaly, 0 when there is none.
func shorter(c Case, tr Trial) time.Duration {
	if tr.FirstAnomaly <= 0 {
		return 0
	}
	need := 2*tr.FirstAnomaly + 2*time.Second
	for _, f := range c.Faults {
		if f.Trigger.Event == schedule.EventAt && f.Duration != nil {
			need = max(need, f.Trigger.Offset.Of(0)+f.Duration.Of(0)+2*time.Second)
		}
	}
	need = need.Round(time.Second)
	if need >= c.Time*3/4 {
		return 0
	}
	return need
}

// with returns c with fault i replaced by f.
func (c Case) with(i int, f schedule.Fault) Case {
	nc := c
	nc.Faults = append([]schedule.Fault(nil), c.Faults...)
	nc.Faults[i] = f
	return nc
}

// keep returns the hints of the case that keeps fault i alone.
func (h Hints) keep(i int) Hints {
	nh := Hints{Culprit: 0, FirstAnomaly: h.FirstAnomaly}
	if t, ok := h.Triggered[i]; ok {
		nh.Triggered = map[int]schedule.Fault{0: t}
	}
	return nh
}

// drop returns the hints of the case without fault i.
func (h Hints) drop(i int) Hints {
	nh := Hints{Culprit: -1, FirstAnomaly: h.FirstAnomaly, Triggered: map[int]schedule.Fault{}}
	switch {
	case h.Culprit > i:
		nh.Culprit = h.Culprit - 1
	case h.Culprit < i:
		nh.Culprit = h.Culprit
	}
	for j, t := range h.Triggered {
		switch {
		case j < i:
			nh.Triggered[j] = t
		case j > i:
			nh.Triggered[j-1] = t
		}
	}
	return nh
}

// without returns m without key i.
func without(m map[int]schedule.Fault, i int) map[int]schedule.Fault {
	out := make(map[int]schedule.Fault, len(m))
	for k, v := range m {
		if k != i {
			out[k] = v
		}
	}
	return out
}
