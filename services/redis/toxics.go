package redis

import (
	"context"

	"github.com/lockcheck/lockcheck/clusters"
)

var (
	_ clusters.LinkToxicker = (*Redis)(nil)
	_ clusters.LinkToxicker = (*Sentinel)(nil)
	_ clusters.LinkToxicker = (*RedisCluster)(nil)
)

// SetLinkToxics sets fault's toxics on a worker slot's links to the lock
// nodes.
func (r *Redis) SetLinkToxics(ctx context.Context, slot int, fault string, ts []clusters.Toxic) error {
	return r.NodeSet.SetLinkToxics(ctx, slot, fault, ts)
}

// SetLinkToxics: on the links to the redis nodes only; a worker still
// asks the sentinels who the master is.
func (s *Sentinel) SetLinkToxics(ctx context.Context, slot int, fault string, ts []clusters.Toxic) error {
	return s.NodeSet.SetLinkToxics(ctx, slot, fault, ts)
}

// SetLinkToxics: on the links to every cluster node.
func (c *RedisCluster) SetLinkToxics(ctx context.Context, slot int, fault string, ts []clusters.Toxic) error {
	return c.NodeSet.SetLinkToxics(ctx, slot, fault, ts)
}
