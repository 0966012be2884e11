package workloads

import (
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkRoot is the parent of every lock node lockcheck creates.
const zkRoot = "/lockcheck"

// errZKTimeout means a ZooKeeper call did not return in time; its effect is
// unknown.
var errZKTimeout = errors.New("zookeeper call timed out")

// zkSession is one ZooKeeper session with the connection state Curator's
// guidance asks a lock holder to watch: after a disconnect the lock is
// uncertain (SUSPENDED), after an expiry it is lost (LOST), and after a
// reconnect within the session it is held again.
type zkSession struct {
	conn    *zk.Conn
	timeout time.Duration
	acl     []zk.ACL

	mu        sync.Mutex
	connected bool
	closing   bool // Close was called: its own disconnect is no news
	expiries  int  // how many times the session expired
	sessionID int64
}

// newZKSession connects to servers and waits for a session. Every session
// event goes to events (as "session connected", "disconnected", "expired").
func newZKSession(cfg Config, events func(string)) (*zkSession, error) {
	s := &zkSession{timeout: cfg.OpTimeout() + cfg.Lease(), acl: zk.WorldACL(zk.PermAll)}
	ready := make(chan struct{}, 1)
	cb := func(ev zk.Event) {
		if ev.Type != zk.EventSession {
			return
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return
		}
		var detail string
		switch ev.State {
		case zk.StateHasSession:
			s.connected = true
			s.sessionID = s.conn.SessionID()
			detail = fmt.Sprintf("session 0x%x connected", s.sessionID)
			select {
			case ready <- struct{}{}:
			default:
			}
		case zk.StateDisconnected:
			if s.connected {
				detail = fmt.Sprintf("session 0x%x disconnected: lock uncertain", s.sessionID)
			}
			s.connected = false
		case zk.StateExpired:
			s.connected = false
			s.expiries++
			detail = fmt.Sprintf("session 0x%x expired: lock lost", s.sessionID)
		}
		s.mu.Unlock()
		if detail != "" && events != nil {
			events(detail)
		}
	}
	logger := log.New(os.Stderr, fmt.Sprintf("zk p%d ", cfg.Process), log.LstdFlags|log.Lmicroseconds)
	conn, _, err := zk.Connect(cfg.LockAddrs, cfg.Lease(), zk.WithEventCallback(cb), zk.WithLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper: %w", err)
	}
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		conn.Close()
		return nil, fmt.Errorf("no ZooKeeper session within 10s (servers %v)", cfg.LockAddrs)
	}
	if err := s.ensure(zkRoot); err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// epoch returns how many times the session has expired so far.
func (s *zkSession) epoch() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expiries
}

// valid reports whether a lock granted at epoch may still be held.
func (s *zkSession) valid(epoch int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.expiries != epoch:
		return fmt.Errorf("lock lost: ZooKeeper session expired")
	case !s.connected:
		return fmt.Errorf("lock uncertain: disconnected from ZooKeeper")
	}
	return nil
}

// call runs f, giving up after the session's timeout: go-zookeeper calls
// have no deadline of their own and wait through a partition.
func (s *zkSession) call(f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(s.timeout):
		return errZKTimeout
	}
}

// ensure creates a persistent node if it does not exist.
func (s *zkSession) ensure(path string) error {
	err := s.call(func() error {
		_, err := s.conn.Create(path, nil, 0, s.acl)
		return err
	})
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}

// zkDefinite marks ZooKeeper errors after which a request certainly had no
// effect: the server refused it, or the session was already gone.
func zkDefinite(err error) error {
	switch {
	case errors.Is(err, zk.ErrSessionExpired), errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNodeExists),
		errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrNoAuth):
		return Definite(err)
	}
	return err
}

func (s *zkSession) close() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.conn.Close()
}
