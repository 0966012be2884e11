package runner

import (
	"fmt"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/workloads"
)

// findService finds the lock service t runs d on: d's own, or the one
// --service names, which must be d's own or front it
// (clusters.Service.Fronts).
func findService(t Test, d workloads.Design) (clusters.Service, error) {
	if t.Service == "" || t.Service == d.Service {
		return clusters.FindService(d.Service)
	}
	svc, err := clusters.FindService(t.Service)
	if err != nil {
		return clusters.Service{}, err
	}
	if svc.Fronts != d.Service {
		return clusters.Service{}, fmt.Errorf("--service %s: %s runs on %s, which %s does not front (services for it: %s)",
			t.Service, d.Name, d.Service, t.Service, strings.Join(ServicesFor(d), ", "))
	}
	if t.Cluster != "" && t.Cluster != ClusterLocal && t.Cluster != ClusterExternal {
		return clusters.Service{}, fmt.Errorf("--service %s: goes with --cluster local or external (not %s)", t.Service, t.Cluster)
	}
	return svc, nil
}

// ServicesFor returns the services design d can run on: its own first,
// then those that front it, by name.
func ServicesFor(d workloads.Design) []string {
	out := []string{d.Service}
	for _, s := range clusters.Services() {
		if s.Fronts != "" && s.Fronts == d.Service {
			out = append(out, s.Name)
		}
	}
	return out
}
