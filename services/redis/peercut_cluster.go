package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
)

var _ clusters.PeerCutter = (*RedisCluster)(nil)

// PeerNodes names the six cluster nodes.
func (c *RedisCluster) PeerNodes() []string { return redisNames(c.nodes) }

// redisNames returns the names of rs, in order.
func redisNames(rs []*RedisServer) []string {
	names := make([]string, len(rs))
	for j, r := range rs {
		names[j] = r.Name
	}
	return names
}

// peerPair is a pair of cluster nodes by index.
type peerPair struct{ i, j int }

// indexPairs returns the pairs by index.
func (c *RedisCluster) indexPairs(pairs [][2]string) ([]peerPair, error) {
	var out []peerPair
	for _, p := range pairs {
		i, _, err := c.node(p[0])
		if err != nil {
			return nil, err
		}
		j, _, err := c.node(p[1])
		if err != nil {
			return nil, err
		}
		if i == j {
			return nil, fmt.Errorf("cut %s from itself: a pair needs two nodes", p[0])
		}
		out = append(out, peerPair{min(i, j), max(i, j)})
	}
	return out, nil
}

// busKeys names, at the bus gate, the links each node of p opened to the
// other.
func (c *RedisCluster) busKeys(p peerPair) []string {
	return []string{busPairKey(p.j, c.ids[p.i]), busPairKey(p.i, c.ids[p.j])}
}

// replicationFault names what by holds cut of the replication link of p.
func replicationFault(by string, p peerPair) string {
	return fmt.Sprintf("%s peers %d-%d", by, p.i, p.j)
}

// CutPeers cuts the links between each pair of nodes, both ways: at the bus
// gate every cluster-bus link either opened to the other (nothing one sends
// reaches the other; see busSenderFilter), and, when one replicates from
// the other as the first of the pair sees it, the master's peer proxy,
// which carries its replica's link (each master has one replica).
func (c *RedisCluster) CutPeers(ctx context.Context, by string, pairs [][2]string) error {
	ps, err := c.indexPairs(pairs)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range ps {
		c.gate.hold(by, c.busKeys(p))
		master, err := c.masterOf(ctx, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if master >= 0 {
			errs = append(errs, c.cut(replicationFault(by, p), []string{clusterPeerName(master)}, nil))
		}
	}
	return errors.Join(errs...)
}

// masterOf returns the index of the node of p the other replicates from,
// as node p.i sees it, or -1 when neither does.
func (c *RedisCluster) masterOf(ctx context.Context, p peerPair) (int, error) {
	ns, err := c.view(ctx, c.nodes[p.i])
	if err != nil {
		return -1, fmt.Errorf("view of %s: %w", c.nodes[p.i].Name, err)
	}
	for _, n := range ns {
		switch {
		case n.id == c.ids[p.i] && n.master == c.ids[p.j]:
			return p.j, nil
		case n.id == c.ids[p.j] && n.master == c.ids[p.i]:
			return p.i, nil
		}
	}
	return -1, nil
}

// HealPeers restores what CutPeers cut for by between the named pairs (all
// of it when pairs is nil) that no other fault holds cut.
func (c *RedisCluster) HealPeers(ctx context.Context, by string, pairs [][2]string) error {
	if pairs == nil {
		c.gate.drop(by, nil)
		var errs []error
		for _, f := range c.faultsPrefixed(by + " peers ") {
			errs = append(errs, c.restore(ctx, f))
		}
		return errors.Join(errs...)
	}
	ps, err := c.indexPairs(pairs)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range ps {
		c.gate.drop(by, c.busKeys(p))
		errs = append(errs, c.restore(ctx, replicationFault(by, p)))
	}
	return errors.Join(errs...)
}

// faultsPrefixed returns the faults whose names start with prefix that
// hold a proxy cut.
func (c *RedisCluster) faultsPrefixed(prefix string) []string {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	seen := make(map[string]bool)
	var out []string
	for _, fs := range c.reason {
		for f := range fs {
			if strings.HasPrefix(f, prefix) && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}
