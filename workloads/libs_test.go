package workloads

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/go-redsync/redsync/v4"
	"github.com/lockcheck/lockcheck/history"
)

// TestRedsyncLockError checks how a failed redsync LockContext becomes a
// completion: taken or failed is fail, a timeout on any node is info, a
// refused connection on every node is fail.
func TestRedsyncLockError(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name string
		err  error
		want history.Type
	}{
		{"failed", redsync.ErrFailed, history.Fail},
		{"taken", &redsync.ErrTaken{Nodes: []int{0}}, history.Fail},
		{"timeout", errors.Join(&redsync.RedisError{Node: 0, Err: context.DeadlineExceeded}), history.Info},
		{"refused", errors.Join(&redsync.RedisError{Node: 0, Err: refused}, &redsync.RedisError{Node: 1, Err: refused}), history.Fail},
		{"refused and timeout", errors.Join(&redsync.RedisError{Node: 0, Err: refused},
			&redsync.RedisError{Node: 1, Err: fmt.Errorf("i/o timeout: %w", context.DeadlineExceeded)}), history.Info},
		{"taken and timeout", errors.Join(&redsync.ErrNodeTaken{Node: 0},
			&redsync.RedisError{Node: 1, Err: context.DeadlineExceeded}), history.Info},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(redsyncLockError("k0", tt.err)); got != tt.want {
				t.Errorf("%v: %s, want %s", tt.err, got, tt.want)
			}
		})
	}
}
