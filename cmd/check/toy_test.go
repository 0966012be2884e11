package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
	"github.com/lockcheck/lockcheck/workloads"
)

// This file registers, from test code only, a toy lock service (a toy
// server process: this test binary), a toy lock design that speaks to it
// and a toy fault with op names of its own, and runs them through the CLI:
// no file outside the tests names any of them. The test binary serves as
// the check binary with the toys registered when LOCKCHECK_TOY is set
// (toyMain, called from TestMain), so the registries of the package's other
// tests (the generated docs) are untouched.

// toyEnv is the environment variable that makes the test binary the check
// binary with the toys registered.
const toyEnv = "LOCKCHECK_TOY"

// toyServerArg makes the test binary, under toyEnv, the toy lock server.
const toyServerArg = "toy-server"

func TestMain(m *testing.M) {
	if os.Getenv(toyEnv) == "1" {
		os.Exit(toyMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// toyMain registers the toys and runs the check CLI, or the toy server.
func toyMain(args []string) int {
	if len(args) == 2 && args[0] == toyServerArg {
		if err := serveToy(args[1]); err != nil {
			fmt.Fprintln(os.Stderr, "toy server:", err)
			return 1
		}
		return 0
	}
	clusters.RegisterService(clusters.Service{Name: "toy", Summary: "a toy lock server (test only)", Packages: "none",
		Look: func() error { return nil }, New: func(cfg clusters.TopologyConfig) clusters.Topology { return &toyTopology{cfg: cfg} }})
	workloads.Register(workloads.Design{Name: "toy-lock", Service: "toy", LockNodes: 1, New: newToyLock,
		Summary: "ACQUIRE key owner ttl_ms / RELEASE key owner on the toy server (test only)"})
	nemesis.Register(nemesis.Kind{Name: "toy-stall", New: newToyStall,
		Summary: "SIGSTOP a holder's worker, SIGCONT it after the fault duration (test only)",
		Ops:     history.FaultOps{Start: "toy-stall", End: "toy-unstall", Class: history.ClassProcess, Exercise: history.ExerciseHolder}})
	return Main(args, os.Stdout, os.Stderr)
}

// serveToy is the toy lock server: one key per line command, leases by the
// server's clock.
func serveToy(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	type lease struct {
		owner string
		until time.Time
	}
	var mu sync.Mutex
	held := make(map[string]lease)
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				reply := "ERR"
				mu.Lock()
				switch {
				case len(f) == 4 && f[0] == "ACQUIRE":
					ms, _ := strconv.Atoi(f[3])
					if l, ok := held[f[1]]; ok && time.Now().Before(l.until) {
						reply = "BUSY"
					} else {
						held[f[1]] = lease{f[2], time.Now().Add(time.Duration(ms) * time.Millisecond)}
						reply = "OK"
					}
				case len(f) == 3 && f[0] == "RELEASE":
					reply = "GONE"
					if l, ok := held[f[1]]; ok && l.owner == f[2] && time.Now().Before(l.until) {
						delete(held, f[1])
						reply = "OK"
					}
				}
				mu.Unlock()
				if _, err := fmt.Fprintln(c, reply); err != nil {
					return
				}
			}
		}()
	}
}

// toyTopology is the toy server (this binary) and a Redis storage node,
// with one proxy per worker slot in front of the toy server.
type toyTopology struct {
	cfg     clusters.TopologyConfig
	server  *clusters.Proc
	addr    string
	storage *redisnode.RedisServer
	proxies *clusters.Proxies
	plog    *os.File
	links   []string
}

func (t *toyTopology) Setup(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	port, err := clusters.FreePort()
	if err != nil {
		return err
	}
	t.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := os.MkdirAll(t.cfg.LogDir, 0o755); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(t.cfg.LogDir, "toy0.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	if t.server, err = clusters.StartProcEnv(ctx, "toy0", []string{exe, toyServerArg, t.addr}, []string{toyEnv + "=1"}, t.cfg.LogDir, log); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", t.addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("toy server on %s: %w", t.addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.storage = &redisnode.RedisServer{Name: "storage", Dir: filepath.Join(t.cfg.LogDir, "storage"), LogPath: filepath.Join(t.cfg.LogDir, "storage.log")}
	if err := t.storage.Start(ctx); err != nil {
		return err
	}
	if t.proxies, t.plog, err = clusters.OpenProxies(t.cfg.LogDir); err != nil {
		return err
	}
	for slot := 0; slot < t.cfg.Workers; slot++ {
		a, err := t.proxies.Add(fmt.Sprintf("w%d-toy0", slot), t.addr)
		if err != nil {
			return err
		}
		t.links = append(t.links, a)
	}
	return nil
}

func (t *toyTopology) Teardown(ctx context.Context) error {
	if t.proxies != nil {
		t.proxies.Close()
		t.plog.Close()
		t.proxies = nil
	}
	var errs []error
	if t.storage != nil {
		errs = append(errs, t.storage.Stop(ctx))
	}
	if t.server != nil {
		errs = append(errs, t.server.Stop(ctx, time.Second))
	}
	return errors.Join(errs...)
}

func (t *toyTopology) Nodes() []clusters.Node {
	nodes := []clusters.Node{{Name: "toy0", Role: "lock", Addr: t.addr}}
	if t.storage != nil {
		nodes = append(nodes, clusters.Node{Name: "storage", Role: "storage", Addr: t.storage.Addr()})
	}
	return nodes
}

func (t *toyTopology) LockAddrs(slot int) []string { return []string{t.links[slot]} }
func (t *toyTopology) StorageAddr() string         { return t.storage.Addr() }

// toyLock is the toy design's client.
type toyLock struct {
	cfg workloads.Config
	rng *rand.Rand
	c   net.Conn
	r   *bufio.Reader
}

func newToyLock(cfg workloads.Config, rng *rand.Rand, _ func(string)) (workloads.Lock, error) {
	return &toyLock{cfg: cfg, rng: rng}, nil
}

// call sends one command and reads its reply; a broken connection is
// dropped, so the next call dials again.
func (l *toyLock) call(ctx context.Context, cmd string) (string, error) {
	if l.c == nil {
		c, err := net.DialTimeout("tcp", l.cfg.LockAddrs[0], l.cfg.OpTimeout())
		if err != nil {
			return "", workloads.Definite(err)
		}
		l.c, l.r = c, bufio.NewReader(c)
	}
	_ = l.c.SetDeadline(time.Now().Add(l.cfg.OpTimeout()))
	reply, err := func() (string, error) {
		if _, err := fmt.Fprintln(l.c, cmd); err != nil {
			return "", err
		}
		return l.r.ReadString('\n')
	}()
	if err != nil {
		l.c.Close()
		l.c = nil
		return "", err
	}
	return strings.TrimSpace(reply), ctx.Err()
}

func (l *toyLock) Acquire(ctx context.Context, key string) (workloads.Grant, error) {
	owner := fmt.Sprintf("p%d-%d", l.cfg.Process, l.rng.Int64())
	deadline := time.Now().Add(time.Duration(l.cfg.AcquireTimeoutMS) * time.Millisecond)
	for {
		reply, err := l.call(ctx, fmt.Sprintf("ACQUIRE %s %s %d", key, owner, l.cfg.LeaseMS))
		if err != nil {
			return workloads.Grant{}, err
		}
		if reply == "OK" {
			return workloads.Grant{Owner: owner}, nil
		}
		if time.Now().After(deadline) {
			return workloads.Grant{}, workloads.ErrNotAcquired
		}
		time.Sleep(time.Duration(l.cfg.RetryMS) * time.Millisecond)
	}
}

func (l *toyLock) Release(ctx context.Context, key string, g workloads.Grant) (*history.Value, error) {
	reply, err := l.call(ctx, "RELEASE "+key+" "+g.Owner)
	if err != nil {
		return nil, err
	}
	return &history.Value{Released: history.Bool(reply == "OK")}, nil
}

func (l *toyLock) Close() error {
	if l.c != nil {
		return l.c.Close()
	}
	return nil
}

// toyStall is the toy fault: SIGSTOP of a holder's worker, SIGCONT at its
// end, recorded under op names of its own.
type toyStall struct {
	env     nemesis.Env
	rng     *rand.Rand
	stopped map[int]int // pid -> process
	since   time.Time
}

func newToyStall(env nemesis.Env, rng *rand.Rand) (nemesis.Nemesis, error) {
	return &toyStall{env: env, rng: rng, stopped: make(map[int]int)}, nil
}

func (n *toyStall) Fs() (string, string) { return "toy-stall", "toy-unstall" }

func (n *toyStall) Invoke(ctx context.Context, op history.Op) history.Op {
	op.Type = history.Info
	if op.F == "toy-unstall" {
		var procs []int
		for pid, p := range n.stopped {
			_ = syscall.Kill(-pid, syscall.SIGCONT)
			procs = append(procs, p)
		}
		n.stopped = make(map[int]int)
		op.Value = &history.Value{Extra: &history.Extra{Targets: procs, Hit: &history.Hit{Nemesis: "toy-stall", Lasted: time.Since(n.since)}}}
		return op
	}
	for deadline := time.Now().Add(2 * time.Second); ctx.Err() == nil && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		hs := n.env.Holders()
		if len(hs) == 0 {
			continue
		}
		h := hs[n.rng.IntN(len(hs))]
		if err := syscall.Kill(-h.Pid, syscall.SIGSTOP); err != nil {
			op.Error = err.Error()
			return op
		}
		n.stopped[h.Pid], n.since = h.Process, time.Now()
		op.Value = &history.Value{Extra: &history.Extra{Targets: []int{h.Process}, Hit: &history.Hit{Nemesis: "toy-stall", Holder: true, Key: h.Key}}}
		return op
	}
	op.Error = "no worker held a lock"
	return op
}

func (n *toyStall) Heal(context.Context) error {
	for pid := range n.stopped {
		_ = syscall.Kill(-pid, syscall.SIGCONT)
	}
	n.stopped = make(map[int]int)
	return nil
}

// toyCheck runs the test binary as the check binary with the toys
// registered and returns its exit code and output.
func toyCheck(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), toyEnv+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestToyFaultAndService registers a fault and a service from test code
// and checks that check list shows them, that a run on the service with
// the fault records the fault's own ops, judges it in the exercise checker
// and draws it in the report in its class's colour.
func TestToyFaultAndService(t *testing.T) {
	if _, err := redisnode.LookRedis(); err != nil {
		t.Skip(err)
	}
	code, out := toyCheck(t, "list")
	for _, want := range []string{"toy-lock", "toy-stall", "a toy lock server (test only)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("check list: exit %d, no %q in:\n%s", code, want, out)
		}
	}
	store := t.TempDir()
	code, out = toyCheck(t, "run", "--lock", "toy-lock", "--nemesis", "toy-stall", "--workers", "3", "--time", "8s",
		"--lease", "300ms", "--think", "5ms", "--nemesis-interval", "1s", "--nemesis-duration", "900ms", "--seed", "1",
		"--store", store, "--quiet")
	if code == exitError || code == exitInterrupted {
		t.Fatalf("check run: exit %d:\n%s", code, out)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(store, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// This process has not registered the toys: it reads the ops as stored.
	stalls := 0
	for _, op := range h {
		if op.IsNemesis() && op.F == "toy-stall" && op.Type == history.Info && op.Error == "" {
			stalls++
		}
	}
	if stalls == 0 {
		t.Fatalf("no toy-stall op in the history; check run said:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Results []struct {
			Checker string         `json:"checker"`
			Stats   map[string]any `json:"stats"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var byKind map[string]any
	for _, r := range res.Results {
		if r.Checker == "exercise" {
			byKind, _ = r.Stats["by_nemesis"].(map[string]any)
		}
	}
	if _, ok := byKind["toy-stall"]; !ok {
		t.Errorf("the exercise checker did not judge toy-stall faults: %s", b)
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "fb-"+history.ClassProcess) || !strings.Contains(string(report), "toy-stall") {
		t.Error("the report draws no toy-stall band in the process class's colour")
	}
	t.Logf("check run: exit %d\n%s", code, out)
}
