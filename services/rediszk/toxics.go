package rediszk

import (
	"context"
	"errors"

	"github.com/lockcheck/lockcheck/clusters"
)

// SetLinkToxics sets fault's toxics on the slot's links in both parts.
func (c *Cluster) SetLinkToxics(ctx context.Context, slot int, fault string, ts []clusters.Toxic) error {
	return errors.Join(c.redis.SetLinkToxics(ctx, slot, fault, ts), c.zk.SetLinkToxics(ctx, slot, fault, ts))
}
