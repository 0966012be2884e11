package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/lockcheck/lockcheck/history"
)

// zkEphemeral is the zk-ephemeral design: the lock is an ephemeral node
// /lockcheck/<key>; whoever creates it holds the lock until it deletes it or
// its session expires. Waiters watch the node and retry when it goes (the
// herd recipe). The fencing token is the node's czxid.
type zkEphemeral struct {
	s   *zkSession
	cfg Config
	rng *rand.Rand
	mu  sync.Mutex
	// held maps a key to the epoch of the session when it was granted.
	held map[string]int
}

var _ Validator = (*zkEphemeral)(nil)

func newZKEphemeral(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	s, err := newZKSession(cfg, events)
	if err != nil {
		return nil, err
	}
	return &zkEphemeral{s: s, cfg: cfg, rng: rng, held: make(map[string]int)}, nil
}

func (l *zkEphemeral) Acquire(ctx context.Context, key string) (Grant, error) {
	path := zkRoot + "/" + key
	deadline := time.Now().Add(ms(l.cfg.AcquireTimeoutMS))
	for {
		owner := newOwner(l.cfg.Process, l.rng)
		epoch := l.s.epoch()
		err := l.s.call(func() error {
			_, err := l.s.conn.Create(path, []byte(owner), zk.FlagEphemeral, l.s.acl)
			return err
		})
		switch {
		case err == nil:
			var data []byte
			var st *zk.Stat
			err := l.s.call(func() (err error) {
				data, st, err = l.s.conn.Get(path)
				return err
			})
			if err != nil {
				return Grant{}, undefinite(fmt.Errorf("acquire %s: read back created node: %w", key, err))
			}
			if string(data) != owner {
				return Grant{}, undefinite(fmt.Errorf("acquire %s: created node already replaced by another owner", key))
			}
			l.mu.Lock()
			l.held[key] = epoch
			l.mu.Unlock()
			return Grant{Owner: owner, Token: st.Czxid}, nil
		case errors.Is(err, zk.ErrNodeExists):
		default:
			return Grant{}, fmt.Errorf("acquire %s: create: %w", key, zkDefinite(err))
		}
		// Held: wait until the node goes, or the acquire time is up.
		var exists bool
		var ch <-chan zk.Event
		err = l.s.call(func() (err error) {
			exists, _, ch, err = l.s.conn.ExistsW(path)
			return err
		})
		if err != nil {
			return Grant{}, Definite(fmt.Errorf("acquire %s: watch: %w", key, err))
		}
		if !exists {
			continue
		}
		left := time.Until(deadline)
		if left <= 0 {
			return Grant{}, ErrNotAcquired
		}
		select {
		case <-ch:
		case <-time.After(left):
			return Grant{}, ErrNotAcquired
		case <-ctx.Done():
			return Grant{}, Definite(ctx.Err())
		}
	}
}

// Valid reports whether the session that was granted key is still intact.
func (l *zkEphemeral) Valid(key string) error {
	l.mu.Lock()
	epoch, ok := l.held[key]
	l.mu.Unlock()
	if !ok {
		return fmt.Errorf("lock %s not held", key)
	}
	return l.s.valid(epoch)
}

func (l *zkEphemeral) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	l.mu.Lock()
	delete(l.held, key)
	l.mu.Unlock()
	path := zkRoot + "/" + key
	var data []byte
	var st *zk.Stat
	err := l.s.call(func() (err error) {
		data, st, err = l.s.conn.Get(path)
		return err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return &history.Value{Released: history.Bool(false)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", key, zkDefinite(err))
	}
	if string(data) != g.Owner || st.Czxid != g.Token {
		return &history.Value{Released: history.Bool(false)}, nil
	}
	err = l.s.call(func() error { return l.s.conn.Delete(path, st.Version) })
	switch {
	case err == nil:
		return &history.Value{Released: history.Bool(true)}, nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		return &history.Value{Released: history.Bool(false)}, nil
	}
	return nil, fmt.Errorf("release %s: delete: %w", key, err)
}

func (l *zkEphemeral) Close() error {
	l.s.close()
	return nil
}
