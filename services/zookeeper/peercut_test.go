package zookeeper_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/clustertest"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/services/zookeeper"
)

// zkWait bounds each wait on a three-JVM ensemble on a loaded machine.
const zkWait = 90 * time.Second

// linkOpen reports whether every proxy of the peer link from -> to takes
// connections (a stopped proxy refuses them); the connection is closed at
// once, so no server waits on it.
func linkOpen(t *testing.T, c clusters.Cluster, from, to string) bool {
	t.Helper()
	addrs, err := clustertest.PeerLinkAddrs(c, from, to)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		conn, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err != nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("link %s -> %s at %s: %v, want open or refused", from, to, a, err)
			}
			return false
		}
		conn.Close()
	}
	return true
}

// TestPartitionMajorityZooKeeper splits a three-server ZooKeeper ensemble
// with partition-majority: the quorum and election links between the two
// sides refuse connections both ways while those inside the majority take
// them; the majority elects a leader and takes a write while the cut-off
// server stops serving (srvr: not serving); after the end op every link
// takes connections again and the former minority serves again, with the
// write made while it was cut off.
func TestPartitionMajorityZooKeeper(t *testing.T) {
	z := clustertest.Started(t, zookeeper.Look, zookeeper.New(zookeeper.Config{Nodes: 3, Workers: 1, LogDir: clustertest.LogDir(t)}))
	ctx := context.Background()
	nodes := z.PeerNodes()
	direct := make(map[string]string) // node -> its real client address
	for _, n := range z.Nodes() {
		direct[n.Name] = n.Addr
	}
	slot := z.LockAddrs(0) // in node order
	// serving waits until each of names serves (want) or does not.
	serving := func(names []string, want bool) error {
		return clusters.Poll(ctx, zkWait, func() error {
			for _, n := range names {
				if m, err := zookeeper.Mode(direct[n]); (err == nil) != want {
					return fmt.Errorf("%s: mode %q (%v), want serving %v", n, m, err, want)
				}
			}
			return nil
		}, "servers")
	}
	if err := serving(nodes, true); err != nil {
		t.Fatal(err)
	}

	n, hit := clustertest.Strike(t, "partition-majority", clustertest.Env{C: z}, 1)
	if len(hit.Cuts) != 2 {
		t.Fatalf("hit %+v: want one server cut from two", hit)
	}
	var minority string
	var majority, majAddrs []string
	for i, a := range nodes {
		if len(hit.Reach[a]) == 0 {
			minority = a
		} else {
			majority = append(majority, a)
			majAddrs = append(majAddrs, slot[i])
		}
	}
	for _, a := range nodes {
		for _, b := range nodes {
			if want := slices.Contains(hit.Reach[a], b); a != b && linkOpen(t, z, a, b) != want {
				t.Errorf("link %s -> %s: open %v, want %v", a, b, !want, want)
			}
		}
	}
	if err := serving([]string{minority}, false); err != nil {
		t.Fatalf("the cut-off server: %v", err)
	}
	if err := serving(majority, true); err != nil {
		t.Fatalf("the majority: %v", err)
	}
	conn, _, err := zk.Connect(majAddrs, 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = clusters.Poll(ctx, zkWait, func() error {
		_, err := conn.Create("/shape", []byte("x"), 0, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) {
			return nil // an earlier try took effect after its reply was lost
		}
		return err
	}, "a write on the majority")
	if err != nil {
		t.Fatal(err)
	}

	if end := n.Invoke(ctx, clustertest.NemOp(nemesis.FHealServers)); end.Error != "" {
		t.Fatalf("end op %+v", end)
	}
	for _, a := range nodes {
		for _, b := range nodes {
			if a != b && !linkOpen(t, z, a, b) {
				t.Errorf("link %s -> %s still refused after the heal", a, b)
			}
		}
	}
	if err := serving(nodes, true); err != nil {
		t.Fatalf("after the heal: %v", err)
	}
	mi := slices.Index(nodes, minority)
	mconn, _, err := zk.Connect([]string{slot[mi]}, 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer mconn.Close()
	err = clusters.Poll(ctx, zkWait, func() error {
		if _, err := mconn.Sync("/shape"); err != nil {
			return err
		}
		_, _, err := mconn.Get("/shape")
		return err
	}, "the write, read on "+minority)
	if err != nil {
		t.Fatal(err)
	}
}
