package main

import (
	"fmt"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/matrix"
	"github.com/lockcheck/lockcheck/workloads"
)

// versionCells runs every cell once per lock-server version of list
// (check matrix --service-version a,b), checking that each cell's service
// has each version, so that a version a service does not know is exit 3
// before any run.
func versionCells(cells []matrix.Cell, list string) ([]matrix.Cell, error) {
	versions := splitList(list)
	if len(versions) == 0 {
		return cells, nil
	}
	out := matrix.ByVersions(cells, versions)
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
