// Package dockertest holds what lockcheck's container tests share: make
// test (scripts/test.sh) builds the images in the background while the rest
// of the suite runs, and runs the container tests in a phase of their own,
// `go test -run Docker`, once the images are ready.
package dockertest

import (
	"os"
	"strings"
	"testing"
)

// Env is the variable scripts/test.sh sets to Deferred for the suite's main
// run, while it builds the images.
const Env = "LOCKCHECK_DOCKER_TESTS"

// Deferred is Env's value when the container tests are left to make test's
// Docker phase.
const Deferred = "deferred"

// Mark is the part of every container test's name that the Docker phase
// selects with -run.
const Mark = "Docker"

// Skip skips t under -short and while make test defers the container tests
// to its Docker phase. A test that calls it must have Mark in its name, or
// that phase would never run it: Skip fails such a test.
func Skip(t testing.TB) {
	t.Helper()
	if !strings.Contains(t.Name(), Mark) {
		t.Fatalf("container test %s: its name must contain %q, which make test's Docker phase selects with -run", t.Name(), Mark)
	}
	if testing.Short() {
		t.Skip("-short: no containers")
	}
	if os.Getenv(Env) == Deferred {
		t.Skipf("deferred (%s=%s): make test runs the container tests once the images it builds are ready", Env, Deferred)
	}
}
