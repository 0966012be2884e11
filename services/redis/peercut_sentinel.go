package redis

import (
	"context"
	"fmt"
	"net"
	"slices"

	"github.com/lockcheck/lockcheck/clusters"
)

var _ clusters.PeerCutter = (*Sentinel)(nil)

// PeerNodes names the redis nodes, then the sentinels.
func (s *Sentinel) PeerNodes() []string {
	names := redisNames(s.redis)
	for _, sp := range s.sents {
		names = append(names, sp.name)
	}
	return names
}

// CutPeers cuts the links between each pair of servers, both ways, at the
// fronts they dial each other at (clusters.PeerFronts): a replica's link to its
// master, a sentinel's to a redis node or to another sentinel. Clients
// still reach both.
func (s *Sentinel) CutPeers(ctx context.Context, by string, pairs [][2]string) error {
	if err := s.checkPairs(pairs); err != nil {
		return err
	}
	s.fronts.Cut(by, pairs)
	return nil
}

// HealPeers lets go of by's cuts of the pairs (all of them when pairs is
// nil).
func (s *Sentinel) HealPeers(ctx context.Context, by string, pairs [][2]string) error {
	if err := s.checkPairs(pairs); err != nil {
		return err
	}
	s.fronts.Heal(by, pairs)
	return nil
}

// checkPairs says which pair names a server the topology lacks.
func (s *Sentinel) checkPairs(pairs [][2]string) error {
	names := s.PeerNodes()
	for _, p := range pairs {
		for _, n := range p {
			if !slices.Contains(names, n) {
				return fmt.Errorf("no server named %q (servers: %v)", n, names)
			}
		}
		if p[0] == p[1] {
			return fmt.Errorf("cut %s from itself: a pair needs two servers", p[0])
		}
	}
	return nil
}

// sentinelFrontPort is the port sentinel sp announces: its front's.
func sentinelFrontPort(sp *sentinelProc) string {
	_, port, _ := net.SplitHostPort(sp.front)
	return port
}
