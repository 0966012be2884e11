package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/lockcheck/lockcheck/history"
)

// zkSequential is the zk-sequential design, the lock recipe as Curator's
// InterProcessMutex does it: each contender creates a protected
// ephemeral-sequential child of /lockcheck/<key> (its name starts with
// _c_<guid>- so a create whose reply was lost can be recognised), lists the
// children without a watch, holds the lock when its child is the lowest, and
// otherwise watches only its predecessor. An acquire that times out deletes
// its own child. The fencing token is the child's czxid.
type zkSequential struct {
	s   *zkSession
	cfg Config
	rng *rand.Rand
	// held maps a key to the node and session epoch of its grant.
	held heldLocks[seqHold]
}

type seqHold struct {
	path  string
	epoch int
}

var _ Validator = (*zkSequential)(nil)

const protectedPrefix = "_c_"

func newZKSequential(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	s, err := newZKSession(cfg, events)
	if err != nil {
		return nil, err
	}
	return &zkSequential{s: s, cfg: cfg, rng: rng}, nil
}

// sequence returns the sequence number ZooKeeper appended to a child's name.
func sequence(child string) string {
	if len(child) < 10 {
		return child
	}
	return child[len(child)-10:]
}

// create makes our protected ephemeral-sequential child. After a lost reply
// it looks for a child with our GUID before it tries again.
func (l *zkSequential) create(dir, owner string) (string, error) {
	guid := fmt.Sprintf("%016x%016x", l.rng.Uint64(), l.rng.Uint64())
	prefix := protectedPrefix + guid + "-"
	var path string
	var err error
	for try := 0; try < 3; try++ {
		err = l.s.call(func() (err error) {
			path, err = l.s.conn.Create(dir+"/"+prefix+"lock-", []byte(owner), zk.FlagEphemeral|zk.FlagSequence, l.s.acl)
			return err
		})
		switch {
		case err == nil:
			return path, nil
		case errors.Is(err, zk.ErrSessionExpired):
			continue // the node cannot exist: its session is gone
		case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, errZKTimeout):
			var children []string
			if cerr := l.s.call(func() (err error) {
				children, _, err = l.s.conn.Children(dir)
				return err
			}); cerr != nil {
				return "", fmt.Errorf("find our node after a lost create reply: %w", cerr)
			}
			for _, c := range children {
				if strings.HasPrefix(c, prefix) {
					return dir + "/" + c, nil
				}
			}
		default:
			return "", zkDefinite(err)
		}
	}
	return "", err
}

func (l *zkSequential) Acquire(ctx context.Context, key string) (Grant, error) {
	dir := zkRoot + "/" + key
	if err := l.s.ensure(dir); err != nil {
		return Grant{}, Definite(err)
	}
	owner := newOwner(l.cfg.Process, l.rng)
	epoch := l.s.epoch()
	path, err := l.create(dir, owner)
	if err != nil {
		return Grant{}, fmt.Errorf("acquire %s: create: %w", key, err)
	}
	ours := path[len(dir)+1:]
	deadline := time.Now().Add(ms(l.cfg.AcquireTimeoutMS))
	for {
		var children []string
		err := l.s.call(func() (err error) {
			children, _, err = l.s.conn.Children(dir)
			return err
		})
		if err != nil {
			return Grant{}, l.abandon(path, fmt.Errorf("acquire %s: list: %w", key, err))
		}
		sort.Slice(children, func(i, j int) bool { return sequence(children[i]) < sequence(children[j]) })
		i := sort.SearchStrings(sortedSeqs(children), sequence(ours))
		if i >= len(children) || children[i] != ours {
			return Grant{}, Definite(fmt.Errorf("acquire %s: our node %s is gone (session expired?)", key, ours))
		}
		if i == 0 {
			var st *zk.Stat
			if err := l.s.call(func() (err error) {
				_, st, err = l.s.conn.Get(path)
				return err
			}); err != nil {
				return Grant{}, l.abandon(path, fmt.Errorf("acquire %s: read our node: %w", key, err))
			}
			l.held.put(key, seqHold{path: path, epoch: epoch})
			return Grant{Owner: owner, Token: st.Czxid}, nil
		}
		pred := dir + "/" + children[i-1]
		var exists bool
		var ch <-chan zk.Event
		if err := l.s.call(func() (err error) {
			exists, _, ch, err = l.s.conn.ExistsW(pred)
			return err
		}); err != nil {
			return Grant{}, l.abandon(path, fmt.Errorf("acquire %s: watch predecessor: %w", key, err))
		}
		if !exists {
			continue
		}
		left := time.Until(deadline)
		if left > 0 {
			select {
			case <-ch:
				continue
			case <-time.After(left):
			case <-ctx.Done():
			}
		}
		if err := l.abandon(path, nil); err != nil {
			return Grant{}, err
		}
		return Grant{}, ErrNotAcquired
	}
}

func sortedSeqs(children []string) []string {
	seqs := make([]string, len(children))
	for i, c := range children {
		seqs[i] = sequence(c)
	}
	return seqs
}

// abandon deletes our node after a failed or timed-out acquire. When the
// delete fails, the node may stay and later make us the holder without our
// knowing: that outcome is unknown, so the error is info.
func (l *zkSequential) abandon(path string, cause error) error {
	err := l.s.call(func() error { return l.s.conn.Delete(path, -1) })
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return undefinite(fmt.Errorf("delete own node %s: %v (after: %v)", path, err, cause))
	}
	if cause != nil {
		return undefinite(cause)
	}
	return nil
}

// Valid reports whether the session that was granted key is still intact.
func (l *zkSequential) Valid(key string) error {
	h, err := l.held.held(key)
	if err != nil {
		return err
	}
	return l.s.valid(h.epoch)
}

func (l *zkSequential) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	h, err := l.held.take(key)
	if err != nil {
		return nil, err
	}
	err = l.s.call(func() error { return l.s.conn.Delete(h.path, -1) })
	switch {
	case err == nil:
		return &history.Value{Released: history.Bool(true)}, nil
	case errors.Is(err, zk.ErrNoNode):
		return &history.Value{Released: history.Bool(false)}, nil
	}
	return nil, fmt.Errorf("release %s: delete %s: %w", key, h.path, err)
}

func (l *zkSequential) Close() error {
	l.s.close()
	return nil
}
