package history

import (
	"fmt"
	"strings"
	"time"
)

// Type is the kind of an Op: an invocation or one of three completions.
type Type string

// The four op types. Every Invoke is followed by exactly one OK, Fail or Info
// for the same process.
const (
	Invoke Type = "invoke"
	OK     Type = "ok"
	Fail   Type = "fail"
	Info   Type = "info"
)

// Valid reports whether t is one of the four known types.
func (t Type) Valid() bool {
	switch t {
	case Invoke, OK, Fail, Info:
		return true
	}
	return false
}

// NemesisProcess is the process id of nemesis operations.
const NemesisProcess = -1

// Operation names (Op.F) used by the built-in workloads and the controller.
const (
	FAcquire = "acquire" // take the lock named by Key
	FRelease = "release" // give the lock back
	FCS      = "cs"      // critical section: read-modify-write on the protected resource
	FCrash   = "crash"   // the controller retired the process (killed its worker)
	// FEvent is something a worker's lock client reported on its own, such
	// as a ZooKeeper session event. It is a lone info op with no invocation
	// and no effect; Pairs skips it.
	FEvent = "event"
	// EventFailpointPrefix starts the detail of the FEvent a worker
	// reports when it stops at an armed failpoint ("failpoint NAME:
	// where"); it is not an op name.
	EventFailpointPrefix = "failpoint "
	// EventWritePrefix and EventRenewalPrefix start the detail of the
	// marks a worker reports, when asked (workloads.Config.Report), so
	// that a fault can fire at them: a critical section's write sent
	// ("write sent: k0 (token 3)"), a lease renewal of its lock client
	// ("renewal sent: k0 (owner ...)"). A mark says nothing of the lock's
	// state (IsMark).
	EventWritePrefix   = "write sent: "
	EventRenewalPrefix = "renewal sent: "
	// FSeed and FFinal are the controller's own ops on the inventory
	// workload's stock, recorded with the nemesis process id (neither is
	// a worker's op): FSeed set a key's initial stock (Value.Wrote) before
	// the workers started, FFinal read it (Value.Read) after they all
	// stopped. They let a checker judge the stock from the history alone.
	FSeed  = "seed"
	FFinal = "final"
	// FServerExit is the controller's record that a server of the run
	// left it while the workload ran with no fault asking for it: it
	// exited, or it stayed alive but stopped answering its health probe
	// (Value.Nodes names the server, Value.Detail says how).
	// Like FEvent it is a lone info op, here of the nemesis process; the
	// run ended there, and a checker calls a history with one undecided
	// unless it found an anomaly.
	FServerExit = "server-exit"
)

// IsLone reports whether op is a lone info op with no invocation (FEvent,
// FServerExit, FServerRelease): not an operation, so Pairs skips it.
func (op *Op) IsLone() bool {
	return op.Type == Info && (op.F == FEvent || op.F == FServerExit || op.F == FServerRelease)
}

// MarkWrite and MarkRenewal name the marks, as a fault's trigger and a
// worker's configuration (workloads.Config.Report) spell them.
const (
	MarkWrite   = "write"
	MarkRenewal = "renewal"
)

// markPrefixes gives each mark's name by the prefix of its details.
var markPrefixes = []struct{ prefix, name string }{
	{EventWritePrefix, MarkWrite},
	{EventRenewalPrefix, MarkRenewal},
}

// MarkName returns the name of the mark (MarkWrite, MarkRenewal) whose
// event has detail, or "" when detail is not a mark's.
func MarkName(detail string) string {
	for _, m := range markPrefixes {
		if strings.HasPrefix(detail, m.prefix) {
			return m.name
		}
	}
	return ""
}

// Marks returns the names of the marks (MarkWrite, MarkRenewal).
func Marks() []string {
	out := make([]string, len(markPrefixes))
	for i, m := range markPrefixes {
		out[i] = m.name
	}
	return out
}

// IsMark reports whether op is a worker's mark (MarkName): an event
// reported only so that a fault can fire at it, which says nothing of
// whether the lock is held, lost or reconnected.
func (op *Op) IsMark() bool {
	return op.F == FEvent && op.Value != nil && op.Value.Extra != nil && MarkName(op.Value.Extra.Detail) != ""
}

// Op is one entry of a history.
type Op struct {
	// Index is the position of the op in the history, from 0.
	Index int `json:"index"`
	// Time is the controller's monotonic time since the test started.
	Time time.Duration `json:"time"`
	// Process is the logical worker id; NemesisProcess for nemesis ops and
	// for the controller's own ops (FSeed, FFinal).
	Process int `json:"process"`
	// Type says whether this is an invocation or a completion.
	Type Type `json:"type"`
	// F names the operation: acquire, release, cs, crash, or a nemesis fault.
	F string `json:"f"`
	// Key is the lock name; checkers partition on it.
	Key string `json:"key,omitempty"`
	// Value carries what the operation sent or observed.
	Value *Value `json:"value,omitempty"`
	// Error explains a fail or info completion.
	Error string `json:"error,omitempty"`
}

// Value carries an op's arguments and results. Fields that do not apply to an
// op are left empty and omitted from the JSON form.
//
// The fields most ops carry are Value's own; those few ops carry (a nemesis
// op's targets and detail, a refused access, what a server released) are in
// Extra, nil on the others, so that a long run's millions of values stay
// small. Read them with Ext, set them with Mut. In the JSON form the two
// are one object, as before.
type Value struct {
	// Token is the fencing token: granted by acquire, carried by cs.
	Token int64 `json:"token,omitempty"`
	// Owner is the unique value the lock client stored as the lock's owner.
	Owner string `json:"owner,omitempty"`
	// Read is the register value a critical section read.
	Read *int64 `json:"read,omitempty"`
	// Wrote is the register value a critical section wrote (or tried to).
	Wrote *int64 `json:"wrote,omitempty"`
	// Released reports, on a release ok, whether the lock key was still this
	// owner's and was deleted. False means the lock had already been lost.
	Released *bool `json:"released,omitempty"`
	// Extra holds the fields few ops carry; nil when none is set.
	*Extra
	// Backend is, on an acquire or release ok of a database session lock,
	// the server's id of the session (PostgreSQL backend pid, MariaDB
	// connection id) that ran its lock or unlock statement. Behind a
	// connection pooler in transaction mode it may change from one
	// statement to the next.
	Backend int64 `json:"backend,omitempty"`
}

// Extra holds the fields of a Value that few ops carry. Values may share
// one (a Redis observer's every plain deletion on a node does): Mut sets a
// field only of a value whose Extra its caller made; to change another's,
// set v.Extra to a changed copy of v.Ext().
type Extra struct {
	// Rejected is set on a cs fail when the fenced resource refused a stale
	// token; it names the access that was refused ("read" or "write").
	Rejected string `json:"rejected,omitempty"`
	// MaxToken is the highest token the resource had accepted when it refused.
	MaxToken int64 `json:"max_token,omitempty"`
	// DeletedOwner is, on a release ok, the owner value of the key the release
	// deleted, when the lock design deletes without checking (plain DEL).
	DeletedOwner string `json:"deleted_owner,omitempty"`
	// Targets are the processes a nemesis op acted on.
	Targets []int `json:"targets,omitempty"`
	// Nodes are the cluster nodes a nemesis op acted on; on an acquire ok of
	// a design that asks several nodes (RedLock), the nodes that granted it,
	// and on its release ok, the nodes that still held the key and deleted it.
	Nodes []string `json:"nodes,omitempty"`
	// Duration is how long a nemesis fault is meant to last.
	Duration time.Duration `json:"duration,omitempty"`
	// Detail is free text: what a nemesis did, or an event a worker reported.
	Detail string `json:"detail,omitempty"`
	// Hit is, on a nemesis op, what the fault struck (see Hit).
	Hit *Hit `json:"hit,omitempty"`
	// Release is, on a server-release op, what the observer saw.
	Release *Release `json:"release,omitempty"`
	// Unheard marks an acquire or release whose request got no answer
	// while the application went on as if it had (it gave up after its
	// own timeout and reported the op done): the op's type is what the
	// application did, and its reply was lost all the same (Unheard).
	Unheard bool `json:"unheard,omitempty"`
	// Commands are, on a nemesis op against servers someone else runs,
	// the control commands the fault ran on them (their kill, start,
	// stop, continue), in the order they ran.
	Commands []Command `json:"commands,omitempty"`
}

// Command is a control command a fault ran: a line of the user's own
// (`docker kill redis0`), with its exit status and its output.
type Command struct {
	// Node is the server it acted on.
	Node string `json:"node"`
	// Word is what it was for: kill, start, stop, continue, restart.
	Word string `json:"word"`
	// Line is the shell line that ran, its placeholders filled in.
	Line string `json:"line"`
	// Exit is its exit status; -1 when it did not exit by itself (it
	// could not start, or ran past its timeout and was killed).
	Exit int `json:"exit"`
	// Output is the end of what it wrote to stdout and stderr.
	Output string `json:"output,omitempty"`
	// Took is how long it ran.
	Took time.Duration `json:"took"`
	// Error says why it failed, "" when it exited 0.
	Error string `json:"error,omitempty"`
	// Effect says what lockcheck saw of its effect on the server ("stopped
	// accepting connections after 0.2 s"), "" when it did not look.
	Effect string `json:"effect,omitempty"`
}

// Ext returns a copy of v's extra fields: all zero when it has none (or v
// is nil). A copy, so that nothing is set through it: Mut is for that.
func (v *Value) Ext() Extra {
	if v == nil || v.Extra == nil {
		return Extra{}
	}
	return *v.Extra
}

// Mut returns v's extra fields to set, adding them when v has none.
func (v *Value) Mut() *Extra {
	if v.Extra == nil {
		v.Extra = &Extra{}
	}
	return v.Extra
}

// Int64 returns a pointer to v, for Value.Read and Value.Wrote.
func Int64(v int64) *int64 { return &v }

// Bool returns a pointer to v, for Value.Released.
func Bool(v bool) *bool { return &v }

// IsNemesis reports whether op was performed by the nemesis.
func (op Op) IsNemesis() bool { return op.Process == NemesisProcess }

// String renders op in one short line, for logs and error messages.
func (op Op) String() string {
	s := fmt.Sprintf("%d %.3fs p%d %s %s", op.Index, op.Time.Seconds(), op.Process, op.Type, op.F)
	if op.Key != "" {
		s += " " + op.Key
	}
	if v := op.Value; v != nil {
		if v.Token != 0 {
			s += fmt.Sprintf(" token=%d", v.Token)
		}
		if v.Read != nil {
			s += fmt.Sprintf(" read=%d", *v.Read)
		}
		if v.Wrote != nil {
			s += fmt.Sprintf(" wrote=%d", *v.Wrote)
		}
		x := v.Ext()
		if x.Rejected != "" {
			s += " rejected=" + x.Rejected
		}
		if x.Detail != "" {
			s += " " + x.Detail
		}
	}
	if op.Error != "" {
		s += " error=" + op.Error
	}
	return s
}
