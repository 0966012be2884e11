package zookeeper

import (
	"context"
	"sort"
	"testing"
	"time"
)

// BenchmarkZooKeeperReady starts a three-node ensemble five times and
// reports the median time from start to ready (a leader elected, every node
// serving). Run: go test -run '^$' -bench ZooKeeperReady -benchtime 1x ./services/zookeeper/
func BenchmarkZooKeeperReady(b *testing.B) {
	for range b.N {
		var took []time.Duration
		for range 5 {
			z := New(Config{Nodes: 3, Workers: 1, LogDir: b.TempDir()})
			start := time.Now()
			if err := z.Setup(context.Background()); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
			if err := z.Teardown(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		b.ReportMetric(took[2].Seconds(), "median-s")
		b.ReportMetric(took[0].Seconds(), "min-s")
		b.ReportMetric(took[4].Seconds(), "max-s")
	}
}
