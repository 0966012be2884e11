package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/runner"
)

// cmdBench measures harness overhead: grants per second through worker
// processes and the recorder, over grants per second of a plain loop in one
// process with the same lock client, in the same invocation. For a design
// run by its own worker in another language, the plain loop is the
// design's own (workloads.Design.Plain) in that language.
func cmdBench(args []string, stdout, stderr io.Writer) (int, error) {
	var t runner.Test
	t.Lock = "redis-set-px"
	t.Defaults() // the flags below override; what they leave is as in check run
	t.Name = ""
	var seed int64
	rounds := 0
	observer, armed := false, false
	fs := newFlags("bench", stderr)
	fs.StringVar(&t.Lock, "lock", "redis-set-px", "lock design")
	fs.IntVar(&t.Workers, "workers", 10, "number of workers")
	fs.DurationVar(&t.Time, "time", 10*time.Second, "length of each measurement")
	fs.DurationVar(&t.Think, "think", time.Millisecond, "critical-section think time")
	fs.DurationVar(&t.Retry, "retry", 2*time.Millisecond, "mean pause between acquire attempts")
	fs.IntVar(&rounds, "rounds", 3, "how many harness/plain pairs to measure")
	fs.Int64Var(&seed, "seed", 1, "random seed")
	fs.StringVar(&t.Store, "store", "", "store directory (default: a temporary one)")
	fs.BoolVar(&observer, "observer", false, "measure what the release observer costs instead: each round runs the harness with it and without it, in alternating order, and compares their grants per second and CPU per grant")
	fs.BoolVar(&armed, "armed", false, "arm triggered faults that never fire in the run (each waits for its millionth event), so that the harness's rate includes what the trigger engine costs on every recorded op")
	if help, err := parseFlags(fs, args); help || err != nil {
		return helpOrError(help, err)
	}
	if fs.NArg() > 0 {
		return exitError, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if armed {
		t.Nemesis = runner.ArmedSpec
	}
	if rounds < 1 || rounds > 100 {
		return exitError, fmt.Errorf("--rounds %d: want 1 to 100", rounds)
	}
	if err := checkGiven(fs); err != nil {
		return exitError, err
	}
	if err := t.Validate(); err != nil {
		return exitError, err
	}
	t.Seed = uint64(seed)
	if t.Store == "" {
		dir, err := clusters.TempDir("bench-store-")
		if err != nil {
			return exitError, err
		}
		defer os.RemoveAll(dir)
		t.Store = dir
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if observer {
		return benchObserver(ctx, stdout, t, rounds)
	}
	var ratios []float64
	for i := 0; i < rounds; i++ {
		o, err := runner.BenchOverhead(ctx, t, io.Discard)
		if err != nil {
			return exitError, err
		}
		ratios = append(ratios, o.Ratio)
		printOverhead(stdout, i+1, t.Time, o)
	}
	what := ""
	if armed {
		what = ", triggers armed"
	}
	fmt.Fprintf(stdout, "harness/plain grants per second: median ratio %.2f over %d rounds (%s, %d workers, think %s%s)\n",
		median(ratios), len(ratios), t.Lock, t.Workers, t.Think, what)
	return exitValid, nil
}

// benchObserver is check bench --observer: rounds of the harness with and
// without the release observer, and the median of what it cost.
func benchObserver(ctx context.Context, stdout io.Writer, t runner.Test, rounds int) (int, error) {
	var costs []float64
	for i := 0; i < rounds; i++ {
		c, err := runner.BenchObserver(ctx, t, io.Discard, i%2 == 0)
		if err != nil {
			return exitError, err
		}
		if !c.HasObserver {
			return exitError, fmt.Errorf("%s: its lock service has no release observer to measure", t.Lock)
		}
		costs = append(costs, c.Cost)
		fmt.Fprintf(stdout, "round %d: with the observer %d grants (%.1f/s), without %d grants (%.1f/s), cost %.1f%%",
			i+1, c.ObservedGrants, c.Observed, c.UnobservedGrants, c.Unobserved, 100*c.Cost)
		fmt.Fprintf(stdout, "; CPU per grant: with %s (controller %s), without %s (controller %s)",
			perGrant(c.ObservedCPU, c.ObservedGrants), perGrant(c.ObservedSelfCPU, c.ObservedGrants),
			perGrant(c.UnobservedCPU, c.UnobservedGrants), perGrant(c.UnobservedSelfCPU, c.UnobservedGrants))
		if c.ObservedCommands > 0 {
			fmt.Fprintf(stdout, "; Redis lock node commands per grant: with %.1f, without %.1f",
				perGrantN(c.ObservedCommands, c.ObservedGrants), perGrantN(c.UnobservedCommands, c.UnobservedGrants))
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "release observer: median cost %.1f%% of the harness's grants per second over %d rounds (%s, %d workers, think %s)\n",
		100*median(costs), len(costs), t.Lock, t.Workers, t.Think)
	return exitValid, nil
}

// printOverhead prints one round of check bench: the rates and their ratio,
// where the CPU went per grant, and what the Redis nodes served.
func printOverhead(w io.Writer, round int, d time.Duration, o runner.Overhead) {
	fmt.Fprintf(w, "round %d: harness %d grants (%.1f/s), plain loop %d grants (%.1f/s), ratio %.2f\n",
		round, o.HarnessGrants, o.HarnessRate, o.PlainGrants, o.PlainRate, o.Ratio)
	controller := o.HarnessCPU - o.HarnessWorkerCPU - o.HarnessServerCPU
	fmt.Fprintf(w, "  CPU per grant: harness %s (controller and proxies %s, workers %s, servers %s), plain loop %s (loop and proxies %s, servers %s)\n",
		perGrant(o.HarnessCPU, o.HarnessGrants), perGrant(controller, o.HarnessGrants),
		perGrant(o.HarnessWorkerCPU, o.HarnessGrants), perGrant(o.HarnessServerCPU, o.HarnessGrants),
		perGrant(o.PlainCPU, o.PlainGrants), perGrant(o.PlainCPU-o.PlainServerCPU, o.PlainGrants), perGrant(o.PlainServerCPU, o.PlainGrants))
	if o.HarnessCommands == 0 && o.PlainCommands == 0 {
		return
	}
	nodes := float64(max(1, o.LockNodes))
	harness, plain := float64(o.HarnessCommands)/d.Seconds()/nodes, float64(o.PlainCommands)/d.Seconds()/nodes
	fmt.Fprintf(w, "  Redis lock node commands per grant: harness %.1f, plain loop %.1f; per second and lock node: harness %.0f, plain loop %.0f",
		perGrantN(o.HarnessCommands, o.HarnessGrants), perGrantN(o.PlainCommands, o.PlainGrants), harness, plain)
	if o.ServerRate > 0 {
		fmt.Fprintf(w, ", the node's own rate %.0f (harness at %.0f%% of it)", o.ServerRate, 100*harness/o.ServerRate)
	}
	fmt.Fprintln(w)
}

// perGrant is d per grant, in milliseconds.
func perGrant(d time.Duration, grants int) string {
	if grants == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)/float64(grants))
}

func perGrantN(n int64, grants int) float64 {
	if grants == 0 {
		return 0
	}
	return float64(n) / float64(grants)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
