package runner

import (
	"fmt"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// watchPoll is how often the watcher reads the ops recorded since it last
// looked: the stop comes at most this long after the anomaly was recorded.
const watchPoll = 50 * time.Millisecond

// watcher follows the history as it is recorded with a checker.Watch (the
// incremental double-holder and stale-write sweeps) and calls stop once, at
// the first anomaly (Test.StopOnAnomaly).
type watcher struct {
	rec  *history.Recorder
	w    *checker.Watch
	stop func(a checker.Anomaly)
	quit chan struct{}
	done chan struct{}

	mu      sync.Mutex
	first   *checker.Anomaly
	stopped time.Duration // recorder time of the stop
}

// startWatch starts a watcher on rec; stop is called (once, from the
// watcher's goroutine) with the first anomaly.
func startWatch(rec *history.Recorder, opts checker.Options, stop func(a checker.Anomaly)) *watcher {
	w := &watcher{rec: rec, w: checker.NewWatch(opts), stop: stop, quit: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// loop reads new ops every watchPoll until the first anomaly or close.
func (w *watcher) loop() {
	defer close(w.done)
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	next := 0
	for {
		select {
		case <-w.quit:
			return
		case <-tick.C:
		}
		ops := w.rec.Since(next)
		next += len(ops)
		for _, op := range ops {
			a, ok := w.w.Observe(op)
			if !ok {
				continue
			}
			w.mu.Lock()
			w.first, w.stopped = &a, w.rec.Now()
			w.mu.Unlock()
			w.stop(a)
			return
		}
	}
}

// close stops the watcher and waits for it.
func (w *watcher) close() {
	close(w.quit)
	<-w.done
}

// result returns the first anomaly and when the watcher stopped the run,
// and false when it found none.
func (w *watcher) result() (checker.Anomaly, time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first == nil {
		return checker.Anomaly{}, 0, false
	}
	return *w.first, w.stopped, true
}

// stopOnAnomaly is the watcher's stop for a run: no slot starts another
// cycle, the nemesis schedule ends the fault in force and heals.
func (r *run) stopOnAnomaly(a checker.Anomaly) {
	fmt.Fprintf(r.log, "stop on anomaly: %s at %.2f s (%s); stopping the workload, healing\n",
		a.Kind, a.End.Seconds(), a.Explanation)
	r.stopEarly()
}

// runStats adds the run's timings to res.Stats, in seconds since the
// workload started (the history's time 0): first_anomaly_s (Check),
// stopped_s (when --stop-on-anomaly stopped the workload), workload_s (when
// the last worker slot stopped), healed_s (when the nemesis schedule had
// healed every fault), verdict_s (when the verdict was known), and setup_s,
// the cluster setup before time 0.
func runStats(res *checker.Result, setup, stopped time.Duration, wasStopped bool, workload, healed, verdict time.Duration) {
	if res.Stats == nil {
		res.Stats = make(map[string]any)
	}
	if wasStopped {
		res.Stats["stopped_s"] = seconds(stopped)
	}
	res.Stats["setup_s"] = seconds(setup)
	res.Stats["workload_s"] = seconds(workload)
	res.Stats["healed_s"] = seconds(healed)
	res.Stats["verdict_s"] = seconds(verdict)
}

// firstAnomalyStat sets res.Stats["first_anomaly_s"] from the first anomaly
// a checker.Watch finds in h, the moment the run could have stopped.
func firstAnomalyStat(res *checker.Result, h history.History, opts checker.Options) {
	a, ok := checker.FirstAnomaly(h, opts)
	if !ok {
		return
	}
	if res.Stats == nil {
		res.Stats = make(map[string]any)
	}
	res.Stats["first_anomaly_s"] = seconds(a.End)
}

// seconds renders d in seconds with millisecond precision.
func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }
