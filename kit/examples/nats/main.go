// Command nats is a kit worker for a lock on NATS JetStream KV: Create of
// the key in a bucket whose TTL is the lease (it fails while the key
// exists), Delete with the Create's revision to release; the token is the
// revision.
//
//	go build -o nats-worker ./kit/examples/nats
//	check conformance --lock nats-kv --worker-cmd ./nats-worker
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lockcheck/lockcheck/kit"
)

type lock struct {
	nc  *nats.Conn
	kv  jetstream.KeyValue
	cfg kit.Config
	rng *rand.Rand
}

func (l *lock) Acquire(ctx context.Context, key string) (kit.Grant, error) {
	for {
		owner := fmt.Sprintf("p%d-%016x", l.cfg.Process, l.rng.Uint64())
		rev, err := l.kv.Create(ctx, key, []byte(owner))
		if err == nil {
			return kit.Grant{Owner: owner, Token: int64(rev)}, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return kit.Grant{}, err
		}
		select {
		case <-ctx.Done():
			return kit.Grant{}, kit.ErrNotAcquired
		case <-time.After(l.cfg.Retry()):
		}
	}
}

func (l *lock) Release(ctx context.Context, key string, g kit.Grant) (bool, error) {
	err := l.kv.Delete(ctx, key, jetstream.LastRevision(uint64(g.Token)))
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return false, nil // the key is no longer ours: the lock was lost
	}
	return err == nil, err
}

func (l *lock) Close() error {
	l.nc.Close()
	return nil
}

func main() {
	kit.Main(func(ctx context.Context, cfg kit.Config) (kit.Lock, error) {
		urls := make([]string, len(cfg.LockAddrs))
		for i, a := range cfg.LockAddrs {
			urls[i] = "nats://" + a
		}
		nc, err := nats.Connect(strings.Join(urls, ","), nats.Timeout(cfg.OpTimeout()), nats.IgnoreDiscoveredServers(),
			nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond), nats.ReconnectBufSize(-1))
		if err != nil {
			return nil, err
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return nil, err
		}
		conf := jetstream.KeyValueConfig{Bucket: "kit_locks", TTL: cfg.Lease(), History: 1, Replicas: min(len(cfg.LockAddrs), 5)}
		kv, err := js.CreateKeyValue(ctx, conf)
		if err != nil {
			if kv, err = js.KeyValue(ctx, conf.Bucket); err != nil {
				nc.Close()
				return nil, err
			}
		}
		return &lock{nc: nc, kv: kv, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Process)))}, nil
	})
}
