package runner

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/schedule"
)

// BenchmarkTriggerLate measures how late a triggered fault is in force
// after its trigger said to strike, on real Redis at --think 0: a process
// fault (pause: SIGSTOP, the worker seen stopped) and a link fault
// (partition: a Toxiproxy toxic on the holder's links), each fired at 40
// grants in a row. It reports the p50, p99 and max lateness in ms (the
// targets: p99 within 5 ms for a process fault, 20 ms for a link fault).
// One iteration is one run: go test -bench TriggerLate -benchtime 1x.
func BenchmarkTriggerLate(b *testing.B) {
	for _, kind := range []string{"pause", "partition"} {
		b.Run(kind, func(b *testing.B) {
			var lates []time.Duration
			for i := 0; i < b.N; i++ {
				tt := quick(b, "redis-set-px", kind+"@grant:20ms*40", false)
				tt.Think, tt.Time, tt.Workers, tt.Lease, tt.Seed = 0, 8*time.Second, 10, time.Second, uint64(i+1)
				out, err := Run(context.Background(), tt, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				rec, err := schedule.Load(filepath.Join(out.Dir, schedule.FileName))
				if err != nil {
					b.Fatal(err)
				}
				lates = append(lates, schedule.Lates(rec.Faults)...)
			}
			if len(lates) == 0 {
				b.Fatal("no triggered fault took effect")
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(schedule.Quantile(lates, 0.5)), "p50-ms")
			b.ReportMetric(ms(schedule.Quantile(lates, 0.99)), "p99-ms")
			b.ReportMetric(ms(schedule.Quantile(lates, 1)), "max-ms")
			b.ReportMetric(float64(len(lates)), "faults")
		})
	}
}
