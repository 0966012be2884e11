package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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
	// held maps a key to the epoch of the session when it was granted.
	held heldLocks[int]
}

var _ Validator = (*zkEphemeral)(nil)

func newZKEphemeral(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	s, err := newZKSession(cfg, events)
	if err != nil {
		return nil, err
	}
	return &zkEphemeral{s: s, cfg: cfg, rng: rng}, nil
}

func (l *zkEphemeral) Acquire(ctx context.Context, key string) (Grant, error) {
	deadline := time.Now().Add(ms(l.cfg.AcquireTimeoutMS))
	for {
		g, ok, err := l.tryCreate(key, newOwner(l.cfg.Process, l.rng))
		if err != nil || ok {
			return g, err
		}
		if err := l.awaitGone(ctx, key, deadline); err != nil {
			return Grant{}, err
		}
	}
}

// tryCreate creates key's lock node once, with owner as its data: the grant
// (token = czxid), or false when another client holds the node.
func (l *zkEphemeral) tryCreate(key, owner string) (Grant, bool, error) {
	path := zkRoot + "/" + key
	epoch := l.s.epoch()
	err := l.s.call(func() error {
		_, err := l.s.conn.Create(path, []byte(owner), zk.FlagEphemeral, l.s.acl)
		return err
	})
	switch {
	case errors.Is(err, zk.ErrNodeExists):
		return Grant{}, false, nil
	case err != nil:
		return Grant{}, false, fmt.Errorf("acquire %s: create: %w", key, zkDefinite(err))
	}
	var data []byte
	var st *zk.Stat
	err = l.s.call(func() (err error) {
		data, st, err = l.s.conn.Get(path)
		return err
	})
	if err != nil {
		return Grant{}, false, undefinite(fmt.Errorf("acquire %s: read back created node: %w", key, err))
	}
	if string(data) != owner {
		return Grant{}, false, undefinite(fmt.Errorf("acquire %s: created node already replaced by another owner", key))
	}
	l.held.put(key, epoch)
	return Grant{Owner: owner, Token: st.Czxid}, true, nil
}

// awaitGone waits until key's lock node goes (nil: try again), or returns
// ErrNotAcquired when deadline passes first.
func (l *zkEphemeral) awaitGone(ctx context.Context, key string, deadline time.Time) error {
	var exists bool
	var ch <-chan zk.Event
	err := l.s.call(func() (err error) {
		exists, _, ch, err = l.s.conn.ExistsW(zkRoot + "/" + key)
		return err
	})
	if err != nil {
		return Definite(fmt.Errorf("acquire %s: watch: %w", key, err))
	}
	if !exists {
		return nil
	}
	left := time.Until(deadline)
	if left <= 0 {
		return ErrNotAcquired
	}
	select {
	case <-ch:
		return nil
	case <-time.After(left):
		return ErrNotAcquired
	case <-ctx.Done():
		return Definite(ctx.Err())
	}
}

// Valid reports whether the session that was granted key is still intact.
func (l *zkEphemeral) Valid(key string) error {
	epoch, err := l.held.held(key)
	if err != nil {
		return err
	}
	return l.s.valid(epoch)
}

func (l *zkEphemeral) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	l.held.pop(key)
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
