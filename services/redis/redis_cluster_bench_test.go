package redis

import (
	"context"
	"sort"
	"testing"
	"time"
)

// BenchmarkRedisClusterReady starts the six-node Redis clusters.Cluster five times
// and reports the median time from start to ready (every node
// cluster_state:ok with all slots covered, three masters with a replica
// each in sync). Run: go test -run '^$' -bench RedisClusterReady -benchtime 1x ./clusters/
func BenchmarkRedisClusterReady(b *testing.B) {
	for range b.N {
		var took, down []time.Duration
		for range 5 {
			c := NewRedisCluster(RedisClusterConfig{Workers: 1, LogDir: b.TempDir(), Persist: true})
			start := time.Now()
			if err := c.Setup(context.Background()); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
			start = time.Now()
			if err := c.Teardown(context.Background()); err != nil {
				b.Fatal(err)
			}
			down = append(down, time.Since(start))
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		sort.Slice(down, func(i, j int) bool { return down[i] < down[j] })
		b.ReportMetric(took[2].Seconds(), "median-s")
		b.ReportMetric(took[0].Seconds(), "min-s")
		b.ReportMetric(took[4].Seconds(), "max-s")
		b.ReportMetric(down[2].Seconds(), "teardown-median-s")
	}
}
