package etcd

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockcheck/lockcheck/clusters"
)

// TestEtcdRestartEmpty restarts the leader of a real three-member etcd
// cluster with its data dir wiped (removed from the cluster and added back
// at its peer URL): it must come back under a new member id, serve, and
// hold the key put before, which it can only have got from the others.
func TestEtcdRestartEmpty(t *testing.T) {
	if _, err := Look(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := New(Config{Workers: 1, LogDir: t.TempDir()})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Teardown(context.Background())
	c, err := clientv3.New(clientv3.Config{Endpoints: e.LockAddrs(0), DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = c.Put(pctx, "/probe", "x")
	pcancel()
	if err != nil {
		t.Fatal(err)
	}
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i, _ := e.NodeSet.Index(leader)
	m := e.members[i]
	was, err := status(ctx, m.ClientAddr())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RestartEmpty(ctx, leader); err != nil {
		t.Fatal(err)
	}
	now, err := status(ctx, m.ClientAddr())
	if err != nil || now.leader == 0 {
		t.Fatalf("%s after restart-empty: %+v, %v", leader, now, err)
	}
	if now.member == was.member {
		t.Errorf("%s kept member id %x: want a new member in its place", leader, now.member)
	}
	// Read from the restarted member alone (serializable: its own store).
	own, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientAddr()}, DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	err = clusters.Poll(ctx, 20*time.Second, func() error {
		gctx, gcancel := context.WithTimeout(ctx, 2*time.Second)
		defer gcancel()
		r, err := own.Get(gctx, "/probe", clientv3.WithSerializable())
		if err == nil && len(r.Kvs) != 1 {
			err = errors.New("no /probe")
		}
		return err
	}, "read /probe from "+leader)
	if err != nil {
		t.Errorf("%s does not serve /probe after restart-empty: %v", leader, err)
	}
}
