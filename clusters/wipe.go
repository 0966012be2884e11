package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Restarts that lose data (the restart-lose nemesis): a lock node is
// crashed (SIGKILL) and started again with its data files deleted, as a
// node whose writes never reached the disk comes back (a Redis master with
// no AOF or appendfsync no, antirez's "delayed restarts" caveat on RedLock;
// a ZooKeeper or etcd member whose disk was replaced).

// Wiper is a cluster whose lock nodes can be restarted with their data
// gone.
type Wiper interface {
	// RestartEmpty crashes the node (SIGKILL, its proxies stopped), deletes
	// its data, starts it again and returns once it serves, empty.
	RestartEmpty(ctx context.Context, node string) error
}

// KeyReader is a cluster whose lock nodes' keys can be read directly (not
// through a worker's proxy): what a restart-lose takes away.
type KeyReader interface {
	// NodeKeys returns every key the node holds, with its value.
	NodeKeys(ctx context.Context, node string) (map[string]string, error)
}

// RestartEmpty kills the named node (see Kill), runs wipe on its index
// while it is down, and starts it again (see Restart). When wipe fails the
// node is started again all the same, with what is left, and the error
// says so.
func (s *NodeSet) RestartEmpty(ctx context.Context, name string, wipe func(i int) error) error {
	i, err := s.Index(name)
	if err != nil {
		return err
	}
	if err := s.Kill(ctx, name); err != nil {
		return err
	}
	werr := wipe(i)
	if err := s.Restart(ctx, name); err != nil {
		return errors.Join(werr, err)
	}
	if werr != nil {
		return fmt.Errorf("restart %s empty: %w", name, werr)
	}
	return nil
}

// RemoveData deletes the named files and directories under dir; a name
// that is not there is no error.
func RemoveData(dir string, names ...string) error {
	var errs []error
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
