package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/libraries"
)

func init() {
	libraries.Register(libraries.Library{Name: "go-zookeeper", Summary: "github.com/go-zookeeper/zk, the Go ZooKeeper client and its lock recipe",
		Modules: []string{"github.com/go-zookeeper/zk"}, Tried: []string{"v1.0.3"}})
	register(Design{Name: "go-zookeeper-lock", Service: "zookeeper", Library: "go-zookeeper", LockNodes: 3, Tokens: true, ZxidTokens: true, New: newZKGoLock,
		Summary: "the library recipe github.com/go-zookeeper/zk NewLock/LockWithData/Unlock (no timeout of its own, " +
			"no session check); token = czxid of the lowest child read back after the grant; --lease is the session timeout"})
}

// zkGoLock wraps go-zookeeper's own lock recipe, zk.NewLock, as its users
// call it: one zk.Conn per worker, a new zk.Lock per acquire on
// /lockcheck/<key>, LockWithData(owner), Unlock. The library has no
// acquire timeout (Lock waits in line for as long as it takes) and no
// cancel: the wrapper waits at most the acquire timeout and then reports
// the acquire unknown (info), since the library's node stays in line and
// may become the holder later. It has no fencing token either and keeps
// the lock node's path private: after a grant the wrapper lists the
// children, reads the lowest one (the holder), and takes its czxid as the
// token when its data is our owner value. It does not ask whether the
// session survived before an access (the library offers no such check), so
// a holder whose session expired keeps writing: what the recipe's users
// get unless they watch session events themselves. The session events the
// connection sees are reported as events, as for zk-sequential.
type zkGoLock struct {
	s   *zkSession
	cfg Config
	rng *rand.Rand

	held heldLocks[*zk.Lock]
}

var _ Lock = (*zkGoLock)(nil)

func newZKGoLock(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	s, err := newZKSession(cfg, events)
	if err != nil {
		return nil, err
	}
	return &zkGoLock{s: s, cfg: cfg, rng: rng}, nil
}

// Acquire runs LockWithData for at most the acquire timeout.
func (l *zkGoLock) Acquire(ctx context.Context, key string) (Grant, error) {
	dir := zkRoot + "/" + key
	owner := newOwner(l.cfg.Process, l.rng)
	lk := zk.NewLock(l.s.conn, dir, l.s.acl)
	done := make(chan error, 1)
	go func() { done <- lk.LockWithData([]byte(owner)) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(ms(l.cfg.AcquireTimeoutMS)):
		return Grant{}, undefinite(fmt.Errorf("acquire %s: zk.Lock still waiting after %s (it has no timeout; its node stays in line)",
			key, ms(l.cfg.AcquireTimeoutMS)))
	case <-ctx.Done():
		return Grant{}, undefinite(fmt.Errorf("acquire %s: %w while zk.Lock waits", key, ctx.Err()))
	}
	if err != nil {
		err = fmt.Errorf("acquire %s: %w", key, err)
		if errors.Is(err, zk.ErrSessionExpired) {
			return Grant{}, Definite(err) // the session's nodes are gone
		}
		return Grant{}, undefinite(err) // our node may stay in line
	}
	tok, err := l.token(dir, owner)
	if err != nil {
		return Grant{}, undefinite(fmt.Errorf("acquire %s: granted, but %w", key, err))
	}
	l.held.put(key, lk)
	return Grant{Owner: owner, Token: tok}, nil
}

// token reads the lowest child of dir (the holder) and returns its czxid
// when its data is owner.
func (l *zkGoLock) token(dir, owner string) (int64, error) {
	var children []string
	if err := l.s.call(func() (err error) {
		children, _, err = l.s.conn.Children(dir)
		return err
	}); err != nil {
		return 0, fmt.Errorf("list the lock's children: %w", err)
	}
	lowest, low := "", -1
	for _, c := range children {
		i := strings.LastIndex(c, "lock-")
		if i < 0 {
			continue
		}
		seq, err := strconv.Atoi(c[i+len("lock-"):])
		if err != nil {
			continue
		}
		if low < 0 || seq < low {
			lowest, low = c, seq
		}
	}
	if lowest == "" {
		return 0, errors.New("the lock has no children (our node is gone)")
	}
	var data []byte
	var st *zk.Stat
	if err := l.s.call(func() (err error) {
		data, st, err = l.s.conn.Get(dir + "/" + lowest)
		return err
	}); err != nil {
		return 0, fmt.Errorf("read the lowest child %s: %w", lowest, err)
	}
	if string(data) != owner {
		return 0, fmt.Errorf("the lowest child %s is %q's, not ours", lowest, data)
	}
	return st.Czxid, nil
}

// Release runs Unlock, within the session timeout: ErrNoNode means the
// node was already gone (the session expired), released false.
func (l *zkGoLock) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	lk, err := l.held.take(key)
	if err != nil {
		return nil, err
	}
	err = l.s.call(lk.Unlock)
	switch {
	case err == nil:
		return &history.Value{Released: history.Bool(true)}, nil
	case errors.Is(err, zk.ErrNoNode):
		return &history.Value{Released: history.Bool(false)}, nil
	}
	return nil, zkDefinite(fmt.Errorf("release %s: %w", key, err))
}

// Close closes the session.
func (l *zkGoLock) Close() error {
	l.s.close()
	return nil
}
