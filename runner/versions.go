package runner

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
)

// redisVersion returns what `redis-server --version` prints, or "".
func redisVersion() string {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// resolveVersion finds the server version t asks for (--service-version)
// among svc's, refusing one the service does not list, and one given for a
// cluster lockcheck does not start itself from local binaries.
func resolveVersion(t Test, svc clusters.Service) (clusters.ServerVersion, error) {
	if t.ServiceVersion != "" && t.Cluster != "" && t.Cluster != ClusterLocal {
		return clusters.ServerVersion{}, fmt.Errorf("--service-version %s: goes with --cluster local (not %s)", t.ServiceVersion, t.Cluster)
	}
	return svc.FindVersion(t.ServiceVersion)
}

// findServer finds the plan's server binary, building its version first
// when it is not in the cache yet (progress to log); a plan without a
// version, or with another cluster than local, keeps the installed server.
func (p *Plan) findServer(ctx context.Context, log io.Writer) error {
	if p.Version.Server == nil || p.Test.Cluster != "" && p.Test.Cluster != ClusterLocal {
		return nil
	}
	path, err := p.Version.Server(ctx, log)
	if err != nil {
		return fmt.Errorf("%s %s: %w", p.Service.Name, p.Version.Name, err)
	}
	p.server = path
	return nil
}

// serverVersion is the version the plan's server reports of itself, for
// test.json; ok is false when the plan has no version of its own to ask.
func (p *Plan) serverVersion() (v string, ok bool) {
	if p.server == "" || p.Version.Reported == nil {
		return "", false
	}
	return p.Version.Reported(p.server), true
}
