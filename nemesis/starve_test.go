package nemesis

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
)

// busyLoop starts a bounded busy loop (sh) in a process group of its own,
// as a worker runs, and kills it when the test ends.
func busyLoop(t *testing.T) int {
	t.Helper()
	return groupProcess(t, "sh", "-c", "i=0; while [ $i -lt 2000000000 ]; do i=$((i+1)); done")
}

// cpuTime returns the CPU time process pid has used (utime + stime of
// /proc/PID/stat).
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	const ticks = 100                           // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}

// TestStarveThrottlesABusyProcess starves a real busy-looping process
// group, by the best mechanism this machine has and by the duty cycle:
// over a window it gets far less CPU time than wall time, its start op
// says how and how much, and after the end op it runs at full speed again
// with no cgroup and no busy neighbour left behind.
func TestStarveThrottlesABusyProcess(t *testing.T) {
	for _, mech := range []string{"", clusters.ThrottleCgroup2, clusters.ThrottleCgroup1, clusters.ThrottleDutyCycle} {
		name := mech
		if name == "" {
			name = "best"
		}
		t.Run(name, func(t *testing.T) {
			pid := busyLoop(t)
			env := holdersEnv{[]Target{{Process: 4, Slot: 4, Pid: pid, Key: "k0", InCS: true}}}
			nm, err := newStarve(env, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			n := nm.(*Starve)
			n.Mechanism = mech
			ctx := context.Background()
			start := n.Invoke(ctx, history.Op{F: FStarve})
			if start.Error != "" && strings.Contains(start.Error, clusters.ErrUnsupported.Error()) {
				t.Skipf("%s: %s", name, start.Error)
			}
			hit := history.HitOf(&start)
			if start.Error != "" || hit == nil || hit.Nemesis != "starve" || !hit.Holder || hit.Key != "k0" ||
				hit.Quota != StarveQuota || hit.Mechanism == "" || (mech != "" && hit.Mechanism != mech) {
				t.Fatalf("start op %+v, hit %+v", start, hit)
			}
			t.Logf("mechanism %s: %s", hit.Mechanism, start.Value.Ext().Detail)
			var dir string
			var load []int
			for th := range n.starved.items {
				dir, load = th.Dir, th.LoadPids()
			}
			if (dir == "") != (hit.Mechanism == clusters.ThrottleDutyCycle) {
				t.Fatalf("mechanism %s with cgroup %q", hit.Mechanism, dir)
			}

			const window = 2 * time.Second
			c0, w0 := cpuTime(t, pid), time.Now()
			time.Sleep(window)
			starved, wall := cpuTime(t, pid)-c0, time.Since(w0)
			t.Logf("starved: %s of CPU in %s of wall time", starved, wall.Round(time.Millisecond))
			if starved > wall/8 {
				t.Errorf("starved: %s of CPU in %s: want well under the wall time", starved, wall)
			}

			end := n.Invoke(ctx, history.Op{F: FUnstarve})
			if eh := history.HitOf(&end); end.Error != "" || eh == nil || eh.Lasted < window || len(end.Value.Ext().Targets) != 1 {
				t.Fatalf("end op %+v", end)
			}
			if dir != "" {
				if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("cgroup %s left after the end op: %v", dir, err)
				}
				if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup"); strings.Contains(string(b), clusters.ThrottlePrefix) {
					t.Errorf("process still in a throttle cgroup: %s", b)
				}
			}
			for _, p := range load {
				if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("busy neighbour %d outlived the end op", p)
				}
			}
			// At the quota, 500 ms of CPU takes 25 s; free, it takes half a
			// second of a core, longer on a busy machine.
			const want, bound = 500 * time.Millisecond, 15 * time.Second
			c1, w1 := cpuTime(t, pid), time.Now()
			for cpuTime(t, pid)-c1 < want && time.Since(w1) < bound {
				time.Sleep(50 * time.Millisecond)
			}
			fed, took := cpuTime(t, pid)-c1, time.Since(w1)
			t.Logf("after the end op: %s of CPU in %s of wall time", fed, took.Round(time.Millisecond))
			if fed < want {
				t.Errorf("after the end op: %s of CPU in %s: still throttled", fed, took)
			}
			if err := n.Heal(ctx); err != nil {
				t.Errorf("Heal after the end op: %v", err)
			}
		})
	}
}

// TestStarveHealsMidFault: Heal alone (a run that stops mid-fault) gives
// the CPU back, removes the cgroup and leaves no process stopped, by a
// cgroup and by the duty cycle; a second Heal has nothing to do.
func TestStarveHealsMidFault(t *testing.T) {
	for _, mech := range []string{"", clusters.ThrottleDutyCycle} {
		t.Run(map[string]string{"": "best"}[mech]+mech, func(t *testing.T) {
			pid := busyLoop(t)
			nm, _ := newStarve(holdersEnv{[]Target{{Process: 1, Pid: pid, Key: "k0", InCS: true}}}, rand.New(rand.NewPCG(1, 1)))
			n := nm.(*Starve)
			n.Mechanism = mech
			if op := n.Invoke(context.Background(), history.Op{F: FStarve}); op.Error != "" {
				t.Fatal(op.Error)
			}
			var dir string
			for th := range n.starved.items {
				dir = th.Dir
			}
			for i := 0; i < 2; i++ {
				began := time.Now()
				if err := n.Heal(context.Background()); err != nil {
					t.Fatalf("heal %d: %v", i, err)
				}
				t.Logf("heal %d took %s", i, time.Since(began))
			}
			if dir != "" {
				if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("cgroup %s left after Heal", dir)
				}
			}
			if waitStopped(pid, 100*time.Millisecond) {
				t.Error("process left stopped")
			}
		})
	}
}

// TestStarveServerSlowsRedis starves a real redis-server: a PING waits for
// the server's next turn (up to the 1 s period) while it lasts, and is
// quick again after.
func TestStarveServerSlowsRedis(t *testing.T) {
	if _, err := redisnode.LookRedis(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 1, Workers: 1, LogDir: t.TempDir()})
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Teardown(context.Background())
	var addr string
	for _, node := range r.Nodes() {
		if node.Name == "lock0" {
			addr = node.Addr
		}
	}
	nm, err := newStarveServer(clockEnv{c: r, lease: time.Second}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	start := nm.Invoke(ctx, history.Op{F: FStarveNode})
	hit := history.HitOf(&start)
	if start.Error != "" || hit == nil || hit.Nemesis != "starve-server" || hit.Mechanism == "" || len(start.Value.Ext().Nodes) != 1 || start.Value.Ext().Nodes[0] != "lock0" {
		t.Fatalf("start op %+v", start)
	}
	defer nm.Heal(context.Background())
	slowest := pingUntil(t, addr, func(d time.Duration) bool { return d >= 100*time.Millisecond })
	t.Logf("%s: slowest PING while starved %s", hit.Mechanism, slowest)
	if slowest < 100*time.Millisecond {
		t.Errorf("no PING of the starved server took 100 ms (slowest %s)", slowest)
	}
	if end := nm.Invoke(ctx, history.Op{F: FUnstarveNode}); end.Error != "" {
		t.Fatal(end.Error)
	}
	var fastest time.Duration
	for i := 0; i < 10; i++ {
		d := pingTime(t, addr)
		if fastest == 0 || d < fastest {
			fastest = d
		}
		if fastest < 20*time.Millisecond {
			break
		}
	}
	if fastest >= 20*time.Millisecond {
		t.Errorf("after the end op no PING took under 20 ms (fastest %s)", fastest)
	}
	if _, err := newStarveServer(clockEnv{c: noClock{}}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, clusters.ErrUnsupported) {
		t.Errorf("a cluster without server pids: %v, want ErrUnsupported", err)
	}
}

// pingUntil PINGs addr up to 10 times, until done says a reply time is
// enough, and returns the slowest.
func pingUntil(t *testing.T, addr string, done func(time.Duration) bool) time.Duration {
	var slowest time.Duration
	for i := 0; i < 10; i++ {
		d := pingTime(t, addr)
		slowest = max(slowest, d)
		if done(d) {
			break
		}
		time.Sleep(time.Duration(37*(i+1)) * time.Millisecond)
	}
	return slowest
}

// pingTime returns how long one PING on a fresh connection to addr takes
// to be answered.
func pingTime(t *testing.T, addr string) time.Duration {
	t.Helper()
	reply, sent, got := redisCommand(t, addr, "PING")
	if !strings.HasPrefix(reply, "+PONG") {
		t.Fatalf("PING %s: %q", addr, reply)
	}
	return got.Sub(sent)
}
