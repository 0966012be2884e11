package etcd

import (
	"context"
	"sort"
	"testing"
	"time"
)

// BenchmarkEtcdReady starts a three-member etcd cluster five times and
// reports the median time from start to ready (a leader every member
// names, every member answering). Run:
// go test -run '^$' -bench EtcdReady -benchtime 1x ./services/etcd/
func BenchmarkEtcdReady(b *testing.B) {
	for range b.N {
		var took []time.Duration
		for range 5 {
			e := New(Config{Workers: 1, LogDir: b.TempDir()})
			start := time.Now()
			if err := e.Setup(context.Background()); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
			if err := e.Teardown(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		b.ReportMetric(took[2].Seconds(), "median-s")
		b.ReportMetric(took[0].Seconds(), "min-s")
		b.ReportMetric(took[4].Seconds(), "max-s")
	}
}
