package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/lookups"
	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Nemesis applies one kind of fault.
type Nemesis interface {
	// Fs returns the names of the op that starts the fault and the op that
	// ends it, e.g. pause and resume.
	Fs() (start, end string)
	// Invoke applies the start or end op and returns it completed as info,
	// with what it acted on; a fault it could not apply has Error set.
	Invoke(ctx context.Context, op history.Op) history.Op
	// Heal undoes every fault this nemesis applied. It is idempotent.
	Heal(ctx context.Context) error
}

// Target is a worker the nemesis can act on.
type Target struct {
	// Process is the logical process id the worker serves.
	Process int
	// Slot is the worker slot; links and proxies belong to slots.
	Slot int
	// Pid is the worker's pid, which is also its process group id.
	Pid int
	// Key is the lock it holds ("" for a worker that holds none).
	Key string
	// ClockFile is the worker's client clock file (see workloads.Clock), ""
	// when the run gives workers none.
	ClockFile string
	// Failpoint is the failpoint the worker is stopped at right now (it
	// reported it and has not replied to that operation yet), "" for none.
	Failpoint string
	// InCS says the controller has sent the holder its critical section and
	// has not had the reply yet: it is inside it, or about to enter it.
	InCS bool
}

// Env is what a nemesis needs from the controller.
type Env interface {
	// Holders returns the workers that hold a lock right now, by slot.
	Holders() []Target
	// Workers returns every live worker, by slot; Key is set for holders.
	Workers() []Target
	// Cluster is the cluster under test.
	Cluster() clusters.Cluster
}

// Kind describes a nemesis for `check list` and builds it.
type Kind struct {
	Name    string
	Summary string
	New     func(env Env, rng *rand.Rand) (Nemesis, error)
	// ClockShim is set for a nemesis that moves lock servers' wall clocks:
	// the runner then starts the lock nodes under the clock shim.
	ClockShim bool
	// ClientClocks is set for a nemesis that moves workers' client clocks:
	// the runner then gives every worker slot a clock file.
	ClientClocks bool
	// Replicated is set for a nemesis that fails a master over to its
	// replicas: the runner then builds the Sentinel topology for a
	// single-master Redis design.
	Replicated bool
	// Ops, for a kind with op names of its own, are its start and end ops,
	// its class (the report's colour) and how the exercise checker judges
	// it (history.FaultOps); Register registers them with the history. A
	// kind that uses the ops of lockcheck's own faults (pause, kill, ...)
	// leaves it zero.
	Ops history.FaultOps
	// Exercise, when set, is how the exercise checker judges the kind's
	// faults (history.ExerciseRule: a shape of the checker's, the faults
	// of its start op that are the kind's, the sentence when none was
	// exercised); Register registers it, with the kind's name and, when F
	// is empty, Ops.Start. A kind without one is judged by Ops.Exercise's
	// shape, or not at all.
	Exercise *history.ExerciseRule
	// Words, when set, are what the stories say of the kind's faults
	// (history.FaultWords: its noun, how it let a second holder in);
	// Register registers them, under Ops.Start when F is empty. Kinds
	// that share a start op give them once.
	Words *history.FaultWords
}

// Kinds returns every known nemesis kind, sorted by name.
func Kinds() []Kind {
	ks := append([]Kind(nil), registered...)
	sort.Slice(ks, func(i, j int) bool { return ks[i].Name < ks[j].Name })
	return ks
}

// registered holds the kinds that register themselves from their own file.
var registered []Kind

// Register adds a kind to Kinds, and its ops (Kind.Ops), if any, to the
// history's fault ops; each nemesis file calls it from init, so adding a
// nemesis touches no shared list. A kind registered twice, or with no name
// or New, is a programming error and panics.
func Register(k Kind) {
	if k.Name == "" || k.New == nil {
		panic(fmt.Sprintf("nemesis: kind %q: name and New are required", k.Name))
	}
	for _, o := range Kinds() {
		if o.Name == k.Name {
			panic(fmt.Sprintf("nemesis: kind %q registered twice", k.Name))
		}
	}
	if k.Ops.Start != "" {
		history.RegisterFaultOps(k.Ops)
	}
	if k.Exercise != nil {
		r := *k.Exercise
		r.Nemesis = k.Name
		if r.F == "" {
			r.F = k.Ops.Start
		}
		history.RegisterExerciseRule(r)
	}
	if k.Words != nil {
		w := *k.Words
		if w.F == "" {
			w.F = k.Ops.Start
		}
		history.RegisterFaultWords(w)
	}
	registered = append(registered, k)
}

// register is Register, for the kinds of this package's own files.
func register(k Kind) { Register(k) }

// Parse turns a comma-separated --nemesis value into kinds. "none" or ""
// gives no kinds; none in a list (with other nemeses, or twice) is an
// error.
func Parse(spec string) ([]Kind, error) {
	lookups.Count("nemesis")
	if spec == "" || spec == "none" {
		return nil, nil
	}
	var out []Kind
	seen := make(map[string]bool)
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == "none" {
			return nil, fmt.Errorf("--nemesis %s: none (no faults) cannot be combined with other nemeses; give --nemesis none alone, or only the nemeses to combine", spec)
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		k, err := findKind(name)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

func findKind(name string) (Kind, error) {
	var names []string
	for _, k := range Kinds() {
		if k.Name == name {
			return k, nil
		}
		names = append(names, k.Name)
	}
	return Kind{}, suggest.Unknown("nemesis", name, append([]string{"none"}, names...))
}

// completed returns op as an info completion carrying err, if any.
func completed(op history.Op, v *history.Value, err error) history.Op {
	op.Type = history.Info
	op.Value = v
	if err != nil {
		op.Error = err.Error()
	}
	return op
}

// pickHolder waits up to wait for some worker to hold a lock and picks one.
func pickHolder(ctx context.Context, env Env, rng *rand.Rand, wait time.Duration) (Target, error) {
	t, _, err := aimHolder(ctx, env, rng, wait, false)
	return t, err
}

// aimPoll is how often aimHolder looks at the holders: a critical section
// can be a few milliseconds long.
const aimPoll = time.Millisecond

// aimHolder waits up to wait for a worker that holds a lock and, with inCS,
// is inside (or entering) its critical section, and picks one; when wait runs
// out with holders but none in its critical section, it takes any holder.
// Under an Aim (WithAim) it takes the aimed worker at once. It returns how
// long it waited.
func aimHolder(ctx context.Context, env Env, rng *rand.Rand, wait time.Duration, inCS bool) (Target, time.Duration, error) {
	if aim, ok := AimOf(ctx); ok {
		t, err := aim()
		return t, 0, err
	}
	began := time.Now()
	deadline := began.Add(wait)
	for {
		hs := env.Holders()
		var in []Target
		for _, h := range hs {
			if h.InCS {
				in = append(in, h)
			}
		}
		late := time.Now().After(deadline)
		switch {
		case len(in) > 0:
			return in[rng.IntN(len(in))], time.Since(began), nil
		case len(hs) > 0 && (!inCS || late):
			return hs[rng.IntN(len(hs))], time.Since(began), nil
		case late:
			return Target{}, time.Since(began), fmt.Errorf("no worker held a lock within %s", wait)
		}
		select {
		case <-ctx.Done():
			return Target{}, time.Since(began), ctx.Err()
		case <-time.After(aimPoll):
		}
	}
}

// aimFreshHolder waits up to wait for a worker that was granted a lock after
// the call began (a holder at the start of its critical section) and picks
// one; when none comes in time it falls back to aimHolder (a holder inside
// its critical section, else any holder, waiting up to aimWait). A fault that
// lets its target run on (a partition, a session kill) can only show what the
// lock does once the holder's lease or session is gone if the holder is
// still working by then: striking it at the start of its critical section
// gives the longest such stretch. It returns how long it waited.
func aimFreshHolder(ctx context.Context, env Env, rng *rand.Rand, wait time.Duration) (Target, time.Duration, error) {
	if aim, ok := AimOf(ctx); ok {
		t, err := aim()
		return t, 0, err
	}
	began := time.Now()
	type grant struct {
		process int
		key     string
	}
	before := make(map[grant]bool)
	for _, h := range env.Holders() {
		before[grant{h.Process, h.Key}] = true
	}
	deadline := began.Add(wait)
	for time.Now().Before(deadline) {
		var fresh []Target
		for _, h := range env.Holders() {
			if !before[grant{h.Process, h.Key}] {
				fresh = append(fresh, h)
			}
		}
		if len(fresh) > 0 {
			return fresh[rng.IntN(len(fresh))], time.Since(began), nil
		}
		if !sleep(ctx, aimPoll) {
			return Target{}, time.Since(began), ctx.Err()
		}
	}
	t, _, err := aimHolder(ctx, env, rng, aimWait, true)
	return t, time.Since(began), err
}

// holding returns t's worker as a holder of t's lock right now, if it is.
func holding(env Env, t Target) (Target, bool) {
	for _, h := range env.Holders() {
		if h.Process == t.Process && h.Key == t.Key {
			return h, true
		}
	}
	return Target{}, false
}

// stopTries bounds how many holders stopInCS stops before it keeps one that
// is no longer inside its critical section.
const stopTries = 5

// stopInCS picks a holder with pick and stops its process group (SIGSTOP),
// waiting until the stop took effect. A worker may write its critical
// section's reply just before the stop lands: then the stop found the
// critical section done, and a fault on that holder tests only its release.
// So when pick had found the holder inside its critical section and the
// controller has its reply a moment after the stop, stopInCS continues it
// and picks again, up to stopTries times (not under an Aim: a triggered
// fault strikes the worker its event chose). It returns the stopped target
// (InCS as it stood once stopped) and how long pick waited in all.
func stopInCS(ctx context.Context, env Env, pick func() (Target, time.Duration, error)) (Target, time.Duration, error) {
	var waited time.Duration
	for try := 1; ; try++ {
		t, w, err := pick()
		waited += w
		if err != nil {
			return Target{}, waited, err
		}
		if err := syscall.Kill(-t.Pid, syscall.SIGSTOP); err != nil {
			return Target{}, waited, fmt.Errorf("SIGSTOP worker pid %d: %w", t.Pid, err)
		}
		waitStopped(t.Pid, 500*time.Millisecond)
		if _, aimed := AimOf(ctx); aimed {
			// A triggered fault strikes its event's holder wherever it
			// is in its cycle: that is what its trigger chose.
			return t, waited, nil
		}
		// A reply written just before the stop reaches the controller
		// within moments; after that, a holder still in its critical
		// section is stopped inside it.
		time.Sleep(2 * time.Millisecond)
		now, ok := holding(env, t)
		if ok && now.InCS || !t.InCS || try == stopTries {
			t.InCS = ok && now.InCS
			return t, waited, nil
		}
		if err := resume(ctx, t.Pid); err != nil {
			return Target{}, waited, err
		}
	}
}

// nodeAimWait bounds how long a fault on a lock node waits for a holder.
const nodeAimWait = time.Second

// awaitHolder waits up to wait until some worker holds a lock, so that a
// fault on a lock node strikes while one is held; it reports whether one
// did. A fault goes ahead either way: what it hit is on its op.
func awaitHolder(ctx context.Context, env Env, wait time.Duration) bool {
	if _, ok := AimOf(ctx); ok {
		return len(env.Holders()) > 0 // a triggered fault strikes when its event says
	}
	deadline := time.Now().Add(wait)
	for len(env.Holders()) == 0 {
		if time.Now().After(deadline) || !sleep(ctx, aimPoll) {
			return false
		}
	}
	return true
}

// strikeHit waits (bounded by nodeAimWait) for a holder, then returns what
// a fault on a lock node hits at that moment. A caller picks its node
// first and strikes right after: a leader lookup on a loaded machine can
// outlast a 10 ms critical section, so a holder seen before the lookup
// would be gone when the node is struck.
func strikeHit(ctx context.Context, env Env, kind string) *history.Hit {
	awaitHolder(ctx, env, nodeAimWait)
	return nodeHit(kind, env)
}

// holderHit returns what striking t hits.
func holderHit(kind string, t Target, lease time.Duration) *history.Hit {
	return &history.Hit{Nemesis: kind, Holder: t.Key != "", Key: t.Key, InCS: t.InCS, Failpoint: t.Failpoint, Lease: lease}
}

// nodeHit returns what a fault on a lock node hits: how many workers held a
// lock when it struck.
func nodeHit(kind string, env Env) *history.Hit {
	return &history.Hit{Nemesis: kind, Holders: len(env.Holders()), Lease: leaseOf(env)}
}

// endHit returns the Hit of an end op: how long the fault lasted (the
// longest of what it undid) and how much longer than lease that was.
func endHit(kind string, lasted, lease time.Duration) *history.Hit {
	return &history.Hit{Nemesis: kind, Lease: lease, Lasted: lasted, Outlasted: max(0, lasted-lease)}
}

// undoSet is what a nemesis has faulted and must undo: keys (nodes, slots,
// pids, clock files) with what the ops report of them (the node's name, the
// target's process).
type undoSet[K comparable, V any] struct {
	mu    sync.Mutex
	items map[K]V
}

// add records that k was faulted.
func (s *undoSet[K, V]) add(k K, v V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = make(map[K]V)
	}
	s.items[k] = v
}

// undoAll calls undo on every key in the set, forgets the keys it undid, and
// returns their values with the errors of the others.
func (s *undoSet[K, V]) undoAll(ctx context.Context, undo func(ctx context.Context, k K) error) ([]V, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var done []V
	var errs []error
	for k, v := range s.items {
		if err := undo(ctx, k); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, v)
		delete(s.items, k)
	}
	return done, errors.Join(errs...)
}

// nodeSet is the set of nodes a nemesis has faulted and must undo.
type nodeSet = undoSet[string, string]

// onWorkers matches a fault that struck workers (no lock node): a pause
// or partition of a worker, not of a server.
func onWorkers(f history.Fault) bool { return len(f.Nodes) == 0 }

// onNodes matches a fault that struck a lock node.
func onNodes(f history.Fault) bool { return len(f.Nodes) > 0 }

// byHitOnly matches no fault: a kind whose faults share another kind's ops
// and are told from them only by their Hit (Hit.Nemesis), as
// clock-client-rate's are from clock-client's.
func byHitOnly(history.Fault) bool { return false }

// isA reports whether a topology has the capability C (an interface of
// clusters), for clusters.Where.
func isA[C any](t clusters.Topology) bool {
	_, ok := t.(C)
	return ok
}
