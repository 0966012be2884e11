package containers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	dnetwork "github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/lockcheck/lockcheck/clusters"
)

// clockMount is where a node's clock directory is mounted in its container;
// the clock shim reads clockMount/clock.
const clockMount = "/lockcheck-clock"

// ShimPath is the clock shim inside lockcheck's images.
const ShimPath = "/usr/local/lib/libclockshim.so"

// teardownWait bounds Teardown's calls to the engine.
const teardownWait = 60 * time.Second

// NodeSpec describes one container to start.
type NodeSpec struct {
	Name  string // node name: lock0, zk1, storage
	Role  string // lock or storage
	Image Image
	Cmd   []string          // command (nil: the image's)
	Env   map[string]string // environment
	Port  string            // the service port in the container, "6379/tcp"
	// Nets are the networks the container joins, the first at creation
	// (its published port goes through that one); aliases[i] are its names
	// on Nets[i].
	Nets    []*testcontainers.DockerNetwork
	Aliases [][]string
	// Wait is what the container logs once it serves.
	Wait wait.Strategy
	// Clock runs the server under the Clock shim: its offset file is
	// clockMount/Clock, a bind mount of a host file the node's Clocker
	// writes.
	Clock bool
}

// Container is one running container.
type Container struct {
	Spec      NodeSpec
	c         *testcontainers.DockerContainer
	id        string
	hostPort  int    // the service port, published on 127.0.0.1
	ClockFile string // host path of the clock offset file, "" when no shim
	// stopping is set while the harness has the container down (a kill
	// fault, the teardown): its exit then is expected.
	stopping atomic.Bool
}

// Addr is the node's published address on the host.
func (n *Container) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.hostPort)) }

// Stack is what every container topology shares: the engine, the run's
// labels, the networks and containers it started, the proxies of the worker
// links and the host directory of the clock files.
type Stack struct {
	Cfg     clusters.TopologyConfig
	runID   string
	owner   string
	eng     *engine
	tmp     string // clock files
	proxies *clusters.Proxies
	proxyLg *os.File
	// Set holds the lock nodes and their worker slots' proxies.
	Set clusters.NodeSet
	// Faults kills a lock node's container (its clients' proxies stopped
	// while it is down) and starts it again (then waits until it serves),
	// pauses and unpauses it, cuts and heals a worker slot's links.
	clusters.Faults

	// Lock and storage are the Lock nodes and the storage node Setup
	// started.
	Lock    []*Container
	Storage *Container

	mu    sync.Mutex
	torn  bool
	nets  []*testcontainers.DockerNetwork
	nodes []*Container

	// watchCtx lives until the teardown; the container watches (watch)
	// wait under it.
	watchCtx  context.Context
	endWatch  context.CancelFunc
	onExit    clusters.ExitFunc
	watchOnce sync.Once
}

// SetUp opens the stack (see open), then runs start; when either fails,
// whatever was started is removed.
func (s *Stack) SetUp(ctx context.Context, start func() error) (err error) {
	defer func() {
		if err != nil {
			_ = s.teardown(ctx)
		}
	}()
	if err := s.open(ctx); err != nil {
		return err
	}
	return start()
}

// Teardown removes the containers, the networks and the proxies.
func (s *Stack) Teardown(ctx context.Context) error { return s.teardown(ctx) }

// Nodes lists the lock nodes, then the storage node, at their published
// addresses.
func (s *Stack) Nodes() []clusters.Node {
	var nodes []clusters.Node
	for _, n := range s.Lock {
		nodes = append(nodes, clusters.Node{Name: n.Spec.Name, Role: "lock", Addr: n.Addr()})
	}
	if s.Storage != nil {
		nodes = append(nodes, clusters.Node{Name: "storage", Role: "storage", Addr: s.Storage.Addr()})
	}
	return nodes
}

// LockAddrs returns the proxy addresses worker slot uses, one per lock
// node.
func (s *Stack) LockAddrs(slot int) []string { return s.Set.LockAddrs(slot) }

// StorageAddr returns the storage container's published address.
func (s *Stack) StorageAddr() string { return s.Storage.Addr() }

// open connects to the engine and prepares the run's labels, log
// directory and proxies.
func (s *Stack) open(ctx context.Context) (err error) {
	if s.eng, err = connect(ctx); err != nil {
		return err
	}
	if s.owner, err = clusters.OwnerRecord(); err != nil {
		return fmt.Errorf("record the owner of the containers: %w", err)
	}
	s.runID = sanitize(s.Cfg.RunID)
	if s.runID == "" {
		s.runID = fmt.Sprintf("run%d-%d", os.Getpid(), time.Now().UnixNano()%1e9)
	}
	if s.proxies, s.proxyLg, err = clusters.OpenProxies(s.Cfg.LogDir); err != nil {
		return err
	}
	if s.Cfg.ClockShim {
		if s.tmp, err = clusters.TempDir("docker-"); err != nil {
			return fmt.Errorf("create clock dir: %w", err)
		}
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// sanitize makes s usable in a container name.
func sanitize(s string) string { return strings.Trim(unsafeName.ReplaceAllString(s, "-"), "-.") }

// Network creates a private Network labelled with the run; internal
// networks reach nothing outside and publish no ports.
func (s *Stack) Network(ctx context.Context, internal bool) (*testcontainers.DockerNetwork, error) {
	opts := []network.NetworkCustomizer{network.WithLabels(labels(s.runID, s.owner))}
	if internal {
		opts = append(opts, network.WithInternal())
	}
	nw, err := network.New(ctx, opts...)
	if nw != nil {
		s.mu.Lock()
		s.nets = append(s.nets, nw)
		s.mu.Unlock()
	}
	if err != nil {
		return nil, fmt.Errorf("create docker network: %w", err)
	}
	return nw, nil
}

// start creates and starts a container for spec, waits for its wait
// strategy, and returns it. Its service port is published on a free
// 127.0.0.1 port that stays the same across a kill and start.
func (s *Stack) start(ctx context.Context, spec NodeSpec) (*Container, error) {
	hostPort, err := clusters.FreePort()
	if err != nil {
		return nil, err
	}
	n := &Container{Spec: spec, hostPort: hostPort}
	lbls := labels(s.runID, s.owner)
	lbls[LabelNode] = spec.Name
	env := map[string]string{}
	for k, v := range spec.Env {
		env[k] = v
	}
	var binds []string
	if spec.Clock {
		dir := filepath.Join(s.tmp, spec.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s clock dir: %w", spec.Name, err)
		}
		n.ClockFile = filepath.Join(dir, "clock")
		if err := clusters.WriteClockOffset(n.ClockFile, 0); err != nil {
			return nil, err
		}
		binds = append(binds, dir+":"+clockMount+":ro")
		env[clusters.ClockFileEnv] = clockMount + "/clock"
	}
	first := spec.Nets[0].Name
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithName(fmt.Sprintf("lockcheck-%s-%d-%s", s.runID, os.Getpid(), spec.Name)),
		testcontainers.WithLabels(lbls),
		testcontainers.WithEnv(env),
		testcontainers.WithExposedPorts(fmt.Sprintf("127.0.0.1:%d:%s", hostPort, spec.Port)),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = container.NetworkMode(first)
			hc.Binds = append(hc.Binds, binds...)
		}),
		testcontainers.WithWaitStrategyAndDeadline(90*time.Second, spec.Wait),
	}
	for i, nw := range spec.Nets {
		opts = append(opts, network.WithNetwork(spec.Aliases[i], nw))
	}
	if spec.Cmd != nil {
		opts = append(opts, testcontainers.WithCmd(spec.Cmd...))
	}
	c, err := testcontainers.Run(ctx, spec.Image.Ref(), opts...)
	if c != nil {
		n.c, n.id = c, c.GetContainerID()
		s.mu.Lock()
		s.nodes = append(s.nodes, n)
		s.mu.Unlock()
	}
	if err != nil {
		return nil, fmt.Errorf("start container %s (%s): %w", spec.Name, spec.Image.Ref(), err)
	}
	s.watch(ctx, n)
	return n, nil
}

// watch reports n's container to the exit watch ctx carries
// (clusters.WithExitWatch) if it stops while the harness did not stop it:
// the container counterpart of a local server process's exit. It waits on
// the engine until the container is no longer running; a restart watches
// it again.
func (s *Stack) watch(ctx context.Context, n *Container) {
	s.watchOnce.Do(func() {
		wctx, end := context.WithCancel(context.WithoutCancel(ctx))
		s.mu.Lock()
		s.watchCtx, s.endWatch = wctx, end
		s.mu.Unlock()
		s.onExit = clusters.ExitWatchFrom(ctx)
	})
	if s.onExit == nil {
		return
	}
	done, errc := s.eng.cli.ContainerWait(s.watchCtx, n.id, container.WaitConditionNotRunning)
	go func() {
		var status string
		select {
		case r := <-done:
			status = fmt.Sprintf("container exited with status %d", r.StatusCode)
		case err := <-errc:
			if s.watchCtx.Err() != nil {
				return // torn down
			}
			status = fmt.Sprintf("container wait failed: %v", err)
		}
		s.mu.Lock()
		torn := s.torn
		s.mu.Unlock()
		if torn || n.stopping.Load() || s.watchCtx.Err() != nil {
			return
		}
		s.onExit(clusters.ServerExit{Name: n.Spec.Name, Pid: 0, Status: status,
			Log: filepath.Join(s.Cfg.LogDir, n.Spec.Name+".log"), Tail: s.logTail(n)})
	}()
}

// logTail returns the last lines of a container's output, for an exit
// report.
func (s *Stack) logTail(n *Container) []string {
	ctx, cancel := context.WithTimeout(s.watchCtx, 5*time.Second)
	defer cancel()
	rc, err := s.eng.cli.ContainerLogs(ctx, n.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "5"})
	if err != nil {
		return nil
	}
	defer rc.Close()
	var out strings.Builder
	if _, err := stdcopy.StdCopy(&out, &out, io.LimitReader(rc, 64<<10)); err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// StartAll starts every spec at once and returns the nodes in spec order.
func (s *Stack) StartAll(ctx context.Context, specs []NodeSpec) ([]*Container, error) {
	nodes := make([]*Container, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = s.start(ctx, spec)
		}()
	}
	wg.Wait()
	return nodes, errors.Join(errs...)
}

// FaultVerb names the engine's faults for the history (clusters.FaultVerber).
func (s *Stack) FaultVerb(fault string) string {
	return map[string]string{"pause": "docker pause", "kill": "docker kill",
		"isolate": "disconnected from its peers' network"}[fault]
}

// pause freezes a container's processes (docker pause, the cgroup
// freezer).
func (s *Stack) pause(ctx context.Context, n *Container) error {
	if err := s.eng.cli.ContainerPause(ctx, n.id); err != nil {
		return fmt.Errorf("docker pause %s: %w", n.Spec.Name, err)
	}
	return nil
}

// unpause thaws a paused container; one that is not paused needs nothing.
func (s *Stack) unpause(ctx context.Context, n *Container) error {
	st, err := s.eng.cli.ContainerInspect(ctx, n.id)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", n.Spec.Name, err)
	}
	if st.State == nil || !st.State.Paused {
		return nil
	}
	if err := s.eng.cli.ContainerUnpause(ctx, n.id); err != nil {
		return fmt.Errorf("docker unpause %s: %w", n.Spec.Name, err)
	}
	return nil
}

// kill crashes a container (SIGKILL to every process in it); a paused one
// is thawed first, as the engine refuses to kill a paused container.
func (s *Stack) kill(ctx context.Context, n *Container) error {
	n.stopping.Store(true)
	if err := s.unpause(ctx, n); err != nil {
		return err
	}
	if err := s.eng.cli.ContainerKill(ctx, n.id, "KILL"); err != nil {
		return fmt.Errorf("docker kill %s: %w", n.Spec.Name, err)
	}
	return nil
}

// running reports whether the container runs (paused counts).
func (s *Stack) running(ctx context.Context, n *Container) (bool, error) {
	st, err := s.eng.cli.ContainerInspect(ctx, n.id)
	if err != nil {
		return false, fmt.Errorf("inspect %s: %w", n.Spec.Name, err)
	}
	return st.State != nil && st.State.Running, nil
}

// restart starts a killed container again, with its file system (and so
// its data) and its published port as they were; a running one needs
// nothing.
func (s *Stack) restart(ctx context.Context, n *Container) error {
	if up, err := s.running(ctx, n); err != nil || up {
		return err
	}
	if err := s.eng.cli.ContainerStart(ctx, n.id, container.StartOptions{}); err != nil {
		return fmt.Errorf("docker start %s: %w", n.Spec.Name, err)
	}
	n.stopping.Store(false)
	s.watch(ctx, n)
	return nil
}

// server is a lock node's container as a clusters.NodeSet faults it:
// docker kill, docker start (then serving waits until it serves again),
// docker pause and unpause.
type server struct {
	s       *Stack
	n       *Container
	serving func(ctx context.Context) error
}

// Link links the lock nodes into the set, each as a server (serving
// waits until a restarted one serves again), and makes the worker slots'
// proxies to their published addresses.
func (s *Stack) Link(serving func(ctx context.Context, n *Container) error) error {
	nodes := make([]clusters.SetNode, len(s.Lock))
	for i, n := range s.Lock {
		nodes[i] = clusters.SetNode{Name: n.Spec.Name, Addr: n.Addr(),
			Server: server{s: s, n: n, serving: func(ctx context.Context) error { return serving(ctx, n) }}}
	}
	return s.Set.Link(s.proxies, s.Cfg.Workers, nodes)
}

func (c server) Kill(ctx context.Context) error { return c.s.kill(ctx, c.n) }

func (c server) Restart(ctx context.Context) error {
	if err := c.s.restart(ctx, c.n); err != nil {
		return err
	}
	if err := c.serving(ctx); err != nil {
		return fmt.Errorf("restart %s: %w", c.n.Spec.Name, err)
	}
	return nil
}

func (c server) Signal(ctx context.Context, sig syscall.Signal) error {
	if sig == syscall.SIGSTOP {
		return c.s.pause(ctx, c.n)
	}
	return c.s.unpause(ctx, c.n)
}

// Disconnect takes a container off a network (its peers'); connect puts it
// back with its aliases.
func (s *Stack) Disconnect(ctx context.Context, n *Container, nw *testcontainers.DockerNetwork) error {
	if err := s.eng.cli.NetworkDisconnect(ctx, nw.ID, n.id, true); err != nil {
		return fmt.Errorf("disconnect %s from its peers' network: %w", n.Spec.Name, err)
	}
	return nil
}

func (s *Stack) Connect(ctx context.Context, n *Container, nw *testcontainers.DockerNetwork, aliases []string) error {
	st, err := s.eng.cli.ContainerInspect(ctx, n.id)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", n.Spec.Name, err)
	}
	if st.NetworkSettings != nil {
		if _, ok := st.NetworkSettings.Networks[nw.Name]; ok {
			return nil
		}
	}
	if err := s.eng.cli.NetworkConnect(ctx, nw.ID, n.id, &dnetwork.EndpointSettings{Aliases: aliases}); err != nil {
		return fmt.Errorf("reconnect %s to its peers' network: %w", n.Spec.Name, err)
	}
	return nil
}

// saveLog writes a container's output to the run's nodes/ directory.
func (s *Stack) saveLog(ctx context.Context, n *Container) error {
	rc, err := s.eng.cli.ContainerLogs(ctx, n.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Timestamps: true})
	if err != nil {
		return fmt.Errorf("logs of %s: %w", n.Spec.Name, err)
	}
	defer rc.Close()
	f, err := os.Create(filepath.Join(s.Cfg.LogDir, n.Spec.Name+".log"))
	if err != nil {
		return fmt.Errorf("save log of %s: %w", n.Spec.Name, err)
	}
	defer f.Close()
	if _, err := stdcopy.StdCopy(f, f, io.LimitReader(rc, 64<<20)); err != nil {
		return fmt.Errorf("save log of %s: %w", n.Spec.Name, err)
	}
	return nil
}

// teardown saves every container's log and removes the containers and
// networks of the run (by label too, which catches a container whose
// creation was interrupted), the proxies and the clock files. It is
// idempotent.
func (s *Stack) teardown(ctx context.Context) error {
	s.mu.Lock()
	if s.torn {
		s.mu.Unlock()
		return nil
	}
	s.torn = true
	nodes, nets := s.nodes, s.nets
	endWatch := s.endWatch
	s.mu.Unlock()
	for _, n := range nodes {
		n.stopping.Store(true)
	}
	if endWatch != nil {
		endWatch()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownWait)
	defer cancel()
	if s.proxies != nil {
		s.proxies.Close()
	}
	if s.proxyLg != nil {
		s.proxyLg.Close()
	}
	var errs []error
	if s.eng != nil {
		for _, n := range nodes {
			_ = s.saveLog(ctx, n) // a log is worth having, not worth failing for
			errs = append(errs, s.eng.removeContainer(ctx, n.id))
		}
		for _, nw := range nets {
			errs = append(errs, nw.Remove(ctx))
		}
		errs = append(errs, s.eng.removeRun(ctx, s.runID, s.owner))
		s.eng.close()
	}
	if s.tmp != "" && strings.Contains(s.tmp, clusters.TempPrefix+"docker-") {
		errs = append(errs, os.RemoveAll(s.tmp))
	}
	return errors.Join(errs...)
}

// WaitFor polls ready every 50 ms until it returns nil, ctx ends or
// timeout passes (clusters.Poll).
func WaitFor(ctx context.Context, timeout time.Duration, what string, ready func() error) error {
	return clusters.Poll(ctx, timeout, ready, what)
}
