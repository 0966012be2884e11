package runner

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// storePoll is how often the run looks whether the history could still be
// written to the store.
const storePoll = 100 * time.Millisecond

// storageProbeEvery is how often the run pings the storage node, and
// storageSilence the least time it must go unanswered before the run ends:
// no fault touches the storage node, so a silent one is hung, not faulted,
// but a loaded machine may stall a healthy one for a while.
const (
	storageProbeEvery = 500 * time.Millisecond
	storageSilence    = 5 * time.Second
)

// Unresponsive is a server that stayed alive but answered none of the
// run's health probes for longer than Silence, with no fault to explain it.
type Unresponsive struct {
	// Name is the node's name ("storage").
	Name string
	// Addr is the address probed.
	Addr string
	// Silence is how long it answered nothing.
	Silence time.Duration
	// Last is the last probe's error.
	Last error
}

func (e *Unresponsive) Error() string {
	return fmt.Sprintf("server %s (%s) answered no health probe for %s with no fault touching it: %v",
		e.Name, e.Addr, e.Silence.Round(100*time.Millisecond), e.Last)
}

// watchStorage pings the storage node (clusters.PingStorage) every
// storageProbeEvery while the workload runs. One that answers none for
// longer than the op timeout, and at least storageSilence, ends the run
// with an *Unresponsive error (a hung server: SIGSTOP, a deadlock); one that
// exited is the exit watch's. The returned function ends the watch.
func (r *run) watchStorage() func() {
	addr := r.cluster.StorageAddr()
	if addr == "" {
		return func() {}
	}
	bound := max(r.test.OpTimeout, storageSilence)
	var since time.Time
	return poll(storageProbeEvery, func() bool {
		err := clusters.PingStorage(addr)
		switch {
		case err == nil:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) > bound:
			e := &Unresponsive{Name: "storage", Addr: addr, Silence: time.Since(since), Last: err}
			r.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Info, F: history.FServerExit,
				Value: &history.Value{Extra: &history.Extra{Nodes: []string{e.Name}, Detail: fmt.Sprintf("alive, but answered no health probe for %s", e.Silence.Round(100*time.Millisecond))}}})
			r.fail(e)
			return true
		}
		return false
	})
}

// serverExited is the run's clusters.ExitFunc: a server process that exits
// while the workload runs, with no fault of the run asking for it (a kill
// fault stops its server through the topology, which marks the exit as
// expected), ends the run at once with that server's exit as the error.
// Exits during setup are the setup's to report (a port taken, a retry).
func (r *run) serverExited(e clusters.ServerExit) {
	if !r.watching.Load() {
		return
	}
	// The history says so too, so that check analyze of it is not valid.
	r.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Info, F: history.FServerExit,
		Value: &history.Value{Extra: &history.Extra{Nodes: []string{e.Name}, Detail: fmt.Sprintf("pid %d, %s", e.Pid, e.Status)}}})
	r.fail(&e)
}

// watchStore ends the run when the history can no longer be written (a
// full disk): going on would record ops that are lost. The returned
// function ends the watch.
func (r *run) watchStore() func() {
	return poll(storePoll, func() bool {
		if err := r.rec.Err(); err != nil {
			r.fail(&storeError{err: err, files: []string{"history.jsonl"}})
			return true
		}
		return false
	})
}

// checkable reports whether err, which ended a run, leaves a history worth
// checking: a server died or hung, or the store filled, after the workload
// ran. A broken worker or a failed setup leaves none.
func checkable(err error) bool {
	var se *clusters.ServerExit
	var st *storeError
	var un *Unresponsive
	var by *BypassedProxies
	return errors.As(err, &se) || errors.As(err, &st) || errors.As(err, &un) || errors.As(err, &by)
}

// withFatal returns res for a run that err ended: a verdict of Valid
// becomes Unknown with err as the reason (what was not run proves
// nothing), Invalid stays Invalid (an anomaly found before err is real).
func withFatal(res checker.Result, err error) checker.Result {
	if res.Valid == checker.Valid {
		res.Valid = checker.Unknown
	}
	msg := "the run ended early: " + err.Error()
	if res.Error != "" {
		msg += "; " + res.Error
	}
	res.Error = msg
	return res
}

// storeError is a store that could not take the run's files (a full or
// read-only disk). The run keeps its history in memory and is still
// checked; files names what was not saved.
type storeError struct {
	err   error
	files []string
}

func (e *storeError) Error() string {
	cause := e.err
	var pe *os.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err // "no space left on device", not the paths again
	}
	return fmt.Sprintf("the store could not save %s: %v", strings.Join(e.files, ", "), cause)
}

// joinFatal is the error of a run that fatal ended and whose results could
// not all be saved (saveErr, nil when they were): one store error naming
// every file when both are the store's.
func joinFatal(fatal, saveErr error) error {
	var a, b *storeError
	if errors.As(fatal, &a) && errors.As(saveErr, &b) {
		return &storeError{err: a.err, files: append(append([]string(nil), a.files...), b.files...)}
	}
	if saveErr == nil {
		return fatal
	}
	return fmt.Errorf("%w; %w", fatal, saveErr)
}

func (e *storeError) Unwrap() error { return e.err }

// storeSink is the history's file. A write that fails (a full disk) is
// cut back to the last whole line, so the file stays a readable history of
// the ops before it; the recorder writes nothing after its first error.
type storeSink struct {
	mu   sync.Mutex
	f    *os.File
	good int64 // bytes of whole lines written
}

func (s *storeSink) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.f.Write(b)
	if err == nil {
		s.good += int64(n)
		return n, nil
	}
	if n > 0 {
		_ = s.f.Truncate(s.good)
		_, _ = s.f.Seek(s.good, 0)
	}
	return 0, err
}
