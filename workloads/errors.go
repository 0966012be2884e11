package workloads

import (
	"context"
	"errors"
	"net"
	"syscall"

	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

// ErrNotAcquired means acquire gave up: another client held the lock for the
// whole acquire timeout. The lock was certainly not taken.
var ErrNotAcquired = errors.New("lock not acquired: held by another client until the acquire timeout")

// ErrRejected means the fenced resource refused a stale token; the access had
// no effect.
var ErrRejected = errors.New("stale fencing token rejected by the resource")

// definiteError marks an error after which the operation certainly had no
// effect (it was never sent, or the server refused it).
type definiteError struct{ err error }

func (e definiteError) Error() string { return e.err.Error() }
func (e definiteError) Unwrap() error { return e.err }

// Definite marks err as a certain failure: the operation had no effect.
func Definite(err error) error {
	if err == nil {
		return nil
	}
	return definiteError{err}
}

// Classify maps an operation's error to its completion type: nil is ok; a
// failure that certainly had no effect (not acquired, rejected, connection
// refused, a server error reply) is fail; anything else, such as a timeout or
// a connection lost after the request was sent, is info.
func Classify(err error) history.Type {
	if err == nil {
		return history.OK
	}
	var d definiteError
	var rerr redis.Error
	var op *net.OpError
	switch {
	case errors.As(err, &d), errors.Is(err, ErrNotAcquired), errors.Is(err, ErrRejected):
		return history.Fail
	case errors.Is(err, syscall.ECONNREFUSED):
		return history.Fail
	case errors.As(err, &op) && op.Op == "dial":
		return history.Fail
	case errors.As(err, &rerr) && !errors.Is(err, context.DeadlineExceeded):
		return history.Fail
	}
	return history.Info
}

// ambiguousError hides whatever made an error look definite: the operation
// had already taken effect in part, so its outcome is unknown.
type ambiguousError struct{ msg string }

func (e ambiguousError) Error() string { return e.msg }

// undefinite returns an error with err's message that Classify maps to info.
func undefinite(err error) error { return ambiguousError{err.Error()} }
