// Package servicetest holds what the tests that start a real lock service
// share: finding a design's service and skipping where it is not installed.
package servicetest

import (
	"testing"

	"github.com/lockcheck/lockcheck/clusters"
	// The services in folders of their own register when linked in.
	_ "github.com/lockcheck/lockcheck/services"
	"github.com/lockcheck/lockcheck/workloads"
)

// Need returns the service the design lock runs on, and skips tb when the
// service's binaries are not installed (its Look names the package).
func Need(tb testing.TB, lock string) clusters.Service {
	tb.Helper()
	d, err := workloads.FindDesign(lock)
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := clusters.FindService(d.Service)
	if err != nil {
		tb.Fatal(err)
	}
	if err := svc.Look(); err != nil {
		tb.Skip(err)
	}
	return svc
}

// NeedService returns the service called name, and skips tb when its
// binaries are not installed (its Look names the package).
func NeedService(tb testing.TB, name string) clusters.Service {
	tb.Helper()
	svc, err := clusters.FindService(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := svc.Look(); err != nil {
		tb.Skip(err)
	}
	return svc
}
