package nemesis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

// linkEnv is an Env on a real cluster whose one holder (slot 0) is granted
// its lock after each fault began: its first Holders call of every aim
// finds none, so aimFreshHolder takes it at once.
type linkEnv struct {
	c     clusters.Cluster
	mu    sync.Mutex
	calls int
}

func (e *linkEnv) Holders() []Target {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.calls%2 == 1 {
		return nil
	}
	return []Target{{Process: 3, Slot: 0, Key: "lock0", InCS: true}}
}
func (e *linkEnv) Workers() []Target         { return e.Holders() }
func (e *linkEnv) Cluster() clusters.Cluster { return e.c }
func (e *linkEnv) Lease() time.Duration      { return time.Second }

// exchange sends one inline command to addr and reads until the server
// closes the connection, a full line arrives, or timeout passes; took is
// how long it waited.
func exchange(addr, cmd string, timeout time.Duration) (reply string, took time.Duration, err error) {
	began := time.Now()
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", time.Since(began), err
	}
	defer c.Close()
	_ = c.SetDeadline(began.Add(timeout))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		return "", time.Since(began), err
	}
	var got []byte
	buf := make([]byte, 256)
	for !strings.HasSuffix(string(got), "\r\n") {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return string(got), time.Since(began), err
		}
	}
	return strings.TrimSpace(string(got)), time.Since(began), nil
}

// fastest returns the quickest of three PINGs to addr: a busy machine may
// hold one up, not all three.
func fastest(addr string) (time.Duration, error) {
	best := time.Hour
	for range 3 {
		got, took, err := exchange(addr, "PING", 5*time.Second)
		if err != nil || got != "+PONG" {
			return took, fmt.Errorf("PING: %q %v", got, err)
		}
		best = min(best, took)
	}
	return best, nil
}

// isTimeout says err is a deadline passing: the link hung.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestLinkFaultsOnRedis runs every link fault against a real redis-server
// behind the cluster's proxies: slot 0 holds the lock, slot 1 is another
// worker. Each fault must do to slot 0's link what it says, leave slot 1's
// alone, record its toxic on the start op's Hit, and be gone after its end
// op (and a second Heal).
func TestLinkFaultsOnRedis(t *testing.T) {
	if _, err := redisnode.LookRedis(); err != nil {
		t.Fatalf("%v (make test installs it)", err)
	}
	ctx := context.Background()
	r := redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 1, Workers: 2, LogDir: t.TempDir()})
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Teardown(ctx)
	holder, other, server := r.LockAddrs(0)[0], r.LockAddrs(1)[0], r.Nodes()[0].Addr
	const ok, hang = 5 * time.Second, 400 * time.Millisecond

	// applied reports whether key is set on the server itself.
	applied := func(t *testing.T, key string) bool {
		t.Helper()
		got, _, err := exchange(server, "GET "+key, ok)
		if err != nil {
			t.Fatalf("GET %s on the server: %v", key, err)
		}
		return got != "$-1"
	}
	for _, tt := range []struct {
		kind, toxic, stream string
		// check measures the fault on the holder's link.
		check func(t *testing.T, hit *history.Hit)
	}{
		{"latency", clusters.ToxicLatency, "both", func(t *testing.T, hit *history.Hit) {
			if hit.Delay != 500*time.Millisecond || hit.Jitter != 250*time.Millisecond {
				t.Errorf("hit delay %s jitter %s, want 500ms and 250ms (lease/2, lease/4)", hit.Delay, hit.Jitter)
			}
			got, took, err := exchange(holder, "PING", ok)
			if err != nil || got != "+PONG" || took < hit.Delay {
				t.Errorf("PING on the holder's link: %q %v after %s, want +PONG after at least %s", got, err, took, hit.Delay)
			}
			if took, err := fastest(other); err != nil || took >= hit.Delay {
				t.Errorf("PING on another slot's link: %v, fastest of 3 after %s, want +PONG in less than %s", err, took, hit.Delay)
			}
		}},
		{"reply-loss", clusters.ToxicTimeout, clusters.Downstream, func(t *testing.T, _ *history.Hit) {
			if _, _, err := exchange(holder, "SET lost-reply v", hang); !isTimeout(err) {
				t.Errorf("SET on the holder's link: %v, want a timeout", err)
			}
			if !applied(t, "lost-reply") {
				t.Error("the SET whose reply was lost did not apply")
			}
		}},
		{"one-way-in", clusters.ToxicTimeout, clusters.Upstream, func(t *testing.T, _ *history.Hit) {
			if _, _, err := exchange(holder, "SET lost-request v", hang); !isTimeout(err) {
				t.Errorf("SET on the holder's link: %v, want a timeout", err)
			}
			if applied(t, "lost-request") {
				t.Error("the SET whose request was lost applied")
			}
		}},
		{"reset", clusters.ToxicResetPeer, clusters.Downstream, func(t *testing.T, _ *history.Hit) {
			_, took, err := exchange(holder, "SET reset-reply v", ok)
			if err == nil || isTimeout(err) || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
				t.Errorf("SET on the holder's link: %v after %s, want the connection reset", err, took)
			}
			if !applied(t, "reset-reply") {
				t.Error("the SET whose connection was reset did not apply")
			}
		}},
		{"cut-reply", clusters.ToxicLimitData, clusters.Downstream, func(t *testing.T, _ *history.Hit) {
			got, _, err := exchange(holder, "SET cut-reply v", ok)
			if got != "+OK" || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
				t.Errorf("SET on the holder's link: %q %v, want %q and the connection closed", got, err, "+OK")
			}
			if !applied(t, "cut-reply") {
				t.Error("the SET whose reply was cut did not apply")
			}
		}},
		{"blackhole", clusters.ToxicTimeout, "both", func(t *testing.T, _ *history.Hit) {
			if _, _, err := exchange(holder, "SET blackholed v", hang); !isTimeout(err) {
				t.Errorf("SET on the holder's link: %v, want it to hang", err)
			}
			if applied(t, "blackholed") {
				t.Error("a SET into the blackhole applied")
			}
		}},
		{"refuse", clusters.ToxicRefuse, "both", func(t *testing.T, _ *history.Hit) {
			_, took, err := exchange(holder, "PING", ok)
			if !errors.Is(err, syscall.ECONNREFUSED) || took > time.Second {
				t.Errorf("dial of the holder's link: %v after %s, want refused at once", err, took)
			}
		}},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			k, err := findKind(tt.kind)
			if err != nil {
				t.Fatal(err)
			}
			n, err := k.New(&linkEnv{c: r}, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			startF, endF := n.Fs()
			if ops, ok := history.FaultOpsOf(startF); !ok || ops.End != endF || ops.Class != history.ClassNetwork || ops.Exercise != history.ExerciseHolder {
				t.Fatalf("fault ops of %s: %+v", startF, ops)
			}
			start := n.Invoke(ctx, history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: startF})
			hit := history.HitOf(&start)
			if start.Error != "" || hit == nil || hit.Nemesis != tt.kind || !hit.Holder || hit.Key != "lock0" ||
				hit.Toxic != tt.toxic || hit.Stream != tt.stream || len(start.Value.Ext().Targets) != 1 || start.Value.Ext().Targets[0] != 3 {
				t.Fatalf("start op %+v, hit %+v", start, hit)
			}
			tt.check(t, hit)
			if got, _, err := exchange(other, "PING", ok); err != nil || got != "+PONG" {
				t.Errorf("another slot's link under %s: %q %v", tt.kind, got, err)
			}
			end := n.Invoke(ctx, history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: endF})
			if end.Error != "" || history.HitOf(&end) == nil || history.HitOf(&end).Lasted <= 0 {
				t.Fatalf("end op %+v", end)
			}
			if err := n.Heal(ctx); err != nil {
				t.Errorf("a second heal: %v", err)
			}
			if took, err := fastest(holder); err != nil || took >= 500*time.Millisecond {
				t.Errorf("the holder's link after the end op: %v, fastest of 3 after %s, want +PONG in less than the latency's 500ms", err, took)
			}
		})
	}
}

// TestLinkFaultNeedsToxicLinks: a cluster whose links take no toxics
// refuses every link fault up front.
func TestLinkFaultNeedsToxicLinks(t *testing.T) {
	for _, kind := range []string{"latency", "reply-loss", "one-way-in", "reset", "cut-reply", "blackhole", "refuse"} {
		k, err := findKind(kind)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.New(holdersEnv{}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, clusters.ErrUnsupported) {
			t.Errorf("%s on a cluster without LinkToxicker: %v, want ErrUnsupported", kind, err)
		}
	}
}
