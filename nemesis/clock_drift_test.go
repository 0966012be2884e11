package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

// shimRedis starts one real redis-server lock node under the clock shim
// and returns it with its address.
func shimRedis(t *testing.T) (*redisnode.Redis, string) {
	t.Helper()
	if _, err := redisnode.LookRedis(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 1, Workers: 1, LogDir: t.TempDir(), ClockShim: true})
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Teardown(context.Background()) })
	for _, n := range r.Nodes() {
		if n.Name == "lock0" {
			return r, n.Addr
		}
	}
	t.Fatal("no lock0")
	return nil, ""
}

// serverSkew asks the redis-server at addr for its TIME and returns how
// far ahead of the real clock it is, taking the real time halfway through
// the round trip, and the round trip's real time.
func serverSkew(t *testing.T, addr string) (skew time.Duration, at time.Time) {
	t.Helper()
	reply, sent, got := redisCommand(t, addr, "TIME")
	// *2 $10 <seconds> $6 <microseconds>
	f := strings.Fields(reply)
	if len(f) < 5 {
		t.Fatalf("TIME replied %q", reply)
	}
	sec, err1 := strconv.ParseInt(f[2], 10, 64)
	usec, err2 := strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("TIME replied %q: %v", reply, err)
	}
	mid := sent.Add(got.Sub(sent) / 2)
	return time.Unix(sec, usec*1000).Sub(mid), mid
}

// redisCommand sends one inline command to the redis-server at addr on a
// fresh connection and returns the first read of its reply, with the real
// times it was sent and answered.
func redisCommand(t *testing.T, addr, cmd string) (reply string, sent, got time.Time) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	sent = time.Now()
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 128)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("%s %s: %v", cmd, addr, err)
	}
	return string(buf[:n]), sent, time.Now()
}

// nearTo reports whether d is within tol of want.
func nearTo(d, want, tol time.Duration) bool { return d > want-tol && d < want+tol }

// awaitRealTime reads the server's clock until it reads real time (within
// tol), bounded by 5 s, then checks that 10 more readings over about half
// a second do too: the fault is over, not between two swings.
func awaitRealTime(t *testing.T, addr string, tol time.Duration) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, _ := serverSkew(t, addr)
		if nearTo(d, 0, tol) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's clock is still %s off 5 s after the end op", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 10; i++ {
		if d, _ := serverSkew(t, addr); !nearTo(d, 0, tol) {
			t.Fatalf("reading %d after the end op: the server's clock is %s off", i, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClockStrobeOnRedis strobes a real redis-server's wall clock: its
// TIME reads real time and 3 leases ahead, both while the fault lasts, and
// real time only after the end op.
func TestClockStrobeOnRedis(t *testing.T) {
	r, addr := shimRedis(t)
	const lease = time.Second
	nm, err := newClockStrobe(clockEnv{c: r, lease: lease}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer nm.Heal(ctx)
	start := nm.Invoke(ctx, history.Op{F: FStrobe})
	hit := history.HitOf(&start)
	if start.Error != "" || hit == nil || hit.Nemesis != "clock-strobe" || !hit.Strobe || hit.Offset != JumpLeases*lease ||
		len(start.Value.Ext().Nodes) != 1 || start.Value.Ext().Nodes[0] != "lock0" {
		t.Fatalf("start op %+v, hit %+v", start, hit)
	}
	const tol = 500 * time.Millisecond
	var low, high int
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < 1000 && (low == 0 || high == 0) && time.Now().Before(deadline); i++ {
		d, _ := serverSkew(t, addr)
		switch {
		case nearTo(d, 0, tol):
			low++
		case nearTo(d, JumpLeases*lease, tol):
			high++
		default:
			t.Errorf("reading %d: the server's clock is %s ahead: want 0 or %s", i, d, JumpLeases*lease)
		}
		time.Sleep(7 * time.Millisecond)
	}
	t.Logf("readings at real time: %d, at %s ahead: %d", low, JumpLeases*lease, high)
	if low == 0 || high == 0 {
		t.Fatalf("readings at real time: %d, %s ahead: %d: want both", low, JumpLeases*lease, high)
	}
	end := nm.Invoke(ctx, history.Op{F: FUnstrobe})
	if eh := history.HitOf(&end); end.Error != "" || eh == nil || eh.Lasted <= 0 {
		t.Fatalf("end op %+v", end)
	}
	awaitRealTime(t, addr, tol)
	if err := nm.Heal(ctx); err != nil {
		t.Errorf("Heal after the end op: %v", err)
	}
}

// TestClockRateOnRedis runs a real redis-server's wall clock at twice the
// real rate: two readings of its TIME 2 s apart (by the real clock) are
// 4 s apart, and it reads real time after the end op.
func TestClockRateOnRedis(t *testing.T) {
	r, addr := shimRedis(t)
	nm, err := newClockRate(clockEnv{c: r, lease: time.Second}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer nm.Heal(ctx)
	start := nm.Invoke(ctx, history.Op{F: FDrift})
	hit := history.HitOf(&start)
	if start.Error != "" || hit == nil || hit.Nemesis != "clock-rate" || hit.Rate != DriftRate || len(start.Value.Ext().Nodes) != 1 {
		t.Fatalf("start op %+v, hit %+v", start, hit)
	}
	s1, t1 := serverSkew(t, addr)
	time.Sleep(2 * time.Second)
	s2, t2 := serverSkew(t, addr)
	real := t2.Sub(t1)
	server := real + s2 - s1
	rate := float64(server) / float64(real)
	t.Logf("the server's clock moved %s in %s of real time: rate %.3f", server, real, rate)
	if rate < DriftRate-0.15 || rate > DriftRate+0.15 {
		t.Errorf("rate %.3f, want %g", rate, DriftRate)
	}
	if s2 < s1 {
		t.Errorf("the server's clock went back while running fast (%s, then %s ahead)", s1, s2)
	}
	end := nm.Invoke(ctx, history.Op{F: FUndrift})
	if end.Error != "" || len(end.Value.Ext().Nodes) != 1 {
		t.Fatalf("end op %+v", end)
	}
	awaitRealTime(t, addr, 200*time.Millisecond)
}

// TestClockDriftNeedsClocker: a cluster that cannot move clocks refuses
// both kinds up front.
func TestClockDriftNeedsClocker(t *testing.T) {
	for _, k := range []func(Env, *rand.Rand) (Nemesis, error){newClockStrobe, newClockRate} {
		if _, err := k(clockEnv{c: noClock{}}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, clusters.ErrUnsupported) {
			t.Errorf("got %v, want ErrUnsupported", err)
		}
	}
}

// strobeClientEnv is an Env with workers whose client clocks it records,
// every setting of each.
type strobeClientEnv struct {
	clockEnv
	workers []Target
	offsetLog
}

func (e *strobeClientEnv) Workers() []Target { return e.workers }
func (e *strobeClientEnv) SetClientClock(file string, off time.Duration) error {
	e.add(file, off)
	return nil
}

// TestClockClientStrobeSwingsNonHolders: every non-holder's client clock
// swings between 3 leases ahead and real time while the fault lasts, the
// holder's is never touched, and every clock reads real time after it.
func TestClockClientStrobeSwingsNonHolders(t *testing.T) {
	ws := []Target{{Process: 0, Slot: 0, ClockFile: "w0"}, {Process: 11, Slot: 1, ClockFile: "w1", Key: "k0"}, {Process: 2, Slot: 2, ClockFile: "w2"}}
	env := &strobeClientEnv{clockEnv: clockEnv{lease: time.Second}, workers: ws}
	nm, err := newClockClientStrobe(env, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	op := nm.Invoke(ctx, history.Op{F: history.FSkew})
	hit := history.HitOf(&op)
	if op.Error != "" || len(op.Value.Ext().Targets) != 2 || hit == nil || !hit.Strobe || hit.Offset != 3*time.Second || hit.Holders != 1 {
		t.Fatalf("skew op %+v, hit %+v", op, hit)
	}
	// Wait (bounded) until w0 has swung back to real time and ahead again.
	deadline := time.Now().Add(10 * time.Second)
	for len(env.seen("w0")) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if end := nm.Invoke(ctx, history.Op{F: history.FUnskew}); end.Error != "" || len(end.Value.Ext().Targets) != 2 {
		t.Fatalf("unskew op %+v", end)
	}
	for _, f := range []string{"w0", "w2"} {
		got := env.seen(f)
		if len(got) < 4 || got[len(got)-1] != 0 {
			t.Fatalf("clock %s set to %v: want at least three swings, then 0", f, got)
		}
		for k, off := range got[:len(got)-1] {
			if want := map[bool]time.Duration{true: 3 * time.Second, false: 0}[k%2 == 0]; off != want {
				t.Errorf("clock %s swing %d: %s, want %s (all %v)", f, k, off, want, got)
			}
		}
	}
	if got := env.seen("w1"); len(got) != 0 {
		t.Errorf("the holder's clock was set: %v", got)
	}
	n := len(env.seen("w0"))
	if err := nm.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * StrobeStep)
	if again := env.seen("w0"); len(again) != n {
		t.Errorf("the clock kept swinging after the end op: %v", again)
	}
	if _, err := newClockClientStrobe(clockEnv{}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, clusters.ErrUnsupported) {
		t.Errorf("an env without client clocks: %v", err)
	}
}
