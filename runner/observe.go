package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// observeProbe is how often a release observer measures its lag with a
// probe: often enough for a distribution over a short run, rarely enough
// that it costs the lock servers nothing.
const observeProbe = 500 * time.Millisecond

// observe starts the topology's release observer (clusters.ReleaseObserver)
// when it has one: each release of a lock key that the lock servers
// themselves report becomes a server-release op of the history. It returns
// the function that stops the observer; an observation made after that is
// dropped, so that nothing is recorded once the workload is over. A
// topology without an observer, or one that cannot start, records none: a
// line on the log says why, and the run goes on, since the observations
// never decide a verdict. With Test.NoObserve it starts none.
func (r *run) observe(ctx context.Context) (stop func()) {
	o, ok := r.cluster.(clusters.ReleaseObserver)
	if !ok || r.test.NoObserve {
		return func() {}
	}
	var mu sync.Mutex
	on := true
	report := func(key string, v *history.Value) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			// A worker on the mux wrote that it began its release
			// before the release left: that line is recorded first.
			if r.mux != nil {
				r.mux.Sync()
			}
			r.rec.Record(history.Op{Process: history.NemesisProcess, Type: history.Info, F: history.FServerRelease, Key: key, Value: v})
		}
	}
	end, err := o.ObserveReleases(ctx, clusters.ObserveConfig{Keys: keyNames(r.test.Keys), Now: r.rec.Now, Report: report, Probe: observeProbe,
		TookOver: r.design.WrittenOver})
	if err != nil {
		fmt.Fprintf(r.log, "release observer: %v; no server releases recorded\n", err)
		return func() {}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// end first: an observer may report what it still held
			// back (etcd's releases waiting on their lease).
			end()
			mu.Lock()
			on = false
			mu.Unlock()
		})
	}
}
