package etcd

import (
	"fmt"
	"path/filepath"

	"github.com/lockcheck/lockcheck/clusters"
)

var _ clusters.LogFiler = (*Cluster)(nil)

// LogFiles returns the member's write-ahead log: member/wal, its segments
// (*.wal) and the segment it preallocated next (*.tmp). The database
// (member/snap/db) is not in it.
func (e *Cluster) LogFiles(node string) ([]string, error) {
	for _, m := range e.members {
		if m.Name != node {
			continue
		}
		dir := filepath.Join(m.Dir, "data", "member", "wal")
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("etcd member %s has no write-ahead log in %s", node, dir)
		}
		return append([]string{dir}, files...), nil
	}
	return nil, fmt.Errorf("no etcd member %s", node)
}
