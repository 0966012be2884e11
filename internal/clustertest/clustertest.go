// Package clustertest holds what the tests of real topologies share,
// whichever package holds the topology (clusters, or a service's folder
// under services/): starting one and tearing it down, where its servers
// log, and a nemesis environment that strikes at once.
//
// It imports clusters, history and nemesis, and is imported by tests only;
// a test of a topology links in the storage node's service itself.
package clustertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
)

// Env is a nemesis Env with one worker that holds a lock (so a fault
// strikes at once), a lease of a second and a fault duration of Span.
type Env struct {
	C    clusters.Cluster
	Span time.Duration
}

// Holders returns the one holder: process 1, on k0.
func (e Env) Holders() []nemesis.Target { return []nemesis.Target{{Process: 1, Key: "k0"}} }

// Workers returns the holder.
func (e Env) Workers() []nemesis.Target { return e.Holders() }

// Cluster returns C.
func (e Env) Cluster() clusters.Cluster { return e.C }

// Lease is a second.
func (e Env) Lease() time.Duration { return time.Second }

// FaultDuration returns Span.
func (e Env) FaultDuration() time.Duration { return e.Span }

// NemOp is the nemesis's invocation of op f.
func NemOp(f string) history.Op {
	return history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: f}
}

// Started sets c up, once look finds its servers, and tears it down when
// the test ends.
func Started[C clusters.Cluster](t *testing.T, look func() (string, error), c C) C {
	t.Helper()
	if _, err := look(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	if err := c.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Teardown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return c
}

// LogDir is where a test's servers write their logs: LOCKCHECK_KEEP_LOGS
// when set (to keep the logs of a failing run), else a temporary dir.
func LogDir(t *testing.T) string {
	if d := os.Getenv("LOCKCHECK_KEEP_LOGS"); d != "" {
		return d
	}
	return t.TempDir()
}

// Strike makes the nemesis kind over env, seeded, and applies its start
// op, which must succeed and say what it struck.
func Strike(t *testing.T, kind string, env nemesis.Env, seed uint64) (nemesis.Nemesis, *history.Hit) {
	t.Helper()
	ks, err := nemesis.Parse(kind)
	if err != nil {
		t.Fatal(err)
	}
	n, err := ks[0].New(env, rand.New(rand.NewPCG(seed, 2)))
	if err != nil {
		t.Fatal(err)
	}
	start := n.Invoke(context.Background(), NemOp(nemesis.FPartitionServers))
	hit := history.HitOf(&start)
	if start.Error != "" || hit == nil || hit.Nemesis != kind {
		t.Fatalf("start op %+v", start)
	}
	t.Logf("%s: %s", kind, start.Value.Ext().Detail)
	return n, hit
}

// Observation is one report a test's release observer made: the key, the
// value, and when (on the test's clock) it came.
type Observation struct {
	Key string
	V   *history.Value
	At  time.Duration
}

// WatchReleases starts o's observer on keys with a 50 ms probe until the
// test ends: every report goes to got, every key the observer read to
// reads, and now is the clock the observer was given.
func WatchReleases(t *testing.T, o clusters.ReleaseObserver, keys ...string) (got chan Observation, reads chan string, now func() time.Duration) {
	t.Helper()
	return WatchWith(t, o, clusters.ObserveConfig{Keys: keys})
}

// WatchWith is WatchReleases with cfg's other fields (TookOver,
// LeaseProof).
func WatchWith(t *testing.T, o clusters.ReleaseObserver, cfg clusters.ObserveConfig) (got chan Observation, reads chan string, now func() time.Duration) {
	t.Helper()
	start := time.Now()
	now = func() time.Duration { return time.Since(start) }
	got, reads = make(chan Observation, 1000), make(chan string, 1000)
	cfg.Now, cfg.Probe = now, 50*time.Millisecond
	cfg.Report = func(key string, v *history.Value) { got <- Observation{key, v, now()} }
	cfg.Read = func(key string) { reads <- key }
	stop, err := o.ObserveReleases(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return got, reads, now
}

// AwaitProbe waits for the next observation in got, which must be a probe
// (no release comes after the test's last).
func AwaitProbe(t *testing.T, got chan Observation) {
	t.Helper()
	select {
	case o := <-got:
		if o.V.Ext().Release == nil || !o.V.Ext().Release.Probe {
			t.Fatalf("observed %q %+v after the last release", o.Key, *o.V)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no probe in 10 s")
	}
}

// NextRelease returns the next observation in got that is not a probe,
// which must be of key want; it counts the probes on the way (each with
// a lag) in probes, and fails the test after 15 s.
func NextRelease(t *testing.T, got chan Observation, want string, probes *int) Observation {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case o := <-got:
			r := o.V.Ext().Release
			if r == nil {
				t.Fatalf("observation of %q without a release", o.Key)
			}
			if r.Probe {
				if o.Key != "" || r.At <= 0 || r.Lag < 0 || r.Lag > 5*time.Second {
					t.Fatalf("probe %q %+v", o.Key, *r)
				}
				*probes++
				continue
			}
			if o.Key != want {
				t.Fatalf("observed %q %+v, want %q", o.Key, *r, want)
			}
			return o
		case <-deadline:
			t.Fatalf("no release of %s observed in 15 s", want)
		}
	}
}

// PeerLinkAddrs returns where the proxies that carry member from's
// connections to member to listen, in c's ensemble (clusters.Ensemble), or
// an error when c has no peer links or no such members.
func PeerLinkAddrs(c clusters.Cluster, from, to string) ([]string, error) {
	pl, ok := c.(interface {
		PeerLinkAddrs(from, to string) ([]string, error)
	})
	if !ok {
		return nil, fmt.Errorf("no peer links in %T", c)
	}
	return pl.PeerLinkAddrs(from, to)
}

// RoundTrip sends one inline command to the Redis server at addr and
// returns the first reply line.
func RoundTrip(addr, cmd string, timeout time.Duration) (string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	n, err := c.Read(buf)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(buf[:n])), nil
}

// Waits in the topology tests: for a reply that must come (OKWait) and for
// an event the servers must bring about (PatientWait). They bound a wait
// for an event, not a speed, so they are generous for a loaded machine.
const (
	OKWait      = 5 * time.Second
	PatientWait = 60 * time.Second
)

// WaitRead waits until the observer has seen a new holder of key.
func WaitRead(t *testing.T, reads chan string, key string) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case k := <-reads:
			if k == key {
				return
			}
		case <-deadline:
			t.Fatalf("the observer never saw %s held", key)
		}
	}
}
