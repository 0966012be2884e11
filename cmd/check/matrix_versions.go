package main

import (
	"fmt"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/matrix"
	"github.com/lockcheck/lockcheck/runner"
	"github.com/lockcheck/lockcheck/workloads"
)

// versionCells runs every cell once per lock-server version of servers
// (check matrix --service-version a,b) and once per client-library version
// of libs (--library-version c,d), checking that each cell's service has
// each server version and its design a library, so that a version a cell
// cannot run is exit 3 before any run.
func versionCells(cells []matrix.Cell, servers, libs string) ([]matrix.Cell, error) {
	sv, lv := splitList(servers), splitList(libs)
	if len(sv)+len(lv) == 0 {
		return cells, nil
	}
	out := matrix.ByLibraryVersions(matrix.ByVersions(cells, sv), lv)
	for _, c := range out {
		if err := checkCell(c); err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.Name(), err)
		}
	}
	return out, nil
}

// checkVersion refuses a lock-server version ver ("" is the default) that
// design d's service does not have.
func checkVersion(d workloads.Design, ver string) error {
	if ver == "" {
		return nil
	}
	svc, err := clusters.FindService(d.Service)
	if err != nil {
		return err
	}
	_, err = svc.FindVersion(ver)
	return err
}

// checkLibraryVersion refuses a client-library version ver ("" is the
// pinned one) that design d's runs could not link, as check run would.
func checkLibraryVersion(d workloads.Design, ver string) error {
	_, _, err := runner.ResolveLibrary(runner.Test{LibraryVersion: ver}, d)
	return err
}
