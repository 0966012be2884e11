package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
)

// profileEnv names the environment variable that makes every check
// process (the controller and each worker it starts) write a CPU profile:
// PREFIX.<command>.<pid>, for `go tool pprof`. It is for finding what a
// run's time goes to (docs/performance.md), not for users.
const profileEnv = "LOCKCHECK_CPUPROFILE"

// startProfile starts the CPU profile profileEnv asks for, if any, and
// returns what stops it. A profile that cannot be written is told on
// stderr and the command runs unprofiled.
func startProfile(args []string) func() {
	prefix := os.Getenv(profileEnv)
	if prefix == "" || len(args) == 0 {
		return func() {}
	}
	path := prefix + "." + args[0] + "." + strconv.Itoa(os.Getpid())
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "check: %s: %v\n", profileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "check: %s: %v\n", profileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
