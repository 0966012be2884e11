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
	// HarnessWorkerCPU is the part of HarnessCPU the worker processes used;
	// HarnessServerCPU and PlainServerCPU the part the lock service and
	// storage servers used (every other child). The rest is this process:
	// the controller or the plain loop, with the proxies.
	HarnessWorkerCPU, HarnessServerCPU, PlainServerCPU time.Duration
	// HarnessCommands and PlainCommands are how many commands the Redis
	// lock nodes served during each measurement (INFO
	// total_commands_processed; the storage node's GET and SET are not
	// counted); 0 for other services. LockNodes is how many there are.
	HarnessCommands, PlainCommands int64
	LockNodes                      int
	// ServerRate is how many commands per second one lock node served to
	// t.Workers plain clients of its own, each sending SET NX PX and waiting
	// for the reply, flat out for serverRateTime, with no proxy between: the
	// Redis server's own rate on this machine. 0 for other services.
	ServerRate float64
}

// serverRateTime is how long BenchOverhead drives the lock node flat out.
const serverRateTime = 2 * time.Second

// cpuTimes returns the user + system time of this process, and of its
// children that have been waited for.
func cpuTimes() (self, children time.Duration) {
	get := func(who int) time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return get(syscall.RUSAGE_SELF), get(syscall.RUSAGE_CHILDREN)
}

// BenchOverhead runs t (with no nemesis) through the harness, then the same
// cycles in one process against a fresh cluster for the same time, and
// then, on a third cluster, drives a lock node flat out (ServerRate).
func BenchOverhead(ctx context.Context, t Test, log io.Writer) (Overhead, error) {
	if t.Nemesis == "" || !armedOnly(t.Nemesis) {
		t.Nemesis = "none"
	}
	t.Defaults()
	t.countCommands = true
	p, err := Resolve(t)
	if err != nil {
		return Overhead{}, err
	}
	t = p.Test
	self0, child0 := cpuTimes()
	out, granted, err := harnessRun(ctx, p, log)
	if err != nil {
		return Overhead{}, err
	}
	self1, child1 := cpuTimes()
	o := Overhead{HarnessCPU: self1 - self0 + child1 - child0, HarnessWorkerCPU: out.WorkerCPU,
		HarnessServerCPU: max(0, child1-child0-out.WorkerCPU), HarnessCommands: out.Commands, HarnessGrants: granted}
	o.HarnessRate = float64(o.HarnessGrants) / t.Time.Seconds()
	self0, child0 = cpuTimes()
	var plain plainResult
	plain, err = plainLoop(ctx, p)
	if err != nil {
		return o, err
	}
	self1, child1 = cpuTimes()
	o.PlainGrants, o.PlainCommands, o.LockNodes = plain.grants, plain.commands, plain.lockNodes
	o.PlainCPU, o.PlainServerCPU = self1-self0+child1-child0, child1-child0
	o.PlainRate = float64(o.PlainGrants) / t.Time.Seconds()
	if o.PlainRate > 0 {
		o.Ratio = o.HarnessRate / o.PlainRate
	}
	if o.PlainCommands > 0 {
		if o.ServerRate, err = lockNodeRate(ctx, p); err != nil {
			return o, err
		}
	}
	return o, nil
}

// ArmedSpec is a --nemesis value whose triggered faults are armed on
// every op a run records but never fire within a bench's run (each waits
// for its millionth event): check bench --armed measures what the trigger
// engine costs the record path.
const ArmedSpec = "pause@grant#1000000,partition@cs#1000000+1ms,pause@release#1000000+1ms,pause@rival#1000000"

// armedOnly reports whether spec is ArmedSpec: the only faults a bench
// runs.
func armedOnly(spec string) bool { return spec == ArmedSpec }

// harnessRun runs p through the harness and returns its outcome and how
// many acquires it granted.
func harnessRun(ctx context.Context, p *Plan, log io.Writer) (Outcome, int, error) {
	out, err := p.Run(ctx, log)
	if err != nil {
		return out, 0, err
	}
	h, err := history.ReadFile(out.Dir + "/history.jsonl")
	if err != nil {
		return out, 0, err
	}
	granted := 0
	for _, op := range h {
		if op.F == history.FAcquire && op.Type == history.OK {
			granted++
		}
	}
	return out, granted, nil
}

// ObserverCost compares grants per second through the harness with the
// topology's release observer (as every run has it) and without it
// (Test.NoObserve).
type ObserverCost struct {
	// Observed and Unobserved are the grants per second with and without
	// the observer; ObservedGrants and UnobservedGrants the grants.
	ObservedGrants, UnobservedGrants int
	Observed, Unobserved             float64
	// Cost is the share of the grants per second the observer took:
	// 1 - Observed/Unobserved (negative when the run with it granted more).
	Cost float64
	// ObservedCommands and UnobservedCommands are the commands the Redis
	// lock nodes served in each run (0 for other services); the observer's
	// own commands are among the first.
	ObservedCommands, UnobservedCommands int64
	// ObservedCPU and UnobservedCPU are the CPU time (user + system) this
	// process and the children it waited for (workers, servers) used in
	// each run, cluster setup included; ObservedSelfCPU and
	// UnobservedSelfCPU this process's part (the controller, the
	// proxies and the observer).
	ObservedCPU, UnobservedCPU         time.Duration
	ObservedSelfCPU, UnobservedSelfCPU time.Duration
	// HasObserver is false when the design's topology has no observer:
	// both runs are then the same.
	HasObserver bool
}

// BenchObserver runs t (with no nemesis) through the harness twice, each on
// a fresh cluster: with the release observer and without it, in that order
// when observedFirst, else the other way round (alternate it over rounds,
// so that a machine whose load drifts does not favour one).
func BenchObserver(ctx context.Context, t Test, log io.Writer, observedFirst bool) (ObserverCost, error) {
	t.Nemesis = "none"
	t.Defaults()
	t.countCommands = true
	var c ObserverCost
	for i := 0; i < 2; i++ {
		tt := t
		tt.NoObserve = (i == 0) != observedFirst
		p, err := Resolve(tt)
		if err != nil {
			return c, err
		}
		self0, child0 := cpuTimes()
		out, granted, err := harnessRun(ctx, p, log)
		if err != nil {
			return c, err
		}
		self1, child1 := cpuTimes()
		self, all := self1-self0, self1-self0+child1-child0
		rate := float64(granted) / p.Test.Time.Seconds()
		if tt.NoObserve {
			c.UnobservedGrants, c.Unobserved, c.UnobservedCommands = granted, rate, out.Commands
			c.UnobservedCPU, c.UnobservedSelfCPU = all, self
		} else {
			c.ObservedGrants, c.Observed, c.ObservedCommands = granted, rate, out.Commands
			c.ObservedCPU, c.ObservedSelfCPU = all, self
			c.HasObserver = observed(out)
		}
	}
	if c.Unobserved > 0 {
		c.Cost = 1 - c.Observed/c.Unobserved
	}
	return c, nil
}

// observed reports whether a run's windows checker saw the observer's
// probes.
func observed(out Outcome) bool {
	for _, sub := range out.Result.Results {
		if sub.Checker == "windows" {
			n, _ := sub.Stats["probes"].(int)
			return n > 0
		}
	}
	return false
}

// plainResult is what one plain loop measured.
type plainResult struct {
	grants    int
	commands  int64 // served by the Redis lock nodes during the loop
	lockNodes int
}

// withCluster sets up a fresh cluster for p (with no nemesis), runs f on
// it, and tears it down.
func withCluster(ctx context.Context, p *Plan, f func(c topology) error) error {
	logDir, err := clusters.TempDir("bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(logDir)
	c := p.topology(logDir)
	if err := c.Setup(ctx); err != nil {
		return err
	}
	defer c.Teardown(context.WithoutCancel(ctx))
	return f(c)
}

// plainLoop runs t.Workers goroutines, each with its own lock client and
// resource, cycling acquire -> cs -> release for t.Time, and counts grants
// and the commands the servers processed meanwhile.
func plainLoop(ctx context.Context, p *Plan) (plainResult, error) {
	var res plainResult
	t := p.Test
	err := withCluster(ctx, p, func(c topology) error {
		cmds0 := lockCommands(c)
		var err error
		if p.Design.New == nil {
			// A library in another language: its own plain loop.
			res.grants, err = plainCommand(ctx, t, p.Design, c)
		} else {
			res.grants, err = plainGoroutines(ctx, t, p.Design, c)
		}
		res.commands, res.lockNodes = lockCommands(c)-cmds0, len(lockAddrs(c))
		return err
	})
	if err != nil {
		return plainResult{}, err
	}
	return res, nil
}

// lockNodeRate sets up a fresh cluster for t and returns its first lock
// node's own rate (serverRate), so that the plain loop's CPU figures do not
// include it.
func lockNodeRate(ctx context.Context, p *Plan) (float64, error) {
	var rate float64
	err := withCluster(ctx, p, func(c topology) error {
		rate = serverRate(ctx, c, p.Test.Workers, serverRateTime)
		return nil
	})
	return rate, err
}

// plainGoroutines is the plain loop of a design run by check worker.
func plainGoroutines(ctx context.Context, t Test, design workloads.Design, c topology) (int, error) {
	var grants atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(t.Time)
	errs := make(chan error, t.Workers)
	for i := 0; i < t.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := withLinks(t.workerConfig(i, c.LockAddrs(i), c.StorageAddr()), c, i)
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
	close(errs)
	for err := range errs {
		return 0, fmt.Errorf("plain loop: %w", err)
	}
	return int(grants.Load()), nil
}

// lockAddrs lists the addresses of the cluster's lock nodes.
func lockAddrs(c topology) []string {
	var addrs []string
	for _, node := range c.Nodes() {
		if node.Role == "lock" {
			addrs = append(addrs, node.Addr)
		}
	}
	return addrs
}

// lockCommands sums INFO's total_commands_processed over the cluster's
// lock nodes (0 for nodes that are not Redis).
func lockCommands(c topology) int64 {
	var n int64
	for _, addr := range lockAddrs(c) {
		n += redisCommands(addr)
	}
	return n
}

// serverRate drives the first lock node of c directly (no proxy) over
// clients connections, each sending SET NX PX on one key (as a polling
// acquire does) and waiting for its reply, for d; it returns the commands
// per second the node served, or 0 when the node does not answer as Redis
// does.
func serverRate(ctx context.Context, c topology, clients int, d time.Duration) float64 {
	addrs := lockAddrs(c)
	if len(addrs) == 0 || redisCommands(addrs[0]) == 0 {
		return 0
	}
	addr := addrs[0]
	var served atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(deadline.Add(time.Second))
			r := bufio.NewReader(conn)
			cmd := []byte(fmt.Sprintf("SET lockcheck-bench-server-rate %d NX PX 5\r\n", i))
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if _, err := conn.Write(cmd); err != nil {
					return
				}
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
				served.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(served.Load()) / d.Seconds()
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
		cfgs[i] = withLinks(t.workerConfig(i, c.LockAddrs(i), c.StorageAddr()), c, i)
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
