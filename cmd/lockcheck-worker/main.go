// Command lockcheck-worker is lockcheck's worker alone: the worker
// protocol on stdin and stdout, as `check worker` serves it. `check run
// --library-version` builds it with another version of a design's Go
// client library (package libraries): it links the designs and their
// clients, and nothing of the controller, so it builds in a fraction of
// the time of the whole check binary.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/lockcheck/lockcheck/workloads"
)

func main() {
	if len(os.Args) > 2 || len(os.Args) == 2 && os.Args[1] != "worker" {
		fmt.Fprintln(os.Stderr, "usage: lockcheck-worker [worker] (serves the worker protocol on stdin and stdout; check run starts it)")
		os.Exit(3)
	}
	if err := workloads.ServeStdio(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "lockcheck-worker:", err)
		os.Exit(3)
	}
}
