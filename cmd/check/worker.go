package main

import (
	"context"
	"io"

	"github.com/lockcheck/lockcheck/workloads"
)

// cmdWorker is `check worker`: the worker protocol on stdin and stdout,
// which `check run` starts one process of per worker slot.
func cmdWorker(args []string, stderr io.Writer) (int, error) {
	if help, err := noArgsHelp(args, stderr, "usage of check worker: check worker (no flags) serves the worker protocol on stdin and stdout; check run starts it\n"); help || err != nil {
		return helpOrError(help, err)
	}
	if err := workloads.ServeStdio(context.Background()); err != nil {
		return exitError, err
	}
	return exitValid, nil
}
