package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/lockcheck/lockcheck/conformance"
	"github.com/lockcheck/lockcheck/workers"
	"github.com/lockcheck/lockcheck/workloads"
)

// cmdConformance is `check conformance --worker-cmd CMD [--lock NAME]`: it
// drives a worker through the protocol against a real lock service and
// lists every rule it breaks. Exit 0 when it conforms, 1 when it broke a
// rule, 3 when the check could not be carried out.
func cmdConformance(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("conformance", stderr)
	workerCmd := fs.String("worker-cmd", "", "command that runs one worker, split at spaces (default: the design's own worker, or this binary's worker subcommand)")
	lock := fs.String("lock", "redis-set-px", "lock design the worker is opened with; it picks the lock service")
	dir := fs.String("dir", "", "where node logs and workers.log go (default: a temporary directory, kept when a rule broke)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return helpOrError(help, err)
	}
	if fs.NArg() > 0 {
		return exitError, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	d, err := workloads.FindDesign(*lock)
	if err != nil {
		return exitError, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	argv := strings.Fields(*workerCmd)
	switch {
	case len(argv) > 0:
	case len(d.Worker) > 0:
		if argv, err = workers.Command(ctx, d.Worker); err != nil {
			return exitError, err
		}
	default:
		exe, err := os.Executable()
		if err != nil {
			return exitError, fmt.Errorf("find this binary for the worker command: %w", err)
		}
		argv = []string{exe, "worker"}
	}
	keep := *dir != ""
	if !keep {
		if *dir, err = os.MkdirTemp("", "lockcheck-conformance-"); err != nil {
			return exitError, err
		}
	}
	fmt.Fprintf(stdout, "conformance of %s as --lock %s (%s)\n", strings.Join(argv, " "), d.Name, d.Service)
	rep, err := conformance.Check(ctx, conformance.Options{Worker: argv, Lock: d.Name, Dir: *dir})
	if err != nil {
		return exitError, fmt.Errorf("%w (logs in %s)", err, *dir)
	}
	if ctx.Err() != nil {
		return exitInterrupted, errors.New("interrupted")
	}
	broken := make(map[string][]string)
	for _, b := range rep.Broken {
		broken[b.Rule] = append(broken[b.Rule], b.Detail)
	}
	for _, r := range conformance.RulesFor(d) {
		switch {
		case len(broken[r]) > 0:
			fmt.Fprintf(stdout, "  BROKEN  %s\n", r)
			for _, d := range broken[r] {
				fmt.Fprintf(stdout, "          %s\n", oneLine(d))
			}
		case contains(rep.Checked, r):
			fmt.Fprintf(stdout, "  ok      %s\n", r)
		default:
			fmt.Fprintf(stdout, "  -       %s (not reached)\n", r)
		}
	}
	if rep.Conforms() {
		if !keep {
			_ = os.RemoveAll(*dir)
		}
		fmt.Fprintln(stdout, "conforms")
		return exitValid, nil
	}
	fmt.Fprintf(stdout, "does not conform: %d rule(s) broken; worker stderr in %s/workers.log\n", len(broken), *dir)
	return exitInvalid, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
