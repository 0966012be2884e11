package rediszk

import (
	"context"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

var _ clusters.ReleaseObserver = (*Cluster)(nil)

// ObserveReleases implements ReleaseObserver for the combined topology: the
// Redis part's observer (keyspace notifications on its lock node) and the
// ZooKeeper part's (watches on the lock nodes), composed. Each release
// names the half it came from, PartRedis or PartZooKeeper, as the
// redis-zk design names the halves of its grants, so that a grant is lost
// when either half is released.
func (c *Cluster) ObserveReleases(ctx context.Context, cfg clusters.ObserveConfig) (func(), error) {
	part := func(name string) clusters.ObserveConfig {
		pc := cfg
		pc.Report = func(key string, v *history.Value) {
			// A changed copy: an observer may share one Extra
			// among its values.
			x := v.Ext()
			x.Nodes = []string{name}
			v.Extra = &x
			cfg.Report(key, v)
		}
		return pc
	}
	stopRedis, err := c.redis.ObserveReleases(ctx, part(PartRedis))
	if err != nil {
		return nil, err
	}
	stopZK, err := c.zk.ObserveReleases(ctx, part(PartZooKeeper))
	if err != nil {
		stopRedis()
		return nil, err
	}
	return func() {
		stopZK()
		stopRedis()
	}, nil
}
