// Package heapbudget keeps a recording process's memory small: it asks
// Go's garbage collector (its soft memory limit) to hold the heap within
// Budget while what is live fits in it, instead of letting the heap grow
// to twice what is live as it does by default. A 10-minute run at --think 0
// holds a history of nearly two million operations, and its check and
// report double that for a moment: without a limit the run peaked at
// 1.4 GB, with one it stays under 1 GB at the cost of more collections.
// The limit counts the Go runtime's memory, not the process's: the budget
// leaves room under 1 GB for the rest (the program's text and data, about
// 35 MB). Past the budget the limit follows what is live, with a quarter
// to spare, so a longer run is never starved into collecting without end.
//
// GOMEMLIMIT, when set, is the user's choice and is left alone. It
// imports only the standard library.
package heapbudget

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Budget is the heap a process is held within while its live data fits.
const Budget = 800 << 20

// every is how often the limit is moved to follow what is live.
const every = time.Second

// Limit returns the soft memory limit for a process with live bytes of
// live data: Budget, or live and a quarter more once that is larger.
func Limit(live uint64) int64 {
	if live > math.MaxInt64/5*4 {
		return math.MaxInt64 // a quarter more would not fit
	}
	return max(Budget, int64(live+live/4))
}

// Start sets the limit and moves it each second to follow what is live,
// until stop is called (which removes the limit). With GOMEMLIMIT set it
// does nothing.
func Start() (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	debug.SetMemoryLimit(Budget)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				debug.SetMemoryLimit(Limit(sample[0].Value.Uint64()))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// Retained runs f with the garbage collector's heap-growth trigger off:
// f is to allocate what stays live, as decoding a history does, so a
// collection during it would find next to nothing to free, while a long
// run's history of millions of ops would be marked again at each doubling
// as it grows. A memory limit (GOMEMLIMIT, or Start's) still collects
// once the heap reaches it. check analyze of a 10-minute run spends a
// quarter less time this way (docs/performance.md).
func Retained(f func()) {
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	f()
}
