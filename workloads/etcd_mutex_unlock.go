package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func init() {
	register(Design{
		Name: "etcd-mutex-unlock", Service: "etcd", Library: "etcd-client", LockNodes: 3, Tokens: true, Renews: true, New: newEtcdMutexUnlock,
		SessionTTL: EtcdTTL,
		Summary: "etcd-mutex released with Mutex.Unlock, as etcd's examples release it; an Unlock that gets no answer is retried " +
			"in the background about every three seconds until it succeeds while the worker goes on (etcd-io/etcd#22082: Unlock deletes the key by its name, " +
			"which the session's next lock reuses)",
	})
}

// etcdMutexUnlock is etcd-mutex with the release etcd's examples show,
// Mutex.Unlock, and the recovery an application that must not leave its
// lock behind adds: an Unlock that fails is retried in the background,
// about every three seconds, until it succeeds, while the application goes on
// and takes the lock again on the same session. Unlock deletes the key by
// its name, the session's lease; a lock taken again on that session has
// the same name, so a retry that comes late deletes the newer lock
// (etcd-io/etcd#22082, open). etcd-mutex's own release compares the
// key's create revision first and cannot.
type etcdMutexUnlock struct {
	*etcdMutex
	events func(string)

	mu      sync.Mutex
	rng     *rand.Rand    // the retries' jitter, under mu
	stop    chan struct{} // closed by Close: the retries end
	retries sync.WaitGroup
}

func newEtcdMutexUnlock(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	l, err := newEtcdMutex(cfg, rng, events)
	if err != nil {
		return nil, err
	}
	if events == nil {
		events = func(string) {}
	}
	return &etcdMutexUnlock{etcdMutex: l.(*etcdMutex), events: events, rng: rng, stop: make(chan struct{})}, nil
}

// unlockRetry is the mean pause before each background retry of an
// Unlock: a clean-up loop that tries again about every three seconds,
// jittered by half of that either way, as retry loops are (long enough
// for the client to have connected again after the connection the lost
// reply broke, and taken its next lock).
const unlockRetry = 3 * time.Second

// retryPause returns the next pause, from the worker's seeded source.
func (l *etcdMutexUnlock) retryPause() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return unlockRetry/2 + time.Duration(l.rng.Int64N(int64(unlockRetry)))
}

// Release calls Mutex.Unlock. When it fails (no answer within the
// timeout), the release still returns, ok, as the application's does: its
// detail says the Unlock is retried in the background, and whether the
// key was deleted is not known (Released unset).
func (l *etcdMutexUnlock) Release(ctx context.Context, key string, g Grant) (*history.Value, error) {
	h, ok := l.held.pop(key)
	if !ok {
		return &history.Value{Released: history.Bool(false)}, nil
	}
	err := bounded(ctx, l.es.timeout(), func(cctx context.Context) error { return h.m.Unlock(cctx) })
	if err == nil {
		return &history.Value{}, nil
	}
	detail := fmt.Sprintf("Unlock of %s got no answer (%v): the application retries it in the background and goes on", h.m.Key(), err)
	l.retries.Add(1)
	go l.retry(h, key)
	return &history.Value{Extra: &history.Extra{Detail: detail, Unheard: true}}, nil
}

// retry calls h's Unlock again, after a jittered pause each time
// (retryPause), until it succeeds or the worker closes, and reports the
// retry that succeeded.
func (l *etcdMutexUnlock) retry(h *etcdHeld, key string) {
	defer l.retries.Done()
	for try := 1; ; try++ {
		select {
		case <-l.stop:
			return
		case <-time.After(l.retryPause()):
		}
		name := h.m.Key()
		if err := bounded(context.Background(), l.es.timeout(), func(cctx context.Context) error { return h.m.Unlock(cctx) }); err == nil {
			l.events(fmt.Sprintf("background Unlock of %s (lock %s) succeeded at try %d: it deleted the key %s, if there was one, whichever lock of this session holds it now", name, key, try+1, name))
			return
		}
	}
}

// Close stops the retries, then ends the session and the client.
func (l *etcdMutexUnlock) Close() error {
	l.mu.Lock()
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.mu.Unlock()
	l.retries.Wait()
	return l.etcdMutex.Close()
}
