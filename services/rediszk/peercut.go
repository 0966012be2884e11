package rediszk

import "context"

// PeerNodes names the ZooKeeper servers: the Redis part has no peers.
func (r *Cluster) PeerNodes() []string { return r.zk.PeerNodes() }

// CutPeers cuts the links between pairs of ZooKeeper servers.
func (r *Cluster) CutPeers(ctx context.Context, by string, pairs [][2]string) error {
	return r.zk.CutPeers(ctx, by, pairs)
}

// HealPeers restores them.
func (r *Cluster) HealPeers(ctx context.Context, by string, pairs [][2]string) error {
	return r.zk.HealPeers(ctx, by, pairs)
}
