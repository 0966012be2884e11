package shrink

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/schedule"
)

// FromRecord returns the case a stored run's schedule makes, with the
// hints its history gives: the culprit (the last fault in force at or
// before the first anomaly, at firstAnomaly on the history's clock; 0 for
// unknown) and, for each random fault, the event trigger that preceded it
// (see EventTrigger).
func FromRecord(rec schedule.Record, h history.History, workers, keys int, runTime, firstAnomaly time.Duration) (Case, Hints) {
	c := Case{Faults: rec.Replay(), Workers: workers, Keys: keys, Time: runTime}
	hints := Hints{Culprit: -1, Triggered: map[int]schedule.Fault{}, FirstAnomaly: firstAnomaly}
	var latest time.Duration = -1
	for i, a := range rec.Faults {
		for _, f := range a.Fired {
			if f.Error == "" && (firstAnomaly <= 0 || f.InForce <= firstAnomaly) && f.InForce > latest {
				latest, hints.Culprit = f.InForce, i
			}
		}
		if !a.Random || len(a.Fired) != 1 {
			continue
		}
		if t, ok := EventTrigger(h, a.Fault, a.Fired[0]); ok {
			hints.Triggered[i] = t
		}
	}
	return c, hints
}

// EventTrigger returns the event trigger that preceded a random fault's
// firing f in history h: the grant of the holder it struck (the latest
// grant of any process, for a fault on a lock node), and the fault's
// offset from it, so that a replay strikes at the same point of a hold
// instead of the same time of the run.
func EventTrigger(h history.History, fault schedule.Fault, f schedule.Fired) (schedule.Fault, bool) {
	if f.Start < 0 || f.Start >= len(h) || f.Error != "" {
		return schedule.Fault{}, false
	}
	start := h[f.Start]
	target := -1
	if ts := start.Value.Ext().Targets; len(ts) == 1 {
		target = ts[0]
	}
	hit := history.HitOf(&start)
	for i := f.Start - 1; i >= 0; i-- {
		op := h[i]
		if op.F != history.FAcquire || op.Type != history.OK {
			continue
		}
		if target >= 0 && (op.Process != target || hit != nil && hit.Key != "" && op.Key != hit.Key) {
			continue
		}
		t := fault
		t.Trigger = schedule.Trigger{Event: schedule.EventGrant, Offset: schedule.Dur{Abs: (start.Time - op.Time).Round(time.Millisecond)}}
		return t, true
	}
	return schedule.Fault{}, false
}

// Sentence says c in one line, with its rate: "one pause of the holder
// 5 ms after its grant, for lease + 1s, 2 workers: double-holder in 10 of
// 10".
func Sentence(c Case, tr Trial, kind string, lease time.Duration) string {
	var parts []string
	if len(c.Faults) == 0 {
		parts = append(parts, "no fault")
	}
	for _, f := range c.Faults {
		parts = append(parts, faultWords(f, lease))
	}
	s := strings.Join(parts, ", then ")
	s += fmt.Sprintf(", %d workers", c.Workers)
	if c.Keys > 1 {
		s += fmt.Sprintf(", %d keys", c.Keys)
	}
	return fmt.Sprintf("%s: %s in %d of %d", s, kind, tr.Hits, tr.Runs)
}

// faultWords says one fault: "one pause of the holder 5ms after its grant,
// for lease + 1s".
func faultWords(f schedule.Fault, lease time.Duration) string {
	times := "one"
	if f.Repeat > 1 {
		times = fmt.Sprintf("%d", f.Repeat)
	}
	s := fmt.Sprintf("%s %s", times, f.Kind)
	tr := f.Trigger
	off := tr.Offset.String()
	switch tr.Event {
	case schedule.EventAt:
		s += fmt.Sprintf(" %s into the run", off)
	case schedule.EventGrant:
		s += " of the holder " + after(off, "its grant")
	case schedule.EventCS:
		s += " of the holder " + after(off, "it entered its critical section")
	case schedule.EventRelease:
		s += " of the holder " + after(off, "it began its release")
	case schedule.EventRival:
		s += " of the holder " + after(off, "a rival asked for its lock")
	case schedule.EventQueued:
		s += " of a waiter " + after(off, "it asked for a lock another held")
	case schedule.EventServerRelease:
		s += " of the holder " + after(off, "the server let its lock go")
	case schedule.EventLeaseLeft:
		s += fmt.Sprintf(" of the holder with less than %s of its lease left", tr.Below)
	}
	if f.Duration != nil {
		s += ", for " + leaseWords(*f.Duration, lease)
	}
	return s
}

// after says "5ms after X", or "as X" for no offset.
func after(off, what string) string {
	if off == "0s" {
		return "as " + strings.Replace(what, "its grant", "it was granted the lock", 1)
	}
	return off + " after " + what
}

// leaseWords says d against lease: "lease + 500ms" for a d 500 ms longer.
func leaseWords(d schedule.Dur, lease time.Duration) string {
	if d.Leases != 0 || lease <= 0 {
		return strings.NewReplacer("+", " + ", "-", " - ").Replace(d.String())
	}
	abs := d.Of(lease)
	switch {
	case abs > lease:
		return fmt.Sprintf("%s (lease + %s)", abs, abs-lease)
	case abs < lease:
		return fmt.Sprintf("%s (lease - %s)", abs, lease-abs)
	}
	return fmt.Sprintf("%s (the lease)", abs)
}
