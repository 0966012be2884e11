package report

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
)

// Figures of BenchmarkServeIndex: the store it generates and the requests
// of one wave.
const (
	benchRuns     = 1000 // runs in the store
	benchTests    = 25   // test directories they are spread over
	benchBigEvery = 20   // every 20th run's results.json is a few MB
	benchClients  = 200  // concurrent GET / of a wave
)

// BenchmarkServeIndex measures `check serve`'s index over a store of
// benchRuns runs (1 in benchBigEvery with a results.json of about 2.6 MB,
// the others 1 KB for a valid run to 270 KB for one with 160 anomalies): each iteration is a wave of benchClients
// concurrent GET / over loopback TCP. It reports the median, 90th
// percentile and slowest latency of a request, and the peak heap
// (HeapInuse, sampled every millisecond) and peak RSS (VmHWM, reset before
// each wave) of the process, the server and its clients together:
//
//   - cold: no summary.json, a new server each wave, so the wave decodes
//     every results.json (the store's files are in the page cache);
//   - cached: no summary.json, the same server, its cache filled before;
//   - summaries: every run has a summary.json, a new server each wave;
//   - summaries-cached: the same with the cache filled before.
//
// Run it with
//
//	go test ./report/ -run '^$' -bench ServeIndex -benchtime 3x -count 5
func BenchmarkServeIndex(b *testing.B) {
	store := b.TempDir()
	results := genBenchStore(b, store)
	writeSummaries := func(b *testing.B) {
		for i := range benchRuns {
			dir := benchRunDir(store, i)
			if err := WriteSummary(dir, results[i%len(results)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	removeSummaries := func(b *testing.B) {
		for i := range benchRuns {
			if err := os.Remove(filepath.Join(benchRunDir(store, i), SummaryFile)); err != nil && !os.IsNotExist(err) {
				b.Fatal(err)
			}
		}
	}
	for _, bc := range []struct {
		name       string
		summaries  bool
		freshCache bool
	}{
		{"cold", false, true},
		{"cached", false, false},
		{"summaries", true, true},
		{"summaries-cached", true, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.summaries {
				writeSummaries(b)
			} else {
				removeSummaries(b)
			}
			var h atomic.Pointer[http.Handler]
			setHandler := func() { nh := NewServer(store); h.Store(&nh) }
			setHandler()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConns: benchClients, MaxIdleConnsPerHost: benchClients}}
			defer client.CloseIdleConnections()
			if !bc.freshCache {
				if rows := benchGet(b, client, srv.URL+"/"); rows != indexPageSize {
					b.Fatalf("the index shows %d rows, want %d", rows, indexPageSize)
				}
			}
			var lat []time.Duration
			var peakHeap, peakRSS uint64
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if bc.freshCache {
					setHandler()
				}
				runtime.GC()
				resetPeakRSS()
				b.StartTimer()
				l, heap := benchWave(b, client, srv.URL+"/")
				lat = append(lat, l...)
				peakHeap = max(peakHeap, heap)
				peakRSS = max(peakRSS, peakRSSBytes())
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, "median-ms")
			b.ReportMetric(float64(lat[len(lat)*9/10])/1e6, "p90-ms")
			b.ReportMetric(float64(lat[len(lat)-1])/1e6, "max-ms")
			b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(peakRSS)/(1<<20), "peak-rss-MB")
		})
	}
}

// benchWave sends benchClients concurrent GET url and returns their
// latencies and the peak heap in use meanwhile.
func benchWave(b *testing.B, client *http.Client, url string) ([]time.Duration, uint64) {
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
		var top uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			top = max(top, samples[0].Value.Uint64()+samples[1].Value.Uint64())
			select {
			case <-stop:
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	lat := make([]time.Duration, benchClients)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range benchClients {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			if rows := benchGet(b, client, url); rows != indexPageSize {
				b.Errorf("the index shows %d rows, want %d", rows, indexPageSize)
			}
			lat[i] = time.Since(t0)
		})
	}
	close(start)
	wg.Wait()
	close(stop)
	return lat, <-peak
}

// benchGet GETs url, reads the body and returns the rows of the index.
func benchGet(b *testing.B, client *http.Client, url string) int {
	resp, err := client.Get(url)
	if err != nil {
		b.Error(err)
		return -1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		b.Errorf("GET %s: %s, %v", url, resp.Status, err)
		return -1
	}
	return strings.Count(string(body), `<tr class="run"`)
}

// resetPeakRSS resets the process's VmHWM (Linux; ignored elsewhere).
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSBytes returns the process's VmHWM, 0 if unknown.
func peakRSSBytes() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// benchRunDir is the directory of run i of the benchmark's store.
func benchRunDir(store string, i int) string {
	run := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 7 * time.Minute).Format("20060102T150405")
	return filepath.Join(store, fmt.Sprintf("redis-set-px-pause-%02d", i%benchTests), run)
}

// genBenchStore writes benchRuns runs to store as the runner leaves them
// (test.json, results.json, history.jsonl, report.html, workers.log) and
// returns the results they hold, run i holding results[i%len(results)].
func genBenchStore(b *testing.B, store string) []checker.Result {
	// A few shapes of results.json, as checker.Default composes them: the
	// anomalies at the top and again in the sub-results of their checkers,
	// and stats. Index benchBigEvery-1 is the big one.
	results := make([]checker.Result, benchBigEvery)
	for k := range results {
		n := 0 // anomalies
		switch {
		case k == benchBigEvery-1:
			n = 1500 // about 2.6 MB
		case k%3 == 1:
			n = 10 * k // up to 160
		}
		results[k] = benchResult(k, n)
	}
	encoded := make([][]byte, len(results))
	for k, r := range results {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			panic(err)
		}
		encoded[k] = append(b, '\n')
	}
	total := 0
	for i := range benchRuns {
		total += len(encoded[i%len(encoded)])
	}
	small := slices.SortedFunc(slices.Values(encoded[:benchBigEvery-1]), func(a, b []byte) int { return len(a) - len(b) })
	b.Logf("results.json: 1 in %d of %d bytes, the others %d to %d; %d MB in all", benchBigEvery, len(encoded[benchBigEvery-1]),
		len(small[0]), len(small[len(small)-1]), total>>20)
	locks := []string{"redis-set-px", "redlock", "zk-lock", "etcd-mutex", "pg-advisory"}
	for i := range benchRuns {
		dir := benchRunDir(store, i)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		started := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 7 * time.Minute)
		lock := locks[i%len(locks)]
		test := fmt.Sprintf(`{"name":"redis-set-px-pause-%02d","lock":%q,"nemesis":"pause","workers":10,"keys":1,"nodes":1,
"time":60000000000,"lease":1000000000,"think":1000000,"seed":%d,"fencing":%v,"started":%q,
"command":["check","run","--lock",%q,"--nemesis","pause","--workers","10","--time","1m0s","--seed","%d"],
"versions":{"go":"go1.26","redis-server":"7.0.15"}}`, i%benchTests, lock, i, i%2 == 0, started.Format(time.RFC3339), lock, i)
		for name, body := range map[string][]byte{
			"test.json":     []byte(test),
			"results.json":  encoded[i%len(encoded)],
			"history.jsonl": []byte(`{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k0"}` + "\n"),
			"report.html":   []byte("<!doctype html><title>report</title>"),
			"workers.log":   []byte("worker 0 started\n"),
		} {
			if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return results
}

// benchResult is a composed result with n anomalies.
func benchResult(k, n int) checker.Result {
	kinds := []string{"double-holder", "lost-update", "stale-write", "token-order"}
	var as []checker.Anomaly
	for i := range n {
		as = append(as, checker.Anomaly{Kind: kinds[i%len(kinds)], Key: "k0", Processes: []int{i % 10, (i + 3) % 10},
			Start: time.Duration(i) * 37 * time.Millisecond, End: time.Duration(i)*37*time.Millisecond + 3*time.Second,
			Ops: []int{i * 7, i*7 + 3, i*7 + 5, i*7 + 9}, Fenced: i%5 == 0,
			Nemesis: []string{fmt.Sprintf("pause of process %d from %.2f s to %.2f s", i%10, float64(i)*0.037, float64(i)*0.037+3)},
			Explanation: fmt.Sprintf("process %d was granted the lock at %.3f s with token %d while process %d, paused since %.3f s, "+
				"still believed it held the lock from its grant at %.3f s; it resumed at %.3f s and wrote %d over %d, "+
				"so the register lost the update of process %d. The lease was 1 s, the pause 3 s.",
				(i+3)%10, float64(i)*0.037+1, i+100, i%10, float64(i)*0.037, float64(i)*0.037-0.2, float64(i)*0.037+3, i, i+1, (i+3)%10)})
	}
	valid := checker.Valid
	if n > 0 {
		valid = checker.Invalid
	}
	stats := map[string]any{"ops": 27000 + k, "grants": 2400, "acquire_p50_ms": 1.2, "acquire_p99_ms": 1004.5, "check_s": 0.8}
	sub := func(name string, as []checker.Anomaly) checker.Result {
		v := checker.Valid
		if len(as) > 0 {
			v = checker.Invalid
		}
		return checker.Result{Checker: name, Valid: v, Anomalies: as, Stats: map[string]any{"ops": 27000}}
	}
	half := len(as) / 2
	return checker.Result{Checker: "lockcheck", Valid: valid, Anomalies: as, Stats: stats,
		Results: []checker.Result{sub("mutex", as[:half]), sub("resource", as[half:]), sub("overlap", as[:half]),
			sub("fencing", nil), sub("liveness", nil), sub("stats", nil)}}
}
