package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/lockcheck/lockcheck/history"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func init() {
	register(Design{
		Name: "etcd-mutex-guarded", Service: "etcd", Library: "etcd-client", LockNodes: 3, Tokens: true, Renews: true, Guarded: true,
		SessionTTL: EtcdTTL, Workloads: []string{WorkloadRegister}, New: newEtcdMutexGuarded,
		Summary: "etcd-mutex, with the register kept in etcd and read and written only in a transaction that finds our lock key still there with our create revision (Jepsen's lock-etcd-set; etcd's guarded write)",
	})
}

// etcdMutexGuarded is the etcd-mutex-guarded design: the etcd-mutex lock,
// and a critical section whose register lives in etcd itself, under
// etcdRegisterRoot. Both accesses are transactions guarded by the lock
// (If the lock key's create revision is still ours, the mutex's IsOwner
// comparison): once the holder's lease has ended and its key is gone, etcd
// refuses its access in the same atomic step, so a stale holder cannot
// write whatever it believes. This differs from --fencing: there the
// storage node compares tokens and refuses a token lower than the highest
// it has seen, so a stale holder may still write until a newer holder has
// touched the resource; here etcd refuses every access the moment the
// lock key is gone, and the register has to live in the lock service.
type etcdMutexGuarded struct{ *etcdMutex }

var _ Sectioner = etcdMutexGuarded{}

func newEtcdMutexGuarded(cfg Config, rng *rand.Rand, events func(string)) (Lock, error) {
	l, err := newEtcdMutex(cfg, rng, events)
	if err != nil {
		return nil, err
	}
	return etcdMutexGuarded{l.(*etcdMutex)}, nil
}

// CriticalSection reads the register, thinks, and writes read+1, each
// access a transaction guarded by the lock key. A refused access sets
// Rejected ("read" or "write") and MaxToken (the create revision of the
// key that holds the lock now, 0 when none) and returns ErrRejected. The
// value's token is the lock key's create revision.
//
// check (the client's own lease check, Valid) is not asked: the guard is
// etcd's transaction, and a stale holder whose client has not yet noticed
// its lease is gone must reach etcd and be refused there, which is what
// the design is tested for.
func (l etcdMutexGuarded) CriticalSection(ctx context.Context, key string, token int64, _ func() error) (*history.Value, error) {
	val := &history.Value{Token: token}
	h, ok := l.held.get(key)
	if !ok {
		return val, Definite(fmt.Errorf("critical section on %s: lock not held", key))
	}
	if token == 0 {
		val.Token = h.rev
	}
	check := func() error { return nil }
	reg := etcdRegisterRoot + key
	owner := clientv3.OpGet(etcdRoot+key+"/", clientv3.WithFirstCreate()...)
	guarded := func(what string, op clientv3.Op) (*clientv3.TxnResponse, error) {
		var resp *clientv3.TxnResponse
		err := bounded(ctx, l.es.timeout(), func(cctx context.Context) (err error) {
			resp, err = l.es.c.Txn(cctx).If(h.m.IsOwner()).Then(op).Else(owner).Commit()
			return err
		})
		if err != nil {
			return nil, err
		}
		if !resp.Succeeded {
			val.Mut().Rejected = what
			if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
				val.Mut().MaxToken = kvs[0].CreateRevision
			}
			val.Mut().Detail = "etcd refused the " + what + ": lock key " + h.m.Key() + " gone"
			return nil, ErrRejected
		}
		return resp, nil
	}
	if err := check(); err != nil {
		return val, Definite(err)
	}
	resp, err := guarded("read", clientv3.OpGet(reg))
	if err == ErrRejected {
		return val, err
	}
	if err != nil {
		return val, Definite(fmt.Errorf("read %s: %w", reg, err)) // a read has no effect
	}
	var read int64
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		if read, err = strconv.ParseInt(string(kvs[0].Value), 10, 64); err != nil {
			return val, Definite(fmt.Errorf("read %s: %w", reg, err))
		}
	}
	val.Read = history.Int64(read)
	val.Wrote = history.Int64(read + 1)
	if err := think(ctx, ms(l.cfg.ThinkMS)); err != nil {
		return val, err
	}
	if err := check(); err != nil {
		return val, Definite(err)
	}
	if _, err := guarded("write", clientv3.OpPut(reg, strconv.FormatInt(read+1, 10))); err != nil {
		if err == ErrRejected {
			return val, err
		}
		return val, fmt.Errorf("write %s: %w", reg, err)
	}
	return val, nil
}
