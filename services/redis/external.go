package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
)

// RoleSentinel is the role, in a topology file, of a Redis Sentinel that
// names the master the workers lock on.
const RoleSentinel = "sentinel"

// sentinelExternal is the external form of the redis-sentinel service:
// the user's master and replicas (role lock) and their Sentinels, the
// master's name given by master_name.
var sentinelExternal = &clusters.ExternalForm{
	Ensemble: true,
	Roles:    map[string]string{RoleSentinel: "a Redis Sentinel that names the master (give the master's name as master_name)"},
	Check: func(cfg clusters.ExternalConfig) error {
		if cfg.MasterName == "" {
			return errors.New("no master_name: give the name the Sentinels monitor the master by")
		}
		for _, s := range cfg.Servers {
			if s.Role == RoleSentinel {
				return nil
			}
		}
		return errors.New("no server with role sentinel: the workers find the master through the Sentinels")
	},
	Extend: func(e *clusters.External) clusters.Topology { return &externalSentinel{External: e} },
}

// externalSentinel is a Redis master with its replicas and Sentinels
// someone else runs: the workers reach the Sentinels through their slot's
// proxies, and every address the Sentinels announce (a server's addr and
// its announce) maps to the slot's proxy to that server; its leader is the
// master a majority of the Sentinels name.
type externalSentinel struct {
	*clusters.External
}

var (
	_ clusters.Linker  = (*externalSentinel)(nil)
	_ clusters.Primary = (*externalSentinel)(nil)
)

// WorkerLinks gives a worker of slot the Sentinels, the master's name and
// the map of every announced address to its proxies.
func (s *externalSentinel) WorkerLinks(slot int) clusters.WorkerLinks {
	m, proxies := announced(s.External, slot)
	var sentinels []string
	for i, srv := range s.Config().Servers {
		if srv.Role == RoleSentinel {
			sentinels = append(sentinels, proxies[i])
		}
	}
	return clusters.WorkerLinks{DiscoveryAddrs: sentinels, MasterName: s.Config().MasterName, AddrMap: m}
}

// announced maps every server's addr and announce to worker slot's proxy
// for it, and returns the proxies in the servers' order.
func announced(e *clusters.External, slot int) (map[string]string, []string) {
	locks, others := e.NodeSet.LockAddrs(slot), e.Others.LockAddrs(slot)
	m := make(map[string]string)
	var proxies []string
	li, oi := 0, 0
	for _, srv := range e.Config().Servers {
		var proxy string
		if srv.Role == clusters.RoleLock {
			proxy, li = locks[li], li+1
		} else {
			proxy, oi = others[oi], oi+1
		}
		m[srv.Addr] = proxy
		if srv.Announce != "" {
			m[srv.Announce] = proxy
		}
		proxies = append(proxies, proxy)
	}
	return m, proxies
}

// clusterExternal is the external form of the redis-cluster service: the
// user's cluster nodes (role lock), each with the address the cluster
// announces for it when that is not its addr.
var clusterExternal = &clusters.ExternalForm{
	Ensemble: true,
	Extend:   func(e *clusters.External) clusters.Topology { return &externalCluster{External: e} },
}

// externalCluster is a Redis Cluster someone else runs: every address the
// cluster announces (in MOVED replies and its slot map) maps to the
// worker slot's proxy to that node.
type externalCluster struct {
	*clusters.External
}

var _ clusters.Linker = (*externalCluster)(nil)

// WorkerLinks gives a worker of slot the map of every announced address.
func (c *externalCluster) WorkerLinks(slot int) clusters.WorkerLinks {
	m, _ := announced(c.External, slot)
	return clusters.WorkerLinks{AddrMap: m}
}

// Leader returns the lock server a majority of the Sentinels name as the
// master, matched by its addr or its announce.
func (s *externalSentinel) Leader(ctx context.Context) (string, error) {
	cfg := s.Config()
	votes := make(map[string]int)
	var errs []error
	n := 0
	for _, srv := range cfg.Servers {
		if srv.Role != RoleSentinel {
			continue
		}
		n++
		c := sentinelClient(srv.Addr)
		m, err := c.GetMasterAddrByName(ctx, cfg.MasterName).Result()
		c.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", srv.Name, err))
			continue
		}
		votes[net.JoinHostPort(m[0], m[1])]++
	}
	for addr, v := range votes {
		if v <= n/2 {
			continue
		}
		for _, srv := range cfg.Servers {
			if srv.Role == clusters.RoleLock && (srv.Addr == addr || srv.Announce == addr) {
				return srv.Name, nil
			}
		}
		return "", fmt.Errorf("the Sentinels name master %s, which is no lock server's addr or announce in the topology file", addr)
	}
	var got []string
	for a, v := range votes {
		got = append(got, fmt.Sprintf("%s ×%d", a, v))
	}
	return "", fmt.Errorf("the Sentinels do not agree on a master of %s (%s): %w", cfg.MasterName, strings.Join(got, ", "), errors.Join(errs...))
}
