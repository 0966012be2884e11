package containers_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/containers"
	redisnode "github.com/lockcheck/lockcheck/services/redis"
	"github.com/lockcheck/lockcheck/services/zookeeper"
)

// BenchmarkReady sets up each topology five times, as local processes and
// as containers, and reports the median time from Setup's start to ready
// (every node answering, ten worker slots' proxies up), then tears it
// down. Run: go test -run '^$' -bench Ready -benchtime 1x ./containers/
func BenchmarkReady(b *testing.B) {
	cases := []struct {
		name    string
		service string
		local   func(cfg clusters.TopologyConfig) clusters.Topology
	}{
		{"redis", "redis", func(cfg clusters.TopologyConfig) clusters.Topology {
			return redisnode.NewRedis(redisnode.RedisConfig{LockNodes: 1, Workers: cfg.Workers, LogDir: cfg.LogDir, Persist: true})
		}},
		{"zookeeper", "zookeeper", func(cfg clusters.TopologyConfig) clusters.Topology {
			return zookeeper.New(zookeeper.Config{Nodes: 3, Workers: cfg.Workers, LogDir: cfg.LogDir})
		}},
	}
	for _, c := range cases {
		for _, kind := range []string{"local", "docker"} {
			b.Run(c.name+"/"+kind, func(b *testing.B) {
				form := formOf(b, c.service)
				var err error
				if kind == "docker" {
					if err := containers.Look(context.Background(), form); errors.Is(err, containers.ErrNoEngine) || errors.Is(err, containers.ErrMissingImage) {
						b.Skip(err)
					}
				}
				for range b.N {
					var took []time.Duration
					for range 5 {
						cfg := clusters.TopologyConfig{Workers: 10, LockNodes: 1, Nodes: 3, LogDir: b.TempDir(), RunID: "bench"}
						var top clusters.Topology
						if kind == "local" {
							top = c.local(cfg)
						} else if top, err = form.New(cfg); err != nil {
							b.Fatal(err)
						}
						start := time.Now()
						if err := top.Setup(context.Background()); err != nil {
							b.Fatal(err)
						}
						took = append(took, time.Since(start))
						if err := top.Teardown(context.Background()); err != nil {
							b.Fatal(err)
						}
					}
					sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
					b.ReportMetric(took[2].Seconds(), "median-s")
					b.ReportMetric(took[0].Seconds(), "min-s")
					b.ReportMetric(took[4].Seconds(), "max-s")
				}
			})
		}
	}
}
