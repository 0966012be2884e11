package schedule

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/suggest"
	"github.com/lockcheck/lockcheck/nemesis"
)

// The events a fault can be bound to. Each names whose lock it concerns:
// the fault's target is that lock's holder (for at, the nemesis picks its
// target itself, as a timed fault does).
const (
	// EventAt is the workload's start: at+5s fires five seconds in. A
	// fault spelled with a bare duration (kill@5s) means at+5s.
	EventAt = "at"
	// EventGrant is an acquire that completed ok.
	EventGrant = "grant"
	// EventMajorityGrant is a grant recorded on just a majority of the
	// lock nodes (a quorum lock's holder with no node to spare: RedLock
	// granted on three of five masters). A grant whose op names no nodes
	// is none.
	EventMajorityGrant = "majority-grant"
	// EventCS is a holder entering its critical section: sent it, or,
	// from a worker that begins it on its own once granted, its grant read.
	EventCS = "cs"
	// EventRelease is a holder's release invoked.
	EventRelease = "release"
	// EventAcquire is an acquire invoked; the target is the process that
	// asks (reply-loss@acquire loses the reply to that very acquire).
	EventAcquire = "acquire"
	// EventRival is an acquire invoked on a lock another process holds;
	// the target is the holder, not the rival.
	EventRival = "rival"
	// EventQueued is the same acquire seen from the other side: the
	// target is the process that asks, which waits in line behind the
	// holder (a queue lock's waiter, whose own session may end while it
	// waits).
	EventQueued = "queued"
	// EventServerRelease is the lock service letting a lock go while its
	// holder, by the history, still held it and had not begun its release
	// (an observer saw its key expire, its session or lease end, another
	// client delete it); the target is that holder.
	EventServerRelease = "server-release"
	// EventFailpoint is a worker stopped at the run's armed failpoint
	// (--failpoint), as its client reported; the target is that worker.
	EventFailpoint = "failpoint"
	// EventPromotion is a failover's promotion: its start op completed
	// with a replica promoted (or a Redis Cluster replica's takeover); the
	// target is the holder left with the old master, -1 for none.
	EventPromotion = "promotion"
	// EventWrite is a holder's critical section sending its write, as
	// its worker reported (the write mark); the target is that holder.
	EventWrite = history.MarkWrite
	// EventRenewal is a lease renewal of a holder's lock client (a
	// watchdog's renewal sent, an etcd keepalive's reply), as its worker
	// reported (the renewal mark), while the history has it hold a lock;
	// the target is that holder.
	EventRenewal = history.MarkRenewal
	// EventLeaseLeft is a holder's lease falling below a bound
	// (lease-left<200ms), counted from the invocation of its acquire (the
	// earliest its lease could have begun).
	EventLeaseLeft = "lease-left"
)

// WorkerReports returns the marks faults' triggers name (EventWrite,
// EventRenewal, history.Marks): what the run asks its workers to report
// (workloads.Config.Report).
func WorkerReports(faults []Fault) []string {
	var out []string
	for _, f := range faults {
		if slices.Contains(history.Marks(), f.Trigger.Event) && !slices.Contains(out, f.Trigger.Event) {
			out = append(out, f.Trigger.Event)
		}
	}
	return out
}

// AtInvocation reports whether one of faults is bound to event (an
// invocation: cs, release, acquire, rival) with no offset, for lease: the
// engine starts such a fault on the goroutine that records the
// invocation, before the request leaves for the worker, so the controller
// must send that request itself for the fault to be in force when the
// worker begins the op.
func AtInvocation(faults []Fault, event string, lease time.Duration) bool {
	for _, f := range faults {
		if f.Trigger.Event == event && f.Trigger.Offset.Of(lease) == 0 {
			return true
		}
	}
	return false
}

// Event describes one event for `check list` and the docs.
type Event struct {
	Name    string
	Summary string
}

// Events returns the events a trigger can name, in the order the docs
// list them.
func Events() []Event {
	return []Event{
		{EventAt, "the workload's start (at+5s, or just 5s): a time trigger; the nemesis picks its target as a timed fault does"},
		{EventGrant, "an acquire completed ok; the target is the process granted the lock"},
		{EventMajorityGrant, "a grant recorded on just a majority of the lock nodes (RedLock granted on three of five masters: one node's loss leaves the key on a minority); the target is the process granted the lock"},
		{EventCS, "a holder entered its critical section: it was sent it, or its grant was read from a worker that begins it on its own; the target is that holder"},
		{EventWrite, "a holder's critical section sent its write, as its worker reported it (lockcheck's own workers, in the critical sections they run themselves); the target is that holder"},
		{EventRelease, "a holder's release was invoked; the target is that holder"},
		{EventAcquire, "an acquire was invoked; the target is the process that asks (with no offset the fault is in force before the request leaves)"},
		{EventRival, "an acquire was invoked on a lock another process holds; the target is the holder"},
		{EventQueued, "an acquire was invoked on a lock another process holds; the target is the process that asks, waiting in line (with no offset the fault is in force before the request leaves)"},
		{EventServerRelease, "the lock service let a lock go while its holder still held it and had not begun its release (its observer saw the key expire, the lease or session end, another client delete it); the target is that holder"},
		{EventRenewal, "a lease renewal of a worker's lock client, as the worker reported it (a watchdog sent one, a session's keepalive was answered) while the worker held a lock; the target is that holder"},
		{EventFailpoint, "a worker reported it stopped at the run's armed failpoint (--failpoint: between SETNX and PEXPIRE); the target is that worker"},
		{EventPromotion, "a failover (failover, failover-kill) saw a replica promoted; the target is a holder left with the old master (the unreplicated grant's, for failover-kill), else the nemesis picks"},
		{EventLeaseLeft + "<D", "a holder's lease has less than D left, counted from its acquire's invocation; the target is that holder"},
	}
}

// Trigger says when a fault fires: at the Nth event of its kind (of
// Process's, when set) after the workload started, then Offset later.
type Trigger struct {
	// Event is one of the Event* names.
	Event string `json:"event"`
	// Process, when set, counts only that process's events (acquire,
	// grant, majority-grant, cs, write, renewal, failpoint,
	// release, lease-left: the holder's; rival: the rival's).
	Process *int `json:"process,omitempty"`
	// Nth is which matching event fires the fault first (0 and 1: the
	// first); a repeated fault fires again at the next match after it
	// ended.
	Nth int `json:"nth,omitempty"`
	// Offset is how long after the event the fault starts.
	Offset Dur `json:"offset,omitzero"`
	// Below is lease-left's bound.
	Below Dur `json:"below,omitzero"`
}

// Fault is one fault of a schedule: a nemesis kind, when it fires, how long
// it is kept, and how many times it fires.
type Fault struct {
	// Kind is the nemesis kind (check list nemeses).
	Kind string `json:"kind"`
	// Trigger says when it fires.
	Trigger Trigger `json:"trigger"`
	// Duration is how long each firing is kept; nil is the run's
	// --nemesis-duration.
	Duration *Dur `json:"duration,omitempty"`
	// Repeat is how many times it fires (0 and 1: once).
	Repeat int `json:"repeat,omitempty"`
}

// Limits of the numbers a fault names.
const (
	maxNth    = 1_000_000
	maxRepeat = 1000
	maxProc   = 1_000_000
)

// times returns how many times f fires.
func (f Fault) times() int { return max(1, f.Repeat) }

// nth returns the first matching event that fires f, from 1.
func (f Fault) nth() int { return max(1, f.Trigger.Nth) }

// String returns f as Parse reads it: pause@grant+5ms:lease+1s.
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(f.Kind)
	b.WriteString("@")
	tr := f.Trigger
	b.WriteString(tr.Event)
	if tr.Event == EventLeaseLeft {
		b.WriteString("<" + tr.Below.String())
	}
	if tr.Process != nil {
		fmt.Fprintf(&b, "/p%d", *tr.Process)
	}
	if tr.Nth > 1 {
		fmt.Fprintf(&b, "#%d", tr.Nth)
	}
	if !tr.Offset.IsZero() || tr.Event == EventAt {
		b.WriteString("+" + tr.Offset.String())
	}
	if f.Duration != nil {
		b.WriteString(":" + f.Duration.String())
	}
	if f.Repeat > 1 {
		fmt.Fprintf(&b, "*%d", f.Repeat)
	}
	return b.String()
}

// Spec is a --nemesis value read: the kinds that fire at seeded random
// times (the plain names) and the faults bound to events or times.
type Spec struct {
	// Timed are the kinds named without a trigger, in order, each once.
	Timed []nemesis.Kind
	// Faults are the faults with a trigger.
	Faults []Fault
	// Kinds are every kind the spec names, timed or triggered, each once:
	// what the run must set up for.
	Kinds []nemesis.Kind
}

// Parse reads a --nemesis value: "none", or a comma-separated list whose
// items are a nemesis kind (fired at seeded random times, as ever) or a
// triggered fault:
//
//	KIND@EVENT[/pN][#N][+OFFSET][:DURATION][*REPEAT]
//
// pause@grant+5ms:lease+1s pauses the next holder 5 ms after its grant for
// a lease and a second; partition@cs#3:2s cuts off the third holder to
// enter its critical section for 2 s; kill@5s:3s kills a node 5 s into the
// workload. Durations are Go durations or relative to the lease (lease,
// 2xlease, lease-200ms). Each mistake is one error naming the item.
func Parse(spec string) (Spec, error) {
	var out Spec
	if spec == "" || spec == "none" {
		return out, nil
	}
	var plain []string
	seen := make(map[string]bool)
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if !strings.Contains(item, "@") {
			plain = append(plain, item)
			continue
		}
		f, err := ParseFault(item)
		if err != nil {
			return Spec{}, err
		}
		out.Faults = append(out.Faults, f)
	}
	if len(plain) > 0 {
		ks, err := nemesis.Parse(strings.Join(plain, ","))
		if err != nil {
			return Spec{}, err
		}
		out.Timed = ks
	}
	for _, p := range plain {
		if p == "none" && len(out.Faults) > 0 {
			return Spec{}, fmt.Errorf("--nemesis %s: none (no faults) cannot be combined with other faults", spec)
		}
	}
	for _, k := range out.Timed {
		seen[k.Name] = true
		out.Kinds = append(out.Kinds, k)
	}
	for _, f := range out.Faults {
		if seen[f.Kind] {
			continue
		}
		seen[f.Kind] = true
		ks, err := nemesis.Parse(f.Kind)
		if err != nil {
			return Spec{}, err
		}
		out.Kinds = append(out.Kinds, ks...)
	}
	return out, nil
}

// ParseFault reads one triggered fault, KIND@EVENT[/pN][#N][+OFFSET]
// [:DURATION][*REPEAT] (see Parse). Its error names the item and the part
// that is wrong.
func ParseFault(item string) (Fault, error) {
	f, err := parseFault(item)
	if err != nil {
		return Fault{}, fmt.Errorf("fault %q: %w", item, err)
	}
	return f, nil
}

func parseFault(item string) (Fault, error) {
	kind, rest, ok := strings.Cut(item, "@")
	if !ok || kind == "" {
		return Fault{}, errors.New("want KIND@EVENT, such as pause@grant+5ms:lease+1s")
	}
	ks, err := nemesis.Parse(kind)
	if err != nil {
		return Fault{}, err
	}
	if len(ks) != 1 {
		return Fault{}, fmt.Errorf("%q: want one nemesis kind before @", kind)
	}
	f := Fault{Kind: ks[0].Name}
	if i := strings.LastIndex(rest, "*"); i >= 0 {
		n, err := strconv.Atoi(rest[i+1:])
		if err != nil || n < 1 || n > maxRepeat {
			return Fault{}, fmt.Errorf("repeat %q: want *N, 1 <= N <= %d", rest[i:], maxRepeat)
		}
		f.Repeat, rest = n, rest[:i]
	}
	trig, dur, hasDur := strings.Cut(rest, ":")
	if hasDur {
		d, err := ParseDur(dur)
		if err != nil {
			return Fault{}, err
		}
		f.Duration = &d
	}
	f.Trigger, err = parseTrigger(trig)
	return f, err
}

// parseTrigger reads EVENT[/pN][#N][+OFFSET], or a bare duration (at+D).
func parseTrigger(s string) (Trigger, error) {
	end := strings.IndexAny(s, "/#+")
	if end < 0 {
		end = len(s)
	}
	ev, rest := s[:end], s[end:]
	var t Trigger
	if d, err := time.ParseDuration(ev); err == nil && ev != "" {
		if rest != "" {
			return Trigger{}, fmt.Errorf("%q after the time %s: a time trigger takes no /p, # or offset", rest, ev)
		}
		if d < 0 || d > maxDur {
			return Trigger{}, fmt.Errorf("time %s: want 0 to %s", ev, shortDur(maxDur))
		}
		return Trigger{Event: EventAt, Offset: Dur{Abs: d}}, nil
	}
	if b, ok := strings.CutPrefix(ev, EventLeaseLeft+"<"); ok {
		d, err := ParseDur(b)
		if err != nil {
			return Trigger{}, fmt.Errorf("lease-left bound: %w", err)
		}
		if d.IsZero() {
			return Trigger{}, errors.New("lease-left bound: want more than 0 (lease-left<200ms)")
		}
		t.Event, t.Below = EventLeaseLeft, d
	} else {
		if err := knownEvent(ev); err != nil {
			return Trigger{}, err
		}
		t.Event = ev
	}
	for rest != "" {
		switch rest[0] {
		case '/':
			if t.Process != nil {
				return Trigger{}, errors.New("/p given twice")
			}
			j := strings.IndexAny(rest[1:], "/#+") + 1
			if j == 0 {
				j = len(rest)
			}
			n, err := strconv.Atoi(strings.TrimPrefix(rest[1:j], "p"))
			if !strings.HasPrefix(rest[1:j], "p") || err != nil || n < 0 || n > maxProc {
				return Trigger{}, fmt.Errorf("process %q: want /pN, a process id such as /p3", rest[:j])
			}
			t.Process, rest = &n, rest[j:]
		case '#':
			if t.Nth != 0 {
				return Trigger{}, errors.New("#N given twice")
			}
			j := strings.IndexAny(rest[1:], "/#+") + 1
			if j == 0 {
				j = len(rest)
			}
			n, err := strconv.Atoi(rest[1:j])
			if err != nil || n < 1 || n > maxNth {
				return Trigger{}, fmt.Errorf("%q: want #N, the Nth such event, 1 <= N <= %d", rest[:j], maxNth)
			}
			t.Nth, rest = n, rest[j:]
		case '+':
			d, err := ParseDur(rest[1:])
			if err != nil {
				return Trigger{}, fmt.Errorf("offset: %w", err)
			}
			t.Offset, rest = d, ""
		}
	}
	if t.Event == EventAt && (t.Process != nil || t.Nth != 0) {
		return Trigger{}, errors.New("at is the workload's start: it takes no /p or #")
	}
	return t, nil
}

// knownEvent returns nil for an event name a trigger takes.
func knownEvent(ev string) error {
	var names []string
	for _, e := range Events() {
		name, _, _ := strings.Cut(e.Name, "<")
		if name == ev && ev != EventLeaseLeft {
			return nil
		}
		names = append(names, e.Name)
	}
	if ev == EventLeaseLeft {
		return errors.New("lease-left needs a bound: lease-left<200ms")
	}
	return suggest.Unknown("event", ev, names)
}
