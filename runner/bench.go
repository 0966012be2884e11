package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workers"
	"github.com/lockcheck/lockcheck/workloads"
)

// Overhead compares grants per second through the harness with a plain
// one-process loop that does the same acquire -> cs -> release cycles with
// the same lock client.
type Overhead struct {
	HarnessGrants, PlainGrants int
	HarnessRate, PlainRate     float64
	Ratio                      float64
	// HarnessCPU and PlainCPU are the CPU time (user + system) of this
	// process and of every child it waited for during each measurement
	// (workers, servers, the in-process proxies; cluster setup included).
	HarnessCPU, PlainCPU time.Duration
	// PlainCommands is how many commands the lock and storage nodes served
	// during the plain loop (INFO total_commands_processed).
	PlainCommands int64
}

// cpuTime returns the user + system time of this process and of its
// children that have been waited for.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// BenchOverhead runs t (with no nemesis) through the harness, then the same
// cycles in one process against a fresh cluster for the same time.
func BenchOverhead(ctx context.Context, t Test, log io.Writer) (Overhead, error) {
	t.Nemesis = "none"
	t.Defaults()
	cpu0 := cpuTime()
	out, err := Run(ctx, t, log)
	if err != nil {
		return Overhead{}, err
	}
	harnessCPU := cpuTime() - cpu0
	h, err := history.ReadFile(out.Dir + "/history.jsonl")
	if err != nil {
		return Overhead{}, err
	}
	o := Overhead{HarnessCPU: harnessCPU}
	for _, op := range h {
		if op.F == history.FAcquire && op.Type == history.OK {
			o.HarnessGrants++
		}
	}
	o.HarnessRate = float64(o.HarnessGrants) / t.Time.Seconds()
	cpu0 = cpuTime()
	o.PlainGrants, o.PlainCommands, err = plainLoop(ctx, t)
	if err != nil {
		return o, err
	}
	o.PlainCPU = cpuTime() - cpu0
	o.PlainRate = float64(o.PlainGrants) / t.Time.Seconds()
	if o.PlainRate > 0 {
		o.Ratio = o.HarnessRate / o.PlainRate
	}
	return o, nil
}

// plainLoop runs t.Workers goroutines, each with its own lock client and
// resource, cycling acquire -> cs -> release for t.Time, and counts grants
// and the commands the servers processed meanwhile.
func plainLoop(ctx context.Context, t Test) (int, int64, error) {
	p, err := resolve(t)
	if err != nil {
		return 0, 0, err
	}
	design := p.design
	logDir, err := clusters.TempDir("bench-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(logDir)
	c := p.topology(t, logDir)
	if err := c.Setup(ctx); err != nil {
		return 0, 0, err
	}
	cmds0 := serverCommands(c)
	defer c.Teardown(context.WithoutCancel(ctx))
	if design.New == nil {
		// A library in another language: its own plain loop.
		n, err := plainCommand(ctx, t, design, c)
		return n, serverCommands(c) - cmds0, err
	}
	var grants atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(t.Time)
	errs := make(chan error, t.Workers)
	for i := 0; i < t.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := withSentinel(t.workerConfig(i, c.LockAddrs(i), c.StorageAddr()), c, i)
			l, err := design.New(cfg, rand.New(rand.NewPCG(t.Seed, uint64(i))), nil)
			if err != nil {
				errs <- err
				return
			}
			defer l.Close()
			res := workloads.NewResource(cfg)
			defer res.Close()
			for ctx.Err() == nil && time.Now().Before(deadline) {
				g, err := l.Acquire(ctx, "k0")
				if err != nil {
					continue
				}
				grants.Add(1)
				_, _ = res.CriticalSection(ctx, "k0", g.Token, nil)
				_, _ = l.Release(ctx, "k0", g)
			}
		}()
	}
	wg.Wait()
	cmds := serverCommands(c) - cmds0
	close(errs)
	for err := range errs {
		return 0, 0, fmt.Errorf("plain loop: %w", err)
	}
	return int(grants.Load()), cmds, nil
}

// serverCommands sums INFO's total_commands_processed over the cluster's
// Redis nodes (0 for nodes that are not Redis).
func serverCommands(c topology) int64 {
	var n int64
	for _, node := range c.Nodes() {
		n += redisCommands(node.Addr)
	}
	return n
}

// redisCommands asks the Redis server at addr how many commands it has
// processed; 0 when it does not answer as Redis does.
func redisCommands(addr string) int64 {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("INFO stats\r\n")); err != nil {
		return 0
	}
	r := bufio.NewReader(conn)
	for i := 0; i < 200; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// plainCommand runs the plain loop of a design with its own worker
// (Design.Plain) against cluster c: one thread per worker, each given the
// config that worker slot would get, for t.Time. It returns the grants the
// loop counted.
func plainCommand(ctx context.Context, t Test, design workloads.Design, c topology) (int, error) {
	if len(design.Plain) == 0 {
		return 0, fmt.Errorf("plain loop: design %s runs in its own worker and has no plain loop to compare with", design.Name)
	}
	argv, err := workers.Command(ctx, design.Plain)
	if err != nil {
		return 0, fmt.Errorf("plain loop: %w", err)
	}
	cfgs := make([]workloads.Config, t.Workers)
	for i := range cfgs {
		cfgs[i] = withSentinel(t.workerConfig(i, c.LockAddrs(i), c.StorageAddr()), c, i)
	}
	in, err := json.Marshal(struct {
		Seconds float64            `json:"seconds"`
		Workers []workloads.Config `json:"workers"`
	}{t.Time.Seconds(), cfgs})
	if err != nil {
		return 0, fmt.Errorf("plain loop: %w", err)
	}
	// The loop ends on its own after t.Time; a minute more covers a JVM's
	// start and its clients' close.
	cctx, cancel := context.WithTimeout(ctx, t.Time+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("plain loop %s: %w: %s", strings.Join(design.Plain, " "), err, lastLine(errOut.String()))
	}
	var res struct {
		Grants *int `json:"grants"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil || res.Grants == nil {
		return 0, fmt.Errorf("plain loop %s: want {\"grants\": N} on stdout, got %q", strings.Join(design.Plain, " "), out.String())
	}
	return *res.Grants, nil
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
