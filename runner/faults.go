package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/schedule"
)

// faults are a run's faults: the timed kinds on their seeded random
// schedule, the triggered faults on the trigger engine, and what both
// applied, for the run's schedule.json.
type faults struct {
	timed  nemesis.Schedule
	names  []string         // the timed kinds' names, by index in timed.Nemeses
	engine *schedule.Engine // nil when no fault has a trigger
	lease  time.Duration

	mu     sync.Mutex
	start  time.Duration // the workload's start on the recorder's clock
	random []schedule.Applied
}

// newFaults builds the run's nemeses. The engine reads every op the
// recorder records from now on.
func (r *run) newFaults() (*faults, error) {
	p, t := r.plan, r.test
	fs := &faults{lease: r.Lease()}
	var nems []nemesis.Nemesis
	for i, k := range p.Timed {
		n, err := k.New(r, rand.New(rand.NewPCG(t.Seed, 0x6e656d+uint64(i))))
		if err != nil {
			return nil, r.unsupported(err)
		}
		nems = append(nems, n)
		fs.names = append(fs.names, k.Name)
	}
	fs.timed = nemesis.Schedule{Nemeses: nems, Interval: t.NemesisInterval, Duration: t.NemesisDuration,
		Rng: rand.New(rand.NewPCG(t.Seed, 0x736368)), Record: r.recordFault, Applied: fs.applied}
	if len(p.Faults) == 0 {
		return fs, nil
	}
	kinds := make(map[string]nemesis.Kind, len(p.Kinds))
	for _, k := range p.Kinds {
		kinds[k.Name] = k
	}
	e, err := schedule.New(schedule.Config{Env: r, Rec: faultRecorder{r}, Kinds: kinds, Seed: t.Seed,
		Lease: fs.lease, Duration: t.NemesisDuration}, p.Faults)
	if err != nil {
		return nil, r.unsupported(err)
	}
	r.rec.Subscribe(e.Observe)
	fs.engine = e
	return fs, nil
}

// unsupported adds the topology's limits to a nemesis it cannot take.
func (r *run) unsupported(err error) error {
	if l, ok := r.cluster.(clusters.Limited); ok && errors.Is(err, clusters.ErrUnsupported) {
		return fmt.Errorf("%w: %s", err, l.Limits())
	}
	return err
}

// faultRecorder records the engine's ops as the random schedule's are
// (run.recordFault: the progress line shows the fault in force).
type faultRecorder struct{ r *run }

func (f faultRecorder) Record(op history.Op) history.Op { return f.r.recordFault(op) }
func (f faultRecorder) Now() time.Duration              { return f.r.rec.Now() }

// run applies the faults from start (the workload's start, on the
// recorder's clock) until deadline or until ctx is done, then heals; it
// returns the heal errors.
func (fs *faults) run(ctx context.Context, start time.Duration, deadline time.Time) error {
	fs.mu.Lock()
	fs.start = start
	fs.mu.Unlock()
	var engineErr error
	var wg sync.WaitGroup
	if fs.engine != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			engineErr = fs.engine.Run(ctx, start, deadline)
		}()
	}
	err := fs.timed.Run(ctx, deadline)
	wg.Wait()
	return errors.Join(err, engineErr)
}

// applied records one fault of the random schedule as the time trigger
// that repeats it: its nemesis at the time it struck, for as long as it
// was kept.
func (fs *faults) applied(i int, start, end history.Op) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	dur := schedule.Dur{Abs: (end.Time - start.Time).Round(time.Millisecond)}
	f := schedule.Fault{Kind: fs.names[i], Duration: &dur,
		Trigger: schedule.Trigger{Event: schedule.EventAt, Offset: schedule.Dur{Abs: max(0, start.Time-fs.start).Round(time.Millisecond)}}}
	fs.random = append(fs.random, schedule.Applied{Fault: f, Spec: f.String(), Random: true,
		Fired: []schedule.Fired{{Event: -1, EventF: schedule.EventAt, Process: -1, Due: start.Time, InForce: start.Time,
			Start: start.Index, End: end.Index, Ended: end.Time, Error: start.Error}}})
}

// record returns the schedule the run applied: the triggered faults, then
// each fault of the random schedule as a time trigger (its time from the
// workload's start, as every time trigger's is).
func (fs *faults) record(t Test) schedule.Record {
	rec := schedule.Record{Lease: fs.lease, Duration: t.NemesisDuration}
	if fs.engine != nil {
		rec.Faults = fs.engine.Applied()
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	rec.Faults = append(rec.Faults, fs.random...)
	return rec
}

// writeSchedule writes the run's schedule.json, for a run with faults.
func (r *run) writeSchedule(fs *faults) {
	if fs == nil || !r.plan.faulted() {
		return
	}
	if err := fs.record(r.test).Write(filepath.Join(r.dir, schedule.FileName)); err != nil {
		fmt.Fprintf(r.log, "%v\n", err)
	}
}

// faultStats adds the triggered faults' figures to res: how many fired and
// how late they were in force after their trigger said (p50, p99, max).
func faultStats(res *checker.Result, fs *faults) {
	if fs == nil || fs.engine == nil {
		return
	}
	lates := schedule.Lates(fs.engine.Applied())
	if res.Stats == nil {
		res.Stats = make(map[string]any)
	}
	res.Stats["triggered_faults"] = len(lates)
	if len(lates) == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	res.Stats["trigger_late_p50_ms"] = ms(schedule.Quantile(lates, 0.5))
	res.Stats["trigger_late_p99_ms"] = ms(schedule.Quantile(lates, 0.99))
	res.Stats["trigger_late_max_ms"] = ms(schedule.Quantile(lates, 1))
}
