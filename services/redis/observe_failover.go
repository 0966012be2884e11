package redis

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

var (
	_ clusters.ReleaseObserver = (*Sentinel)(nil)
	_ clusters.ReleaseObserver = (*RedisCluster)(nil)
)

// failoverPoll is how often the failover watcher asks each node its role.
const failoverPoll = 50 * time.Millisecond

// ObserveReleases implements clusters.ReleaseObserver for Sentinel: keyspace
// notifications on every redis node (the master and its replicas, as for
// plain Redis), and a failover watcher (watchFailovers).
func (s *Sentinel) ObserveReleases(ctx context.Context, cfg clusters.ObserveConfig) (func(), error) {
	return observeRedisFailovers(ctx, lockNodes(s.Nodes()), cfg)
}

// ObserveReleases implements clusters.ReleaseObserver for Redis Cluster: keyspace
// notifications on every node (a key's slot's master reports its expiry
// and deletion), and a failover watcher (watchFailovers).
func (c *RedisCluster) ObserveReleases(ctx context.Context, cfg clusters.ObserveConfig) (func(), error) {
	return observeRedisFailovers(ctx, lockNodes(c.Nodes()), cfg)
}

// lockNodes returns the nodes of role "lock".
func lockNodes(all []clusters.Node) []clusters.Node {
	var out []clusters.Node
	for _, n := range all {
		if n.Role == "lock" {
			out = append(out, n)
		}
	}
	return out
}

// observeRedisFailovers watches nodes with a redisObserver each and
// watchFailovers.
func observeRedisFailovers(ctx context.Context, nodes []clusters.Node, cfg clusters.ObserveConfig) (func(), error) {
	stopNodes, err := observeRedisNodes(ctx, nodes, cfg)
	if err != nil {
		return nil, err
	}
	stopFO := watchFailovers(ctx, nodes, cfg)
	return func() {
		stopFO()
		stopNodes()
	}, nil
}

// watchFailovers asks each node its role (ROLE) every failoverPoll, on a
// client of its own straight to the node. From when a node that was a
// replica says it is a master, and as long as another node still says it
// is one (an old master cut off from the failover: split brain), it reads
// each lock key on the promoted node and on every other node at each poll:
// a key that another node holds (its owner: a string's value or a hash's
// one field) and the promoted node does not, or holds for another owner,
// is a grant the new master never had, reported once as
// history.ReleaseFailoverLost with that owner, placed where it was found: at most
// a poll after the promotion for a grant the old master held then, at
// most a poll after a grant the old master made since. A key whose other holders are all
// unreachable (a killed master) is not reported: the watcher cannot tell
// it was held.
func watchFailovers(ctx context.Context, nodes []clusters.Node, cfg clusters.ObserveConfig) func() {
	ctx, cancel := context.WithCancel(ctx)
	cs := make([]*redis.Client, len(nodes))
	for i, n := range nodes {
		cs[i] = redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
			DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond, PoolSize: 1})
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(failoverPoll)
		defer t.Stop()
		roles := make([]string, len(nodes))
		promotedAt := make([]time.Duration, len(nodes)) // 0: not promoted
		reported := map[string]bool{}                   // key + owner
		for {
			at := cfg.Now()
			masters := 0
			for i, c := range cs {
				role, err := nodeRole(ctx, c)
				if err != nil {
					continue // away: its role is what it was
				}
				switch {
				case role == "slave":
					promotedAt[i] = 0
				case roles[i] == "slave" && role == "master":
					promotedAt[i] = at
				}
				roles[i] = role
				if role == "master" {
					masters++
				}
			}
			for i := range nodes {
				if promotedAt[i] > 0 && roles[i] == "master" {
					lostOnPromotion(ctx, nodes, cs, i, promotedAt[i], cfg, reported)
					if masters < 2 {
						promotedAt[i] = 0 // the old master is gone or demoted: done
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		for _, c := range cs {
			c.Close()
		}
	}
}

// nodeRole returns a node's role: "master" or "slave".
func nodeRole(ctx context.Context, c *redis.Client) (string, error) {
	v, err := c.Do(ctx, "ROLE").Slice()
	if err != nil {
		return "", err
	}
	if len(v) == 0 {
		return "", errors.New("empty ROLE reply")
	}
	role, _ := v[0].(string)
	return role, nil
}

// lostOnPromotion reports the lock keys that node i, promoted (seen at
// promoted), does not hold as another node does, each owner of a key
// once.
func lostOnPromotion(ctx context.Context, nodes []clusters.Node, cs []*redis.Client, i int, promoted time.Duration, cfg clusters.ObserveConfig, reported map[string]bool) {
	for _, key := range cfg.Keys {
		mine, ok := keyOwner(ctx, cs[i], key)
		if !ok {
			continue // not its slot, or it did not answer
		}
		for j, c := range cs {
			if j == i {
				continue
			}
			theirs, ok := keyOwner(ctx, c, key)
			if !ok || theirs == "" || theirs == mine || reported[key+"\x00"+theirs] {
				continue
			}
			reported[key+"\x00"+theirs] = true
			// Found now: the old master held it at the promotion, or
			// granted it since; either way the grant was lost by now.
			at := max(cfg.Now(), promoted)
			cfg.Report(key, &history.Value{
				Owner: theirs,
				Extra: &history.Extra{Nodes: []string{nodes[i].Name}, Detail: nodes[i].Name + " was promoted without " + nodes[j].Name + "'s key", Release: &history.Release{How: history.ReleaseFailoverLost, At: max(at, 1)}},
			})
			break
		}
	}
}

// keyOwner returns the owner of key on a node ("" when it has no such
// key): a string's value, or a hash's one field; ok is false when the
// node did not answer or does not serve the key's slot (MOVED).
func keyOwner(ctx context.Context, c *redis.Client, key string) (string, bool) {
	v, err := c.Get(ctx, key).Result()
	switch {
	case err == nil:
		return v, true
	case errors.Is(err, redis.Nil):
		return "", true
	case strings.HasPrefix(err.Error(), "WRONGTYPE"):
		f, err := c.HKeys(ctx, key).Result()
		if err != nil || len(f) != 1 {
			return "", err == nil
		}
		return f[0], true
	}
	return "", false
}
