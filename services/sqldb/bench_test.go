package sqldb

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// BenchmarkPostgresReady sets up a PostgreSQL topology (initdb, server,
// storage node, proxies) five times and reports the median time from
// Setup to ready (SELECT 1 answered). Run:
// go test -run '^$' -bench PostgresReady -benchtime 1x ./services/sqldb/
func BenchmarkPostgresReady(b *testing.B) {
	needPostgres(b)
	benchReady(b, func() clusters.Topology { return NewPostgres(Config{Workers: 10, LogDir: b.TempDir()}) })
}

// benchReady reports the median, min and max of five setups of new.
func benchReady(b *testing.B, new func() clusters.Topology) {
	for range b.N {
		var took []time.Duration
		for range 5 {
			c := new()
			start := time.Now()
			if err := c.Setup(context.Background()); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(start))
			if err := c.Teardown(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		b.ReportMetric(took[2].Seconds(), "median-s")
		b.ReportMetric(took[0].Seconds(), "min-s")
		b.ReportMetric(took[4].Seconds(), "max-s")
	}
}

// BenchmarkMariaDBReady is BenchmarkPostgresReady for MariaDB
// (mariadb-install-db, mariadbd).
func BenchmarkMariaDBReady(b *testing.B) {
	needMariaDB(b)
	benchReady(b, func() clusters.Topology { return NewMariaDB(Config{Workers: 10, LogDir: b.TempDir()}) })
}
