package workloads

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/libraries"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func init() {
	libraries.Register(libraries.Library{Name: "nats.go", Summary: "github.com/nats-io/nats.go, the NATS Go client and its JetStream key-value store",
		Modules: []string{"github.com/nats-io/nats.go"}})
	register(Design{
		Name: "nats-kv", Service: "nats", Library: "nats.go", LockNodes: 1, Tokens: true, Renews: true, New: newNATSKV,
		Summary: "NATS JetStream KV (nats.go's jetstream package) on one server: Create of the lock key in a bucket whose TTL (MaxAge) is --lease, " +
			"renewed every lease/3 by Update with the last revision, released by Delete with the last revision; token = the Create revision",
	})
	register(Design{
		Name: "nats-kv-r3", Service: "nats", Library: "nats.go", LockNodes: 3, Tokens: true, Renews: true, New: newNATSKV,
		Summary: "nats-kv on a JetStream cluster of three servers (--nodes), the bucket replicated on each (R3); " +
			"Create and the revision checks are decided by the stream's Raft leader",
	})
}

// natsBucket is the KV bucket that holds the lock keys.
const natsBucket = "lockcheck"

// natsSetupWait bounds connecting and creating (or finding) the bucket
// when a worker opens.
const natsSetupWait = 15 * time.Second

// natsKV is the nats-kv design: the lock recipe NATS documents for its
// key-value store (the KV walkthrough's "atomic operations": create the key
// to take the lock, give the bucket a TTL so a crashed holder's key goes
// away, update with the revision to keep it alive, delete it when done).
// The bucket's MaxAge is the lease: a key not written for that long is
// removed by the server, whatever its holder believes, so a holder stopped
// for longer than the TTL (a GC pause) finds, when it resumes, that a
// second client holds the lock. The fencing token is the revision Create
// returned, the stream sequence of the lock key's first message, which
// grows with every write to the bucket.
//
// The holder renews in the background, as the walkthrough advises, with
// Update(key, owner, last revision); it is not a Validator: the recipe
// tells the holder nothing when a renewal is refused (the renewer reports
// it as an event and stops).
type natsKV struct {
	nc     *nats.Conn
	kv     jetstream.KeyValue
	cfg    Config
	rng    *rand.Rand
	events func(string)
	held   heldLocks[*natsHeld]
}

// natsHeld is one granted lock and its renewer.
type natsHeld struct {
	owner string
	token int64 // the revision Create returned
	stop  chan struct{}
	done  chan struct{} // closed when the renewer has stopped

	mu  sync.Mutex
	rev uint64 // the revision of the lock key's last write of ours
}

func (h *natsHeld) lastRev() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rev
}

func (h *natsHeld) setRev(r uint64) {
	h.mu.Lock()
	h.rev = r
	h.mu.Unlock()
}

var _ Lock = (*natsKV)(nil)

// natsAddrs returns the servers' URLs, rotated by process so that the
// workers spread over the servers (the client tries them in this order).
func natsAddrs(addrs []string, process int) string {
	if len(addrs) == 0 {
		return ""
	}
	k := process % len(addrs)
	var urls []string
	for _, a := range append(addrs[k:len(addrs):len(addrs)], addrs[:k]...) {
		urls = append(urls, "nats://"+a)
	}
	return strings.Join(urls, ",")
}

func newNATSKV(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	if len(cfg.LockAddrs) == 0 {
		return nil, errors.New("nats-kv: no lock addresses")
	}
	if events == nil {
		events = func(string) {}
	}
	ping := max(cfg.Lease()/2, 100*time.Millisecond)
	nc, err := nats.Connect(natsAddrs(cfg.LockAddrs, cfg.Process),
		nats.Name(fmt.Sprintf("lockcheck-p%d", cfg.Process)),
		nats.Timeout(cfg.OpTimeout()),
		nats.DontRandomize(),
		// The servers announce no client URLs (no_advertise), and the
		// client must not use any: every link goes through its proxy.
		nats.IgnoreDiscoveredServers(),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(50*time.Millisecond),
		// No buffering while reconnecting: a request made while the
		// connection is down fails at once and certainly had no effect,
		// instead of being sent whenever the link comes back.
		nats.ReconnectBufSize(-1),
		nats.PingInterval(ping),
		nats.MaxPingsOutstanding(2),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				events(fmt.Sprintf("disconnected: %v", err))
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { events("reconnected to " + c.ConnectedAddr()) }),
	)
	if err != nil {
		return nil, fmt.Errorf("nats-kv: connect: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), natsSetupWait)
	defer cancel()
	kv, err := natsBucketFor(ctx, nc, cfg)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats-kv: bucket %s: %w", natsBucket, err)
	}
	return &natsKV{nc: nc, kv: kv, cfg: cfg, rng: rng, events: events}, nil
}

// natsBucketFor creates the lock bucket (one replica per server, its TTL
// the lease) or, when another worker created it first, opens it. The
// workers' configs are the same, so creating it again is no change.
func natsBucketFor(ctx context.Context, nc *nats.Conn, cfg Config) (jetstream.KeyValue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	conf := jetstream.KeyValueConfig{Bucket: natsBucket, TTL: cfg.Lease(), History: 1,
		Replicas: min(len(cfg.LockAddrs), 5), Storage: jetstream.FileStorage}
	var last error
	for ctx.Err() == nil {
		kv, err := js.CreateKeyValue(ctx, conf)
		if err == nil {
			return kv, nil
		}
		if kv, err2 := js.KeyValue(ctx, natsBucket); err2 == nil {
			return kv, nil
		}
		last = err
		// A cluster that just elected its meta leader may not take
		// requests yet: try again shortly.
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, errors.Join(last, ctx.Err())
}

// natsDefinite marks err as certainly without effect when the server
// refused the request (a JetStream API error), no server could take it, or
// it was never sent (the connection was down: nothing is buffered).
func natsDefinite(err error) error {
	var api *jetstream.APIError
	switch {
	case errors.As(err, &api), errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, nats.ErrReconnectBufExceeded), errors.Is(err, nats.ErrConnectionReconnecting):
		return Definite(err)
	}
	return err
}

// Acquire creates the lock key until it succeeds or the acquire timeout
// passes; a key that exists is held by someone else.
func (l *natsKV) Acquire(ctx context.Context, key string) (Grant, error) {
	if _, busy := l.held.get(key); busy {
		return Grant{}, Definite(fmt.Errorf("acquire %s: this client already holds it", key))
	}
	owner := newOwner(l.cfg.Process, l.rng)
	var rev uint64
	g, err := retryLoop(ctx, l.cfg, l.rng, func(ctx context.Context) (Grant, bool, error) {
		cctx, cancel := context.WithTimeout(ctx, l.cfg.OpTimeout())
		defer cancel()
		r, err := l.kv.Create(cctx, key, []byte(owner))
		switch {
		case err == nil:
			rev = r
			return Grant{Owner: owner, Token: int64(r)}, true, nil
		case errors.Is(err, jetstream.ErrKeyExists):
			return Grant{}, false, nil
		}
		return Grant{}, false, natsDefinite(fmt.Errorf("acquire %s: %w", key, err))
	})
	if err != nil {
		return Grant{}, err
	}
	h := &natsHeld{owner: owner, token: g.Token, rev: rev, stop: make(chan struct{}), done: make(chan struct{})}
	l.held.put(key, h)
	go l.renew(key, h)
	return g, nil
}

// renew writes the lock key again every lease/3, each time with the
// revision of our last write, until stopped. A refused renewal (the key
// has another revision: it expired, and maybe someone else holds it) ends
// the renewals, unless the key still holds our owner (a renewal whose
// reply was lost did take effect); a failed one is reported and retried at
// the next tick.
func (l *natsKV) renew(key string, h *natsHeld) {
	defer close(h.done)
	tick := time.NewTicker(max(l.cfg.Lease()/3, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-tick.C:
		}
		if l.cfg.Reports(ReportRenewal) {
			l.events(fmt.Sprintf("%s%s (revision %d)", history.EventRenewalPrefix, key, h.lastRev()))
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout())
		r, err := l.kv.Update(ctx, key, []byte(h.owner), h.lastRev())
		cancel()
		switch {
		case err == nil:
			h.setRev(r)
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			if r, ok := l.ours(key, h.owner); ok {
				h.setRev(r)
				continue
			}
			l.events(fmt.Sprintf("renewal of %s refused: the key no longer has revision %d of owner %s, the lock is lost; renewal stopped",
				key, h.lastRev(), h.owner))
			return
		default:
			l.events(fmt.Sprintf("renewal of %s failed: %v", key, err))
		}
	}
}

// ours returns the lock key's revision when it still holds owner.
func (l *natsKV) ours(key, owner string) (uint64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.OpTimeout())
	defer cancel()
	e, err := l.kv.Get(ctx, key)
	if err != nil || string(e.Value()) != owner {
		return 0, false
	}
	return e.Revision(), true
}

// Release stops the renewals, then deletes the lock key with the revision
// of our last write: the delete is refused when the key has changed since
// (it expired, and maybe someone else holds it), and the release reports
// that it released nothing.
func (l *natsKV) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	h, err := l.held.take(key)
	if err != nil {
		return nil, err
	}
	close(h.stop)
	<-h.done
	rev := h.lastRev()
	for try := 0; ; try++ {
		cctx, cancel := context.WithTimeout(ctx, l.cfg.OpTimeout())
		err = l.kv.Delete(cctx, key, jetstream.LastRevision(rev))
		cancel()
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			break
		}
		// A renewal whose reply was lost may have written the key: then
		// the key is still ours, at a later revision.
		r, ok := l.ours(key, h.owner)
		if !ok || r == rev || try > 0 {
			return &history.Value{Released: history.Bool(false)}, nil
		}
		rev = r
	}
	if err != nil {
		return nil, natsDefinite(fmt.Errorf("release %s: %w", key, err))
	}
	return &history.Value{Released: history.Bool(true)}, nil
}

// Close stops every renewal and closes the connection.
func (l *natsKV) Close() error {
	l.held.mu.Lock()
	for k, h := range l.held.m {
		close(h.stop)
		delete(l.held.m, k)
	}
	l.held.mu.Unlock()
	l.nc.Close()
	return nil
}
