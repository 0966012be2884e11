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
	cfg := s.Config()
	locks, others := s.NodeSet.LockAddrs(slot), s.Others.LockAddrs(slot)
	m := make(map[string]string)
	var sentinels []string
	li, oi := 0, 0
	for _, srv := range cfg.Servers {
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
		if srv.Role == RoleSentinel {
			sentinels = append(sentinels, proxy)
		}
	}
	return clusters.WorkerLinks{DiscoveryAddrs: sentinels, MasterName: cfg.MasterName, AddrMap: m}
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
