package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Validity is the three-way verdict of a check. The order of the constants
// is the composition priority: Valid < Unknown < Invalid.
type Validity int

// The three verdicts.
const (
	// Valid means the property held.
	Valid Validity = iota
	// Unknown means the check could not decide (a Porcupine timeout, a
	// malformed history, a cancelled context); it is never a pass.
	Unknown
	// Invalid means the property was violated.
	Invalid
)

// String returns "valid", "unknown" or "invalid".
func (v Validity) String() string {
	switch v {
	case Valid:
		return "valid"
	case Unknown:
		return "unknown"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("Validity(%d)", int(v))
}

// MarshalJSON encodes Valid as true, Invalid as false and Unknown as the
// string "unknown", as Jepsen does.
func (v Validity) MarshalJSON() ([]byte, error) {
	switch v {
	case Valid:
		return []byte("true"), nil
	case Invalid:
		return []byte("false"), nil
	case Unknown:
		return []byte(`"unknown"`), nil
	}
	return nil, fmt.Errorf("marshal validity: unknown value %d", int(v))
}

// UnmarshalJSON decodes true, false or "unknown".
func (v *Validity) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		*v = Valid
	case "false":
		*v = Invalid
	case `"unknown"`:
		*v = Unknown
	default:
		return fmt.Errorf("unmarshal validity: want true, false or \"unknown\", got %s", b)
	}
	return nil
}

// worse returns the higher-priority of two verdicts.
func worse(a, b Validity) Validity {
	if b > a {
		return b
	}
	return a
}

// Anomaly is one violation (or, with Fenced, one harmless near-violation)
// found in a history, with the story of how it happened.
type Anomaly struct {
	// Kind is one of double-holder, foreign-release, lost-update,
	// nonlinearizable, stale-write, token-order, stale-write-rejected,
	// no-grants, stuck-lock.
	Kind string `json:"kind"`
	// Key is the lock the anomaly concerns.
	Key string `json:"key,omitempty"`
	// Processes are the processes involved, the one that acted first first.
	Processes []int `json:"processes"`
	// Start and End bound the anomaly in time since the test started.
	Start time.Duration `json:"start"`
	End   time.Duration `json:"end"`
	// Ops are the history indices of the ops involved.
	Ops []int `json:"ops,omitempty"`
	// Nemesis describes the faults in force, e.g. "pause of process 3 from
	// 2.40 s to 5.40 s".
	Nemesis []string `json:"nemesis,omitempty"`
	// Fenced marks an anomaly made harmless by fencing: the run was fenced
	// and the resource refused the stale access.
	Fenced bool `json:"fenced,omitempty"`
	// Lost is, for a lost-update, how many writes it lost: one per
	// critical section that read a value another had already read (one
	// anomaly counts a whole setback of the register).
	Lost int `json:"lost,omitempty"`
	// Explanation tells the story in plain English, with times in seconds
	// and process numbers.
	Explanation string `json:"explanation"`
}

// Story is the anomaly as the terminal and the course tell it: its kind,
// whether fencing made it harmless, and its explanation ("[double-holder,
// fenced] processes 0 and 1 ...").
func (a Anomaly) Story() string {
	tag := a.Kind
	if a.Fenced {
		tag += ", fenced"
	}
	return "[" + tag + "] " + a.Explanation
}

// MarshalJSON encodes the anomaly with Processes as [] rather than null when
// empty.
func (a Anomaly) MarshalJSON() ([]byte, error) {
	type plain Anomaly
	p := plain(a)
	if p.Processes == nil {
		p.Processes = []int{}
	}
	return json.Marshal(p)
}

// Result is what a Checker reports.
type Result struct {
	// Checker names the checker that produced the result.
	Checker string `json:"checker"`
	// Valid is the verdict.
	Valid Validity `json:"valid"`
	// Advisory marks a result that is reported but does not decide the
	// verdict of a composition.
	Advisory bool `json:"advisory,omitempty"`
	// Anomalies lists what was found; it encodes as [] when empty.
	Anomalies []Anomaly `json:"anomalies"`
	// Incidents groups a composition's anomalies, one incident per
	// overlap (see Incidents); a single checker leaves it empty.
	Incidents []Incident `json:"incidents,omitempty"`
	// Stats holds plain JSON-friendly figures.
	Stats map[string]any `json:"stats,omitempty"`
	// Error says why a check could not decide (Unknown), or what went wrong.
	Error string `json:"error,omitempty"`
	// NotExercised is set when the exercise checker found that the run's
	// faults could not have produced the anomaly it looks for: the sentence
	// says why, and the verdict is Unknown (unless something is Invalid).
	// On a composition it is the exercise sub-result's.
	NotExercised string `json:"not_exercised,omitempty"`
	// NotUsed says why a checker had nothing of its own to judge in this
	// run, "" when it had: the fencing checker of a run whose resource
	// took no tokens sets it, for it checked only the order of the
	// grants' tokens, so its "valid" is no sign that fencing worked.
	NotUsed string `json:"not_used,omitempty"`
	// Panicked, when set, names a checker that panicked and what it
	// panicked with ("mutex: index out of range"). Its result is Unknown,
	// but a crash is no verdict: a run or analyze so checked is an error.
	// A composition carries the first of its sub-results'.
	Panicked string `json:"panicked,omitempty"`
	// Reached lists the danger conditions the history reached (the
	// conditions checker's; a composition carries its sub-result's).
	Reached []Reached `json:"reached,omitempty"`
	// Results are the sub-results of a composition.
	Results []Result `json:"results,omitempty"`
	// Visualize, set when a Porcupine check failed, writes Porcupine's HTML
	// visualization of the failing part of the history.
	Visualize func(w io.Writer) error `json:"-"`
}

// MarshalJSON encodes the result with Anomalies as [] rather than null when
// empty.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Anomalies == nil {
		p.Anomalies = []Anomaly{}
	}
	return json.Marshal(p)
}

// Checker decides one property of a history.
type Checker interface {
	// Name identifies the checker in results.
	Name() string
	// Check examines h and reports a verdict. It must not modify h.
	Check(ctx context.Context, h history.History) Result
}

// Options configure the built-in checkers.
type Options struct {
	// Fenced says the run used fencing tokens: a double holder is then
	// harmless when the resource refused the stale holder's accesses.
	Fenced bool
	// Timeout bounds the Porcupine search of one checker; 0 means 60 s. A
	// search that runs out of time makes the verdict Unknown.
	Timeout time.Duration
	// StuckBound is the liveness bound: a lock left without a holder for
	// longer than this while acquires failed is stuck. 0 disables the check.
	StuckBound time.Duration
	// Lease is the lock's lease, or its ZooKeeper session timeout. When set,
	// a story can say that a holder paused for longer lost it for certain.
	Lease time.Duration
	// Faulted says the run was given a nemesis: a history with no fault
	// ops is then not exercised (the nemesis never struck) rather than a
	// control run.
	Faulted bool
	// NoLock says the design under test takes no lock (an optimistic
	// transaction): its "holds" overlap by design, so Default leaves out
	// the mutual-exclusion checkers (mutex, overlap) and the resource and
	// inventory checkers alone judge the run.
	NoLock bool
	// Session, when set, says the lock lives as long as the holder's
	// database session: a holder stopped or cut off for longer than the
	// server's session timeout lost it when the server ended its session,
	// and a story says so instead of blaming a lease.
	Session *SessionTimeout
	// Server names the lock service's server as a story names it
	// ("ZooKeeper", "etcd"), for the session or lease its clients report;
	// "" leaves the story to say "its session".
	Server string
	// Tokens says what the design's fencing tokens are, so that a story
	// prints them in the form the lock's users know (a ZooKeeper zxid as
	// "zxid 1:797"); the zero value prints them as plain numbers.
	Tokens TokenKind
	// OneAtATime runs Default's checkers one after another instead of
	// side by side: a long run's check then holds one checker's working
	// memory at a time beside the history, at the cost of using one
	// processor. The verdict and anomalies are the same.
	OneAtATime bool
}

// TokenKind says what a lock design's fencing tokens are.
type TokenKind int

// The token kinds.
const (
	// NumberTokens are plain counters (a Redis INCR, an etcd revision),
	// printed as they are: "token 41".
	NumberTokens TokenKind = iota
	// ZxidTokens are ZooKeeper zxids (a lock node's czxid): the leader's
	// epoch in the high 32 bits and a counter within the epoch in the low
	// 32, printed as "zxid 1:797" (epoch:counter) for 4294968093.
	ZxidTokens
)

// SessionTimeout says how a database server gives up a client session
// that went silent, releasing every lock the session held.
type SessionTimeout struct {
	// Server names the server, e.g. "PostgreSQL".
	Server string
	// Settings names the server settings that bound a silent session,
	// e.g. "idle_session_timeout".
	Settings string
	// Timeout is how long the server waits on a silent session.
	Timeout time.Duration
}

// timeout returns the Porcupine budget.
func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 60 * time.Second
	}
	return o.Timeout
}

// maxListed caps the anomalies of one kind listed by one checker; all of them
// are counted in the checker's Stats.
const maxListed = 1000

// newResult returns a Valid result with an empty anomaly list.
func newResult(name string) Result {
	return Result{Checker: name, Valid: Valid, Anomalies: []Anomaly{}, Stats: map[string]any{}}
}

// malformed returns the Unknown result of a checker that could not read h.
func malformed(name string, err error) Result {
	r := newResult(name)
	r.Valid = Unknown
	r.Error = fmt.Sprintf("malformed history: %v", err)
	return r
}
