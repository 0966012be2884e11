package checker

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockcheck/lockcheck/history"
)

// benchShape is the harness shape of the benchmarks: 10 workers polling for
// the lock, so that about nine acquires are in flight at any moment; 1 % of
// ops in doubt, each retiring its process (a crash op); 0.5 % of holders
// killed after their grant; keys 1 or 10. The histories are valid.
func benchShape(ops, keys int) harnessShape {
	return harnessShape{ops: ops, keys: keys, workers: 10, info: 0.01, retire: true, kill: 0.005}
}

// benchSizes are the history lengths benchmarked; LOCKCHECK_BENCH_MAX raises
// or lowers the largest (default 10^6; 10^7 needs about 4 GiB for the
// history alone).
func benchSizes() []int {
	maxOps := 1_000_000
	if v, err := strconv.ParseFloat(os.Getenv("LOCKCHECK_BENCH_MAX"), 64); err == nil && v > 0 {
		maxOps = int(v)
	}
	var out []int
	for n := 10_000; n <= maxOps; n *= 10 {
		out = append(out, n)
	}
	return out
}

// benchHistories caches generated histories by size and keys: a 10^7-op
// history takes a while to generate.
var benchHistories = map[[2]int]history.History{}

func benchHistory(ops, keys int) history.History {
	k := [2]int{ops, keys}
	if h, ok := benchHistories[k]; ok {
		return h
	}
	clear(benchHistories) // keep one at a time
	runtime.GC()
	h := genHarness(uint64(ops+keys), benchShape(ops, keys))
	benchHistories[k] = h
	return h
}

// BenchmarkCheck checks harness-shaped histories with Default (every
// checker, as `check run` does) and with the mutex checker alone, warm (in
// a process that has checked before). peak-MiB is the peak live heap during
// the checks, including the history (history-MiB).
func BenchmarkCheck(b *testing.B) {
	for _, keys := range []int{1, 10} {
		for _, n := range benchSizes() {
			for _, which := range []string{"default", "mutex"} {
				b.Run(fmt.Sprintf("keys=%d/ops=%d/%s", keys, n, which), func(b *testing.B) {
					h := benchHistory(n, keys)
					c := Default(Options{StuckBound: 10 * time.Second})
					if which == "mutex" {
						c = NewMutex(Options{})
					}
					runtime.GC()
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					base := float64(ms.HeapAlloc) / (1 << 20)
					s := sampleHeap()
					cpu := cpuTime()
					b.ResetTimer()
					for b.Loop() {
						if r := c.Check(context.Background(), h); r.Valid != Valid {
							b.Fatalf("valid = %v (%s)\n%s", r.Valid, r.Error, dump(r.Anomalies[:min(3, len(r.Anomalies))]))
						}
					}
					b.StopTimer()
					b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
					b.ReportMetric(s.Stop(), "peak-MiB")
					b.ReportMetric(base, "history-MiB")
				})
			}
		}
	}
}

// BenchmarkCheckCold times the first check in a fresh process, as in `check
// run` and `check analyze`: the benchmark re-runs the test binary with
// TestColdCheck, which generates the history, then times one Default check.
func BenchmarkCheckCold(b *testing.B) {
	for _, keys := range []int{1, 10} {
		for _, n := range benchSizes() {
			b.Run(fmt.Sprintf("keys=%d/ops=%d", keys, n), func(b *testing.B) {
				var total, cpu time.Duration
				var peak float64
				for b.Loop() {
					cmd := exec.Command(os.Args[0], "-test.run=^TestColdCheck$", "-test.count=1")
					cmd.Env = append(os.Environ(), fmt.Sprintf("LOCKCHECK_COLD=%d,%d", n, keys))
					out, err := cmd.CombinedOutput()
					if err != nil {
						b.Fatalf("%v\n%s", err, out)
					}
					var ns, cpuNs int64
					var mib float64
					i := strings.Index(string(out), "cold-check ")
					if i < 0 {
						b.Fatalf("no result in\n%s", out)
					}
					if _, err := fmt.Sscanf(string(out[i:]), "cold-check %d %f %d", &ns, &mib, &cpuNs); err != nil {
						b.Fatalf("%v in\n%s", err, out)
					}
					total += time.Duration(ns)
					cpu += time.Duration(cpuNs)
					peak = max(peak, mib)
				}
				b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "check-ns/op")
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(peak, "peak-MiB")
			})
		}
	}
}

// TestColdCheck is BenchmarkCheckCold's child; it does nothing unless
// LOCKCHECK_COLD is set.
func TestColdCheck(t *testing.T) {
	v := os.Getenv("LOCKCHECK_COLD")
	if v == "" {
		t.Skip("run by BenchmarkCheckCold")
	}
	var n, keys int
	if _, err := fmt.Sscanf(v, "%d,%d", &n, &keys); err != nil {
		t.Fatal(err)
	}
	h := genHarness(uint64(n+keys), benchShape(n, keys))
	runtime.GC()
	s := sampleHeap()
	start, cpu := time.Now(), cpuTime()
	r := Default(Options{StuckBound: 10 * time.Second}).Check(context.Background(), h)
	d, c := time.Since(start), cpuTime()-cpu
	if r.Valid != Valid {
		t.Fatalf("valid = %v (%s)", r.Valid, r.Error)
	}
	fmt.Printf("cold-check %d %.1f %d\n", d.Nanoseconds(), s.Stop(), c.Nanoseconds())
}

// BenchmarkPlainPorcupine checks the same histories with plain Porcupine
// (the mutex model, every op with its real interval, nothing cut), up to
// 10^5 ops, or LOCKCHECK_BENCH_PLAIN_MAX: beyond 10^5 ops on one key its
// memory grows past what the machine can spare (run it under a memory
// limit). decided is 1 when it answered within 60 s.
func BenchmarkPlainPorcupine(b *testing.B) {
	plainMax := 100_000
	if v, err := strconv.ParseFloat(os.Getenv("LOCKCHECK_BENCH_PLAIN_MAX"), 64); err == nil && v > 0 {
		plainMax = int(v)
	}
	for _, keys := range []int{1, 10} {
		for _, n := range benchSizes() {
			if n > plainMax {
				continue
			}
			b.Run(fmt.Sprintf("keys=%d/ops=%d", keys, n), func(b *testing.B) {
				h := benchHistory(n, keys)
				runtime.GC()
				s := sampleHeap()
				decided := 1.0
				cpu := cpuTime()
				for b.Loop() {
					switch plainCheck(b, h, false, 60*time.Second) {
					case porcupine.Unknown:
						decided = 0
					case porcupine.Illegal:
						b.Fatal("plain Porcupine: illegal")
					}
				}
				b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(s.Stop(), "peak-MiB")
				b.ReportMetric(decided, "decided")
			})
		}
	}
}

// cpuTime returns the CPU time (user and system) the process has used: on a
// shared machine it says more than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
