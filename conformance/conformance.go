// Package conformance drives a worker through the worker protocol
// (docs/worker-protocol.md) against a real lock service started through
// clusters, and reports each rule of the protocol it breaks, in words. It
// is `check conformance`; every worker lockcheck ships passes it in a test.
// It imports clusters, history and workloads.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	// The services in folders of their own register when linked in.
	_ "github.com/lockcheck/lockcheck/services"
	"github.com/lockcheck/lockcheck/workloads"
)

// The rules a worker must keep, as the report names them.
const (
	RuleReplies    = "replies in order and one per request"
	RuleVersion    = "open refuses an unknown protocol version"
	RuleOpen       = "open replies ok with the protocol version"
	RuleCycle      = "acquire, cs and release complete ok with the fields the checkers read"
	RuleAfterLease = "a request after the lease gives a prompt reply"
	RuleTimeout    = "a timeout is info, not fail"
	RuleProxies    = "commands go through the proxies: they fail while the links are cut and work once healed"
	RuleWholeLines = "events are whole lines"
	RuleClose      = "close exits"
	RuleStdoutOnly = "stdout carries nothing but protocol lines"
	RuleFenced     = "with fencing, the resource refuses a token below the highest it has seen"
)

// Rules lists every rule in the order the report prints them.
var Rules = []string{RuleOpen, RuleVersion, RuleReplies, RuleCycle, RuleAfterLease, RuleTimeout,
	RuleProxies, RuleFenced, RuleWholeLines, RuleClose, RuleStdoutOnly}

// RulesFor lists the rules a worker of design d is checked for: every
// rule but RuleFenced for a design with no fencing tokens.
func RulesFor(d workloads.Design) []string {
	if d.Tokens {
		return Rules
	}
	var out []string
	for _, r := range Rules {
		if r != RuleFenced {
			out = append(out, r)
		}
	}
	return out
}

// DialsAround is how the report says that a worker's lock commands
// succeeded while every link of its worker slot to the lock nodes was cut:
// it reaches the lock service some other way than through the addresses it
// was given, so no partition of a run would ever cut it.
const DialsAround = "the worker's commands succeeded while its links to the lock nodes were cut: " +
	"it dials around the proxies (addresses in lock_addrs/addr_map must be used as given)"

// Options says which worker to check and how.
type Options struct {
	// Worker is the worker's argv.
	Worker []string
	// Env is added to the worker's environment.
	Env []string
	// Lock is the design whose name the worker is opened with; it picks the
	// lock service (redis, zookeeper) and its topology.
	Lock string
	// Dir receives the node logs and the workers' stderr (workers.log).
	Dir string
	// Lease is the lease the worker is opened with (default 1 s).
	Lease time.Duration
	// Prompt bounds a prompt reply (default 5 s); ReplyTimeout bounds any
	// reply, as the controller's timeout does (default 10 s).
	Prompt, ReplyTimeout time.Duration

	// nodeEnv, when set, is added to the worker's environment once the
	// lock service is up, from its nodes' real addresses: the tests' way
	// to build a worker that dials around its proxies.
	nodeEnv func([]clusters.Node) []string
}

// opTimeout is the worker's bound on one lock-service command. It is four
// times a run's default (500 ms): a check must not call a command that
// timed out on a loaded machine, with no fault, a broken rule (make test
// builds container images beside it). Under the cut a command still times
// out well within the reply timeout.
const opTimeout = 2 * time.Second

// Broken is one rule a worker broke, and how.
type Broken struct {
	Rule   string `json:"rule"`
	Detail string `json:"detail"`
}

// Report is what Check found.
type Report struct {
	// Broken lists every break, in the order found.
	Broken []Broken `json:"broken"`
	// Checked lists the rules that were exercised.
	Checked []string `json:"checked"`
	mu      sync.Mutex
	events  int
}

// Conforms reports whether no rule was broken.
func (r *Report) Conforms() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Broken) == 0
}

func (r *Report) breaks(rule, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Broken = append(r.Broken, Broken{Rule: rule, Detail: fmt.Sprintf(format, args...)})
}

func (r *Report) checked(rule string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.Checked {
		if c == rule {
			return
		}
	}
	r.Checked = append(r.Checked, rule)
}

// topology is a lock service whose worker links can be cut.
type topology interface {
	clusters.Cluster
	clusters.Partitioner
	LockAddrs(slot int) []string
	StorageAddr() string
}

func newTopology(d workloads.Design, dir string, lease time.Duration) (topology, error) {
	svc, err := clusters.FindService(d.Service)
	if err != nil {
		return nil, err
	}
	if err := svc.Look(); err != nil {
		return nil, err
	}
	top := svc.New(clusters.TopologyConfig{Workers: 1, LockNodes: d.LockNodes, Nodes: 1, LogDir: dir, Lease: lease, RunID: "conformance"})
	t, ok := top.(topology)
	if !ok {
		return nil, fmt.Errorf("conformance cuts a worker's links, and the %s topology cannot (no Partition)", d.Service)
	}
	return t, nil
}

// Check starts the lock service of o.Lock, drives the worker through every
// rule and returns what it broke. An error means the check could not be
// carried out (the service did not start, the worker could not be
// started at all), never that the worker broke a rule.
func Check(ctx context.Context, o Options) (*Report, error) {
	if len(o.Worker) == 0 {
		return nil, errors.New("no worker command")
	}
	d, err := workloads.FindDesign(o.Lock)
	if err != nil {
		return nil, err
	}
	if o.Lease <= 0 {
		o.Lease = time.Second
	}
	if o.Prompt <= 0 {
		o.Prompt = 5 * time.Second
	}
	if o.ReplyTimeout <= 0 {
		o.ReplyTimeout = 10 * time.Second
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	top, err := newTopology(d, filepath.Join(o.Dir, "nodes"), o.Lease)
	if err != nil {
		return nil, err
	}
	if err := top.Setup(ctx); err != nil {
		return nil, fmt.Errorf("set up %s: %w", d.Service, err)
	}
	defer top.Teardown(context.WithoutCancel(ctx))
	if o.nodeEnv != nil {
		o.Env = append(append([]string(nil), o.Env...), o.nodeEnv(top.Nodes())...)
	}
	logf, err := os.Create(filepath.Join(o.Dir, "workers.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	c := &checkRun{o: o, top: top, log: logf, rep: &Report{}, design: d}
	c.cfg = workloads.Config{Protocol: workloads.ProtocolVersion, Lock: d.Name, Process: 0, Seed: 1,
		LockAddrs: top.LockAddrs(0), StorageAddr: top.StorageAddr(), LeaseMS: o.Lease.Milliseconds(),
		AcquireTimeoutMS: 2 * o.Lease.Milliseconds(), RetryMS: 10, ThinkMS: 10, OpTimeoutMS: opTimeout.Milliseconds()}
	l := clusters.LinksOf(top, 0)
	c.cfg.User, c.cfg.Password, c.cfg.Database = l.Login.User, l.Login.Password, l.Login.Database
	c.cfg.DiscoveryAddrs, c.cfg.MasterName, c.cfg.AddrMap = l.DiscoveryAddrs, l.MasterName, l.AddrMap
	if err := c.unknownVersion(); err != nil {
		return c.rep, err
	}
	if err := c.main(ctx); err != nil {
		return c.rep, err
	}
	if err := c.fenced(ctx); err != nil {
		return c.rep, err
	}
	if err := c.close(); err != nil {
		return c.rep, err
	}
	for _, r := range []string{RuleReplies, RuleWholeLines, RuleStdoutOnly} {
		c.rep.checked(r)
	}
	return c.rep, nil
}

// checkRun is the state of one Check.
type checkRun struct {
	o      Options
	top    topology
	log    *os.File
	rep    *Report
	cfg    workloads.Config
	design workloads.Design
}

func (c *checkRun) start() (*proc, error) {
	return start(c.o.Worker, c.o.Env, c.log, c.rep)
}

// unknownVersion opens a worker with a protocol version no one speaks.
func (c *checkRun) unknownVersion() error {
	p, err := c.start()
	if err != nil {
		return err
	}
	defer p.kill()
	cfg := c.cfg
	cfg.Protocol = 999
	c.rep.checked(RuleVersion)
	r, _, err := p.call(workloads.Request{F: workloads.FOpen, Config: &cfg}, c.o.ReplyTimeout)
	switch {
	case err != nil:
		c.rep.breaks(RuleVersion, "open with protocol 999: %v (want a fail reply)", err)
	case r.Type != history.Fail:
		c.rep.breaks(RuleVersion, "open with protocol 999 replied %s, want fail", r.Type)
	}
	return nil
}

// open opens a fresh worker with the right version; a refused or failed
// open breaks RuleOpen.
func (c *checkRun) open() (*proc, bool, error) {
	p, problem, err := c.openWorker()
	if problem != "" {
		c.rep.breaks(RuleOpen, "%s", problem)
	}
	return p, p != nil, err
}

// openWorker opens a fresh worker with the right version. It returns the
// worker, or, when open failed or was refused, what went wrong (the worker
// then killed); an error means the worker could not be started.
func (c *checkRun) openWorker() (*proc, string, error) {
	return c.openWith(c.cfg)
}

// openWith opens a fresh worker with cfg, as openWorker.
func (c *checkRun) openWith(cfg workloads.Config) (*proc, string, error) {
	p, err := c.start()
	if err != nil {
		return nil, "", err
	}
	c.rep.checked(RuleOpen)
	r, _, err := p.call(workloads.Request{F: workloads.FOpen, Config: &cfg}, c.o.ReplyTimeout)
	var problem string
	switch {
	case err != nil:
		problem = fmt.Sprintf("open: %v", err)
	case r.Type != history.OK:
		problem = fmt.Sprintf("open replied %s (%s), want ok: does the worker know --lock %s?", r.Type, r.Error, cfg.Lock)
	case r.Protocol != workloads.ProtocolVersion:
		problem = fmt.Sprintf("open replied protocol %d, want %d", r.Protocol, workloads.ProtocolVersion)
	default:
		return p, "", nil
	}
	p.kill()
	return nil, problem, nil
}

// op sends one request of the cycle and wants it ok.
func (c *checkRun) op(p *proc, f, key string, v *history.Value) (workloads.Reply, bool) {
	r, _, err := p.call(workloads.Request{F: f, Key: key, Value: v}, c.o.ReplyTimeout)
	switch {
	case err != nil:
		c.rep.breaks(RuleCycle, "%s %s with no fault: %v", f, key, err)
		return r, false
	case r.Type != history.OK:
		c.rep.breaks(RuleCycle, "%s %s with no fault replied %s (%s), want ok", f, key, r.Type, r.Error)
		return r, false
	}
	return r, true
}

// main runs a clean cycle, a request after the lease, and a release under
// a partition on one worker.
func (c *checkRun) main(ctx context.Context) error {
	p, ok, err := c.open()
	if err != nil || !ok {
		return err
	}
	defer p.kill()
	c.rep.checked(RuleCycle)
	// A clean cycle.
	acq, ok := c.op(p, history.FAcquire, "k0", nil)
	if !ok {
		return nil
	}
	grant := acq.Value
	if grant == nil || grant.Owner == "" {
		c.rep.breaks(RuleCycle, "acquire's ok reply has no value.owner")
		grant = &history.Value{}
	}
	cs, ok := c.op(p, history.FCS, "k0", &history.Value{Owner: grant.Owner})
	if ok && (cs.Value == nil || cs.Value.Read == nil || cs.Value.Wrote == nil) {
		c.rep.breaks(RuleCycle, "cs's ok reply lacks value.read or value.wrote")
	} else if ok && *cs.Value.Wrote != *cs.Value.Read+1 {
		c.rep.breaks(RuleCycle, "cs read %d and wrote %d, want read+1", *cs.Value.Read, *cs.Value.Wrote)
	}
	if _, ok := c.op(p, history.FRelease, "k0", &history.Value{Owner: grant.Owner, Token: grant.Token}); !ok {
		return nil
	}

	// A request after the lease ran out.
	c.rep.checked(RuleAfterLease)
	acq, ok = c.op(p, history.FAcquire, "k1", nil)
	if !ok {
		return nil
	}
	time.Sleep(c.o.Lease + 500*time.Millisecond)
	g := acq.Value
	if g == nil {
		g = &history.Value{}
	}
	for _, f := range []string{history.FCS, history.FRelease} {
		_, took, err := p.call(workloads.Request{F: f, Key: "k1", Value: &history.Value{Owner: g.Owner, Token: g.Token}}, c.o.Prompt)
		if err != nil {
			c.rep.breaks(RuleAfterLease, "%s k1 %s after the lease ran out: %v within %s", f, took.Round(time.Millisecond), err, c.o.Prompt)
			return nil
		}
	}

	return c.partition(ctx, p)
}

// partition cuts every link of the worker's slot to the lock nodes, as the
// partition nemesis does (the topology's Partition: its Toxiproxy proxies
// drop all traffic both ways, connections hang), while the worker holds k2:
// its release of k2 must time out as info, and its acquire of k3 must not
// succeed either (info, fail, or no reply within acquire_timeout_ms plus
// the prompt bound). An ok reply to either means the worker reached the
// lock service without its proxies (it dialed a server's real address, or
// an announced address instead of its addr_map entry), which would make
// every partition of a run cut nothing. Then the links are healed and an
// acquire and release of k4 must complete ok again: on the same worker
// when it replied nothing but fail under the cut, else on a fresh one, as
// the controller would.
func (c *checkRun) partition(ctx context.Context, p *proc) error {
	defer func() { p.kill() }() // the worker in use at the end: this one, or a fresh one
	c.rep.checked(RuleTimeout)
	c.rep.checked(RuleProxies)
	acq, ok := c.op(p, history.FAcquire, "k2", nil)
	if !ok {
		return nil
	}
	if err := c.top.Partition(ctx, 0); err != nil {
		return fmt.Errorf("partition the worker: %w", err)
	}
	healed := false
	defer func() {
		if !healed {
			_ = c.top.Heal(context.WithoutCancel(ctx), 0)
		}
	}()
	g := acq.Value
	if g == nil {
		g = &history.Value{}
	}
	var succeeded []string // the requests that replied ok under the cut
	retire := false        // an info reply or none: the controller would replace the worker
	r, took, err := p.call(workloads.Request{F: history.FRelease, Key: "k2", Value: &history.Value{Owner: g.Owner, Token: g.Token}}, c.o.ReplyTimeout)
	switch {
	case err != nil:
		c.rep.breaks(RuleTimeout, "release k2 under a partition: %v within %s: the worker must time out its own calls and reply info",
			err, c.o.ReplyTimeout)
		retire = true
	case r.Type == history.Fail:
		c.rep.breaks(RuleTimeout, "release k2 under a partition replied fail (%s) after %s: a timed-out call may have taken effect, so it is info",
			r.Error, took.Round(time.Millisecond))
	case r.Type == history.OK:
		succeeded = append(succeeded, "release k2")
	default:
		retire = true
	}
	if err == nil {
		// The acquire may retry for acquire_timeout_ms; a worker that is
		// still silent a prompt reply's time later has not succeeded.
		wait := min(time.Duration(c.cfg.AcquireTimeoutMS)*time.Millisecond+c.o.Prompt, c.o.ReplyTimeout)
		r, _, err = p.call(workloads.Request{F: history.FAcquire, Key: "k3"}, wait)
		switch {
		case err != nil:
			// No reply in time: the controller would record info and
			// replace the worker. Costly, but not a success under the cut.
			retire = true
		case r.Type == history.OK:
			succeeded = append(succeeded, "acquire k3")
		case r.Type == history.Info:
			retire = true
		}
	}
	if len(succeeded) > 0 {
		c.rep.breaks(RuleProxies, "%s; ok under the cut: %s", DialsAround, strings.Join(succeeded, ", "))
	}

	if err := c.top.Heal(ctx, 0); err != nil {
		return fmt.Errorf("heal the worker's links: %w", err)
	}
	healed = true
	// Up to three tries, each on a fresh key, as the controller would go
	// on: with the same worker after a fail (healing closes the
	// connections that crossed the cut, and a client may find out on its
	// next command), with a fresh one after an info reply or none.
	var last string
	for try := 1; try <= 3; try++ {
		if retire {
			p.kill()
			np, problem, err := c.openWorker()
			if err != nil {
				return err
			}
			if problem != "" {
				last = "a fresh worker's " + problem
				continue
			}
			p, retire = np, false
		}
		var done bool
		if done, retire, last = c.cycle(p, fmt.Sprintf("k%d", 3+try)); done {
			return nil
		}
	}
	c.rep.breaks(RuleProxies, "once its links were healed, acquire and release did not both reply ok in 3 tries "+
		"(a fresh worker after an info reply, as the controller would); the last try: %s", last)
	return nil
}

// cycle acquires and releases key: done when both replied ok, else what
// went wrong and whether the controller would replace the worker (an info
// reply, or none).
func (c *checkRun) cycle(p *proc, key string) (done, retire bool, problem string) {
	var grant *history.Value
	for _, f := range []string{history.FAcquire, history.FRelease} {
		r, _, err := p.call(workloads.Request{F: f, Key: key, Value: grant}, c.o.ReplyTimeout)
		switch {
		case err != nil:
			return false, true, fmt.Sprintf("%s %s: %v within %s", f, key, err, c.o.ReplyTimeout)
		case r.Type != history.OK:
			return false, r.Type != history.Fail, fmt.Sprintf("%s %s replied %s (%s)", f, key, r.Type, r.Error)
		}
		grant = &history.Value{}
		if r.Value != nil {
			grant.Owner, grant.Token = r.Value.Owner, r.Value.Token
		}
	}
	return true, false, ""
}

// close opens a fresh worker and closes it: it must reply ok and exit.
func (c *checkRun) close() error {
	p, ok, err := c.open()
	if err != nil || !ok {
		return err
	}
	defer p.kill()
	c.rep.checked(RuleClose)
	r, _, err := p.call(workloads.Request{F: workloads.FClose}, c.o.ReplyTimeout)
	switch {
	case err != nil:
		c.rep.breaks(RuleClose, "close: %v (want an ok reply, then exit)", err)
	case err == nil && r.Type != history.OK:
		c.rep.breaks(RuleClose, "close replied %s, want ok", r.Type)
	}
	if !p.exited(5 * time.Second) {
		c.rep.breaks(RuleClose, "the worker was still running 5 s after close")
	}
	return nil
}
