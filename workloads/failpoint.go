package workloads

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Failpoint is a named place in a lock client where a worker, when the run
// arms it (Config.Failpoint), stops for a while and says so with an event,
// so that a crash nemesis can kill the worker right there.
type Failpoint struct {
	// Name is the --failpoint name.
	Name string
	// Lock is the design whose client has the failpoint.
	Lock string
	// Summary is the one line `check list` prints.
	Summary string
}

// FailpointSetNXExpire is the place between redis-setnx-expire's SETNX and
// its PEXPIRE: a worker killed there leaves a lock key with no TTL.
const FailpointSetNXExpire = "setnx-expire"

// Failpoints returns every failpoint a worker knows, sorted by name.
func Failpoints() []Failpoint {
	return []Failpoint{
		{Name: FailpointSetNXExpire, Lock: "redis-setnx-expire",
			Summary: "after SETNX took the key and before PEXPIRE gave it a TTL (the key has none yet)"},
	}
}

// CheckFailpoint returns an error unless name is "" or a failpoint of lock.
func CheckFailpoint(name, lock string) error {
	if name == "" {
		return nil
	}
	var names []string
	for _, f := range Failpoints() {
		if f.Name == name {
			if f.Lock != lock {
				return fmt.Errorf("--failpoint %s is in the %s client, not in %s", name, f.Lock, lock)
			}
			return nil
		}
		names = append(names, f.Name)
	}
	return fmt.Errorf("unknown failpoint %q (known: %s)", name, strings.Join(names, ", "))
}

// EventFailpoint is the event name of a worker stopped at a failpoint. Its
// detail starts with FailpointPrefix and the failpoint's name.
const EventFailpoint = "failpoint"

// FailpointPrefix starts the detail of a failpoint event ("failpoint NAME:
// where"); a lock client's event with this prefix is sent as EventFailpoint.
const FailpointPrefix = history.EventFailpointPrefix

// FailpointWait is how long a worker stays at a failpoint: long enough for
// a crash nemesis polling every few milliseconds to find it there, short
// enough that grants keep coming when no crash lands. The controller counts
// the worker as at the failpoint from the event until the reply to the
// operation it is in.
const FailpointWait = 200 * time.Millisecond

// failpoint stops at the failpoint name when cfg arms it: it reports where
// it is with an event and waits FailpointWait (or until ctx is done).
func failpoint(ctx context.Context, cfg Config, events func(string), name, where string) {
	if cfg.Failpoint != name {
		return
	}
	if events != nil {
		events(fmt.Sprintf("%s%s: %s", FailpointPrefix, name, where))
	}
	t := time.NewTimer(FailpointWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
