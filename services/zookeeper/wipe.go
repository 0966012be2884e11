package zookeeper

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/lockcheck/lockcheck/clusters"
)

// RestartEmpty SIGKILLs a ZooKeeper server, deletes its data directory's
// snapshots and transaction logs (version-2) and its myid, writes the myid
// back (a server cannot start without it: whoever replaces a lost disk
// restores it), and starts it again; it rejoins the ensemble empty and
// syncs from the leader.
func (z *Cluster) RestartEmpty(ctx context.Context, node string) error {
	return z.NodeSet.RestartEmpty(ctx, node, func(i int) error {
		n := z.nodes[i]
		if err := clusters.RemoveData(n.Dir, "version-2", "myid"); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(n.Dir, "myid"), []byte(strconv.Itoa(n.ID)+"\n"), 0o644)
	})
}
