package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/workerproc"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/report"
	"github.com/lockcheck/lockcheck/schedule"
	"github.com/lockcheck/lockcheck/workers"
	"github.com/lockcheck/lockcheck/workloads"
)

// Outcome is what a finished (or interrupted) run produced.
type Outcome struct {
	// Dir is the run directory in the store.
	Dir string
	// Result is the checkers' verdict on the history.
	Result checker.Result
	// Interrupted is set when the run was stopped before its time was up.
	Interrupted bool
	// Ops is how many ops the history holds.
	Ops int
	// Stopped is set when Test.StopOnAnomaly stopped the workload at its
	// first anomaly, before its time was up.
	Stopped bool
	// WorkerCPU is the CPU time (user + system) of every worker process of
	// the run that exited and was waited for.
	WorkerCPU time.Duration
	// Commands is how many commands the Redis lock nodes served during the
	// workload, counted only for check bench (Test.countCommands).
	Commands int64
	// Checked is set when Run returns an error and still checked the
	// history it recorded (a server that died, a store that filled):
	// Result is then that history's verdict, which an anomaly found
	// before the failure makes Invalid.
	Checked bool
	// OwnReleases is how many releases the workers began on their own
	// after their critical section (workloads.ThenCSRelease, see
	// slot.cycle).
	OwnReleases int64
}

// run is the state of one test run.
type run struct {
	test    Test
	plan    *Plan
	design  workloads.Design
	cluster topology
	rec     *history.Recorder
	dir     string
	argv    []string
	workLog *os.File
	log     io.Writer

	deadline time.Time
	mu       sync.Mutex
	holders  map[int]nemesis.Target // slot -> holder
	live     map[int]nemesis.Target // slot -> live worker
	fault    string                 // the fault in force, for the progress line
	grants   atomic.Int64
	doubles  atomic.Int64 // grants made while another slot held the lock
	// workerCPU sums the CPU time of the workers that have exited, in ns.
	workerCPU atomic.Int64

	slots     []*slot                 // worker slots, made by startWorkers
	abort     context.CancelCauseFunc // ends the workload at once (fail)
	fatal     error                   // why the run was aborted, under mu
	endFaults context.CancelFunc      // ends the nemesis schedule (stopEarly)
	early     atomic.Bool             // the workload was stopped early (Until, StopOnAnomaly)
	// watching is set while the workload runs: a server that exits then
	// on its own ends the run (serverExited).
	watching atomic.Bool
	// replyTimeout is how long the controller waits for a worker's reply
	// (Plan.replyTimeout).
	replyTimeout time.Duration
	// thenCS is set when a worker that can may run its first critical
	// section as soon as it is granted (see slot.cycle): the run stops
	// at no failpoint and binds no fault to a critical section's
	// invocation itself.
	thenCS bool
	// mux carries the stdout of the built-in workers, in the order they
	// wrote it (nil for a worker in another language or --worker-cmd):
	// with it, thenRelease lets such a worker release on its own after a
	// single critical section when no fault is bound to a release's
	// invocation itself (see slot.cycle).
	mux         *workerproc.Mux
	thenRelease bool
	ownReleases atomic.Int64 // Outcome.OwnReleases
}

// Run executes t: it sets up the cluster, runs the workload and the nemesis
// until t.Time has passed or ctx is done, tears everything down, checks the
// history and stores the results. Progress lines go to log. An error means
// the run could not be carried out (bad test map, setup failure); a run that
// found anomalies is not an error.
func Run(ctx context.Context, t Test, log io.Writer) (Outcome, error) {
	t.Defaults()
	p, err := Resolve(t)
	if err != nil {
		return Outcome{}, err
	}
	return p.Run(ctx, log)
}

// Run is the package's Run for a resolved plan.
func (p *Plan) Run(ctx context.Context, log io.Writer) (Outcome, error) {
	if p == nil {
		return Outcome{}, errNoPlan
	}
	plan := *p // the run fills in the worker command and the start time
	p = &plan
	t := &p.Test
	argv := t.WorkerCmd
	var err error
	builtin := t.ownWorker // the workers are this binary's own (check worker)
	if len(argv) == 0 && len(p.Design.Worker) > 0 {
		if argv, err = workers.Command(ctx, p.Design.Worker); err != nil {
			return Outcome{}, err
		}
	}
	if len(argv) == 0 {
		exe, err := p.workerBinary(ctx, log)
		if err != nil {
			return Outcome{}, err
		}
		argv = []string{exe, "worker"}
		t.WorkerEnv = append(builtinWorkerEnv(), t.WorkerEnv...)
		builtin = true
	}
	if err := p.look(ctx); err != nil {
		return Outcome{}, err
	}
	if err := p.findServer(ctx, log); err != nil {
		return Outcome{}, err
	}
	t.Started = time.Now().UTC()
	dir, err := newRunDir(t.Store, t.Name, t.Started.Local())
	if err != nil {
		return Outcome{}, err
	}
	// latest names the run from its start, so that whatever stops it
	// (an error, SIGKILL) leaves latest at this run's partial history.
	if err := updateLatest(t.Store, dir); err != nil {
		fmt.Fprintf(log, "store: %v\n", err)
	}
	if err := writeTestJSON(dir, p); err != nil {
		return Outcome{Dir: dir}, err
	}
	if err := keepTopology(dir, *t); err != nil {
		return Outcome{Dir: dir}, err
	}
	hf, err := os.Create(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		return Outcome{Dir: dir}, fmt.Errorf("create history: %w", err)
	}
	defer hf.Close()
	sink := &storeSink{f: hf}
	workLog, err := os.Create(filepath.Join(dir, "workers.log"))
	if err != nil {
		return Outcome{Dir: dir}, fmt.Errorf("create worker log: %w", err)
	}
	defer workLog.Close()

	r := &run{test: *t, plan: p, design: p.Design, dir: dir, argv: argv, workLog: workLog, log: log,
		holders: make(map[int]nemesis.Target), live: make(map[int]nemesis.Target), replyTimeout: p.replyTimeout()}
	r.thenCS = t.Failpoint == "" && !schedule.AtInvocation(p.Faults, schedule.EventCS, r.Lease())
	if builtin {
		if r.mux, err = workerproc.NewMux(); err != nil {
			return Outcome{Dir: dir}, err
		}
		defer func() {
			if n := r.mux.Dropped(); n > 0 {
				fmt.Fprintf(workLog, "workers' stdout: %d bytes written by processes that are not workers (a worker's child?) were not read\n", n)
			}
			r.mux.Close()
		}()
		r.thenRelease = r.thenCS && t.sections() == 1 && !schedule.AtInvocation(p.Faults, schedule.EventRelease, r.Lease())
	}
	// Every server the topology starts, now or on a restart, reports an
	// exit that no fault asked for.
	ctx = clusters.WithExitWatch(ctx, r.serverExited)
	r.cluster = p.topology(filepath.Join(dir, "nodes"))
	fmt.Fprintf(log, "lockcheck: %s, seed %d, %d workers, %s; run dir %s\n", t.Name, t.Seed, t.Workers, t.Time, dir)
	setupStart := time.Now()
	if err := r.cluster.Setup(ctx); err != nil {
		return Outcome{Dir: dir}, fmt.Errorf("set up cluster: %w", err)
	}
	defer r.cluster.Teardown(context.WithoutCancel(ctx))
	setup := time.Since(setupStart)
	fmt.Fprintf(log, "cluster ready in %s: %s\n", setup.Round(time.Millisecond), describeNodes(r.cluster.Nodes()))

	r.rec = history.NewRecorder(sink)
	r.deadline = time.Now().Add(t.Time)
	faults, err := r.newFaults()
	if err != nil {
		return Outcome{Dir: dir}, err
	}
	stopObserve := r.observe(ctx)
	defer stopObserve()

	if p.Workload.Stock {
		if err := r.seedStock(ctx, keyNames(t.Keys)); err != nil {
			return Outcome{Dir: dir}, err
		}
	}
	wctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	r.abort = abort
	restoreProcs := limitProcs(t.Workers)
	defer restoreProcs()
	if err := r.startWorkers(wctx); err != nil {
		return Outcome{Dir: dir}, r.aborted(err)
	}
	var cmds0 int64
	if t.countCommands {
		cmds0 = lockCommands(r.cluster)
	}
	r.deadline = time.Now().Add(t.Time)
	nctx, endFaults := context.WithCancel(wctx)
	defer endFaults()
	r.endFaults = endFaults
	stopProgress := r.progress(*t)
	stopWatch := r.watchUntil()
	r.watching.Store(true)
	stopStore := r.watchStore()
	stopStorage := r.watchStorage()
	var watch *watcher
	if t.StopOnAnomaly {
		watch = startWatch(r.rec, p.CheckOptions(), r.stopOnAnomaly)
	}
	workloadStart := r.rec.Now()
	var wg sync.WaitGroup
	for slot := 0; slot < t.Workers; slot++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.slotLoop(wctx, slot)
		}()
	}
	slotsDone := make(chan time.Duration, 1)
	go func() {
		wg.Wait()
		slotsDone <- r.rec.Now()
	}()
	healErr := faults.run(nctx, workloadStart, r.deadline)
	healed := r.rec.Now()
	workloadEnd := <-slotsDone
	stopObserve()
	if err := r.checkProxies(); err != nil {
		r.fail(err)
	}
	stopStore()
	stopStorage()
	r.watching.Store(false)
	restoreProcs()
	var cmds int64
	if t.countCommands {
		cmds = lockCommands(r.cluster) - cmds0
	}
	stopWatch()
	var stoppedAt time.Duration
	stopped := false
	if watch != nil {
		watch.close()
		_, stoppedAt, stopped = watch.result()
	}
	fatal := r.failure()
	if fatal != nil && !checkable(fatal) {
		stopProgress()
		return Outcome{Dir: dir}, r.aborted(fatal)
	}
	if p.Workload.Stock && fatal == nil {
		r.finalStock(context.WithoutCancel(ctx), keyNames(t.Keys))
	}
	stopProgress()
	interrupted := ctx.Err() != nil
	if err := r.cluster.Teardown(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintf(log, "teardown: %v\n", err)
	}
	if healErr != nil {
		fmt.Fprintf(log, "nemesis heal: %v\n", healErr)
	}
	r.writeSchedule(faults)
	if err := r.rec.Err(); err != nil && fatal == nil {
		fatal = &storeError{err: err, files: []string{"history.jsonl"}}
	}
	h := r.rec.View() // no copy: a long run's history is hundreds of megabytes
	if err := history.Validate(h); err != nil {
		// The recorder wrote an impossible history: a harness bug, not a
		// verdict. history.jsonl has one op a line, so the line matches.
		return Outcome{Dir: dir, Interrupted: interrupted}, fmt.Errorf("recorded history: %w; not checked", err)
	}
	if fatal == nil {
		// The history's binary sidecar, for reading it back fast (check
		// analyze, serve): only of a file the recorder wrote in full.
		if err := history.WriteSidecar(filepath.Join(dir, "history.jsonl"), h); err != nil {
			fmt.Fprintf(log, "%v\n", err)
		}
	}
	checkStart := time.Now()
	// The run checks its checkers one at a time: beside a long run's
	// history (a heap budget holds the process within), side by side they
	// would need their working memory all at once. check analyze, which
	// has no budget, runs them side by side.
	opts := p.CheckOptions()
	opts.OneAtATime = true
	res, err := Check(context.WithoutCancel(ctx), dir, h, opts)
	runStats(&res, setup, stoppedAt, stopped, workloadEnd, healed, r.rec.Now())
	faultStats(&res, faults)
	res.Stats["check_s"] = seconds(time.Since(checkStart))
	out := Outcome{Dir: dir, Result: res, Interrupted: interrupted, Ops: len(h), Stopped: stopped,
		WorkerCPU: time.Duration(r.workerCPU.Load()), Commands: cmds, Checked: fatal != nil, OwnReleases: r.ownReleases.Load()}
	if fatal != nil {
		// The verdict of what was recorded stands beside the error: an
		// anomaly found before it is still an anomaly, and the absence
		// of one proves nothing.
		out.Result = withFatal(res, fatal)
		return out, joinFatal(fatal, saveResults(log, dir, p, h, out.Result, err))
	}
	if err := saveResults(log, dir, p, h, res, err); err != nil {
		out.Checked = true
		return out, err
	}
	return out, nil
}

// saveResults writes results.json and the report for res, after Check
// (whose error, if any, is checkErr: it wrote the first results.json). A
// store that cannot take results.json is one error naming the files that
// were not saved, not a line per file; a report that fails alone is a
// line on log, as the verdict is saved.
func saveResults(log io.Writer, dir string, p *Plan, h history.History, res checker.Result, checkErr error) error {
	err := checkErr
	if err == nil {
		err = writeJSON(filepath.Join(dir, "results.json"), res)
	}
	if err == nil {
		if serr := report.WriteSummary(dir, res); serr != nil {
			fmt.Fprintf(log, "summary: %v\n", serr)
		}
	}
	rerr := p.WriteReport(dir, h, res)
	if err == nil {
		if rerr != nil {
			fmt.Fprintf(log, "report: %v\n", rerr)
		}
		return nil
	}
	se := &storeError{err: err, files: []string{"results.json"}}
	if rerr != nil {
		se.files = append(se.files, "report.html")
	}
	return se
}

func describeNodes(nodes []clusters.Node) string {
	s := ""
	for i, n := range nodes {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %s", n.Name, n.Addr)
	}
	return s
}

// topology is a cluster as the workers see it: lock nodes reached through
// their slot's proxies, and the storage node.
type topology = clusters.Topology

// clockFile is worker slot's client clock file, "" when no nemesis of the
// run moves client clocks (see workloads.Clock).
func (r *run) clockFile(slot int) string {
	if !r.plan.clientClocks {
		return ""
	}
	return filepath.Join(r.dir, "clocks", fmt.Sprintf("w%d", slot))
}

// SetClientClock implements nemesis.ClientClocker: it writes a worker
// slot's clock file.
func (r *run) SetClientClock(file string, offset time.Duration) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("client clock: %w", err)
	}
	return workloads.WriteClockSetting(file, workloads.ClockSetting{Offset: offset})
}

// Lease implements the nemeses' optional lease query: the lease the lock
// service applies for the test's lease.
func (r *run) Lease() time.Duration { return r.design.EffectiveLease(r.test.Lease) }

// Holders implements nemesis.Env: the workers holding a lock, by slot.
func (r *run) Holders() []nemesis.Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]nemesis.Target, 0, len(r.holders))
	for _, t := range r.holders {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slot < out[j].Slot })
	return out
}

// Workers implements nemesis.Env: every live worker, by slot, with Key set
// for the holders.
func (r *run) Workers() []nemesis.Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]nemesis.Target, 0, len(r.live))
	for slot, t := range r.live {
		if h, ok := r.holders[slot]; ok {
			t.Key, t.InCS = h.Key, h.InCS
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slot < out[j].Slot })
	return out
}

// setLive records that slot now runs worker t (or none, nil).
func (r *run) setLive(slot int, t *nemesis.Target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t == nil {
		delete(r.live, slot)
		return
	}
	r.live[slot] = *t
}

// setFailpoint marks the live worker of slot, if it still serves process,
// as stopped at failpoint name ("" for none).
func (r *run) setFailpoint(slot, process int, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.live[slot]; ok && t.Process == process {
		t.Failpoint = name
		r.live[slot] = t
	}
}

// failpointName returns NAME from a failpoint event's detail "failpoint
// NAME: where".
func failpointName(detail string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(detail, workloads.FailpointPrefix), ":")
	return name
}

var _ nemesis.FailpointEnv = (*run)(nil)

// Failpoint implements nemesis.FailpointEnv: the failpoint the run arms.
func (r *run) Failpoint() string { return r.test.Failpoint }

// Cluster implements nemesis.Env.
func (r *run) Cluster() clusters.Cluster { return r.cluster }

// FaultDuration is how long each fault is kept (--nemesis-duration), for a
// nemesis that spreads its steps over it (swizzle).
func (r *run) FaultDuration() time.Duration { return r.test.NemesisDuration }

// setHolder records that slot now holds a lock (t) or no longer does (nil).
// A grant while another slot holds the same lock is counted for the
// progress line: the checkers decide, this only shows it early.
func (r *run) setHolder(slot int, t *nemesis.Target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t == nil {
		delete(r.holders, slot)
		return
	}
	r.grants.Add(1)
	for s, h := range r.holders {
		if s != slot && h.Key == t.Key {
			r.doubles.Add(1)
			break
		}
	}
	r.holders[slot] = *t
}

// setInCS marks slot's holder as sent its critical section (nemesis.Target
// InCS) until setHolder clears the hold: the pause nemesis aims at it.
func (r *run) setInCS(slot int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.holders[slot]; ok {
		t.InCS = true
		r.holders[slot] = t
	}
}

// WriteReport writes report.html of the plan's run, whose history h
// checked res, into its run directory dir.
func (p *Plan) WriteReport(dir string, h history.History, res checker.Result) error {
	t, d := p.Test, p.Design
	meta := report.Meta{Name: t.Name, Lock: t.Lock, Nemesis: t.Nemesis, Seed: t.Seed, Fencing: t.Fencing,
		Workers: t.Workers, Duration: t.Time, Command: strings.Join(Command(t), " "), Started: t.Started}
	if d.Name != "" && !d.Tokens {
		meta.NoTokens = true
	}
	if d.Name != "" {
		meta.Lease = d.EffectiveLease(t.Lease)
	}
	if d.ZxidTokens {
		meta.Tokens = checker.ZxidTokens
	}
	return report.Write(filepath.Join(dir, "report.html"), report.Input{Meta: meta, History: h, Result: res})
}

// recordFault records a nemesis op and keeps the fault in force for the
// progress line.
func (r *run) recordFault(op history.Op) history.Op {
	if ct, ok := r.cluster.(clusters.CommandTaker); ok && op.Type != history.Invoke {
		r.takeCommands(ct, &op)
	}
	op = r.rec.Record(op)
	if op.Type == history.Info {
		r.mu.Lock()
		if _, starts := history.EndOf(op.F); starts && op.Error == "" {
			r.fault = op.F
			if op.Value != nil && op.Value.Ext().Detail != "" {
				r.fault = op.Value.Ext().Detail
			}
		} else if !starts {
			r.fault = ""
		}
		r.mu.Unlock()
	}
	return op
}

// takeCommands puts in a fault's end op the control commands it ran on
// its nodes; a fault that failed names no node, and takes whatever ran.
func (r *run) takeCommands(ct clusters.CommandTaker, op *history.Op) {
	var nodes []string
	if op.Value != nil {
		nodes = op.Value.Ext().Nodes
	}
	if len(nodes) == 0 && op.Error == "" {
		return
	}
	if cmds := ct.TakeCommands(nodes); len(cmds) > 0 {
		if op.Value == nil {
			op.Value = &history.Value{}
		}
		op.Value.Mut().Commands = cmds
	}
}

// progress prints a progress line every 250 ms until the returned function
// is called.
func (r *run) progress(t Test) func() {
	if t.Quiet {
		return func() {}
	}
	f, ok := r.log.(*os.File)
	prog := report.NewProgress(r.log, ok && report.IsTerminal(f))
	start := time.Now()
	stop := poll(250*time.Millisecond, func() bool {
		r.mu.Lock()
		fault := r.fault
		r.mu.Unlock()
		prog.Update(report.Snapshot{Elapsed: min(time.Since(start), t.Time), Total: t.Time,
			Grants: int(r.grants.Load()), Anomalies: int(r.doubles.Load()), Nemesis: fault})
		return false
	})
	return func() {
		stop()
		prog.Done()
	}
}

// CheckOptions returns the checker options the plan implies.
func (p *Plan) CheckOptions() checker.Options {
	t, d := p.Test, p.Design
	stuck := t.StuckBound
	// A register kept in the lock's own transaction is fenced by it: the
	// resource checkers decide, as with fencing tokens.
	// So is a guarded design's register, written only while the lock holds.
	fenced := t.Fencing || p.Workload.InLock || d.Guarded
	tokens := checker.NumberTokens
	if d.ZxidTokens {
		tokens = checker.ZxidTokens
	}
	return checker.Options{Fenced: fenced, Timeout: t.CheckTimeout, StuckBound: stuck, Lease: d.EffectiveLease(t.Lease), NoLock: d.NoLock,
		Faulted: p.faulted(), Session: p.sessionTimeout(), Tokens: tokens, Server: cmp.Or(p.Service.Server, p.Service.Name)}
}

// sessionTimeout tells the checkers how the server of a lock that lives as
// long as its database session gives up a silent one, or nil for a lock
// that does not (a lease, a ZooKeeper session, a lock row with an expiry).
func (p *Plan) sessionTimeout() *checker.SessionTimeout {
	if !p.Design.SessionHeld || p.Service.SessionTimeout == nil {
		return nil
	}
	server := p.Service.Server
	if server == "" {
		server = p.Service.Name
	}
	return &checker.SessionTimeout{Server: server, Settings: p.Service.SessionSettings, Timeout: p.Service.SessionTimeout(p.Test.Lease)}
}

// Check runs the default checkers on h and stores results.json (and the
// Porcupine visualization, when a linearizability check failed) in dir. The
// result's Stats hold first_anomaly_s, when the first double holder or
// accepted stale write was recorded (checker.FirstAnomaly), if any. The
// result it returns has no Visualize: the drawing is in the file, and what
// it would draw from (the checkers' inputs, hundreds of megabytes in a
// long run) is let go before the report is written.
func Check(ctx context.Context, dir string, h history.History, opts checker.Options) (res checker.Result, err error) {
	defer forgetVisualize(&res)
	res = checker.Default(opts).Check(ctx, h)
	firstAnomalyStat(&res, h, opts)
	if err := writeJSON(filepath.Join(dir, "results.json"), res); err != nil {
		return res, err
	}
	// check serve's index reads summary.json; without it the index decodes
	// results.json, so a summary that cannot be written is not an error.
	_ = report.WriteSummary(dir, res)
	viz := filepath.Join(dir, "linearizability.html")
	if res.Visualize != nil {
		tmp := viz + ".tmp"
		f, err := os.Create(tmp)
		if err != nil {
			return res, fmt.Errorf("create %s: %w", viz, err)
		}
		err = res.Visualize(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, viz)
		}
		if err != nil {
			_ = os.Remove(tmp) // no partial file under the final name
			return res, fmt.Errorf("write %s: %w", viz, err)
		}
	} else if err := os.Remove(viz); err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, err
	}
	return res, nil
}

// forgetVisualize drops the Visualize of r and of every result under it.
func forgetVisualize(r *checker.Result) {
	r.Visualize = nil
	for i := range r.Results {
		forgetVisualize(&r.Results[i])
	}
}
