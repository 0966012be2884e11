package runner

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/topofile"
)

// resolveExternal refuses an external cluster its service cannot be
// pointed at, or that gives the design the wrong number of servers; with
// a topology file it reads the file, checks its roles against the
// service's and reads the login from the environment.
func resolveExternal(p *Plan) error {
	t := p.Test
	form := p.Service.External
	switch {
	case len(t.External) == 0 && t.Topology == "":
		return errors.New("--cluster external: give the lock servers with --external HOST:PORT[,HOST:PORT...] or --external FILE (a topology file)")
	case form == nil:
		return fmt.Errorf("--cluster external: lock %s's service %s cannot run on servers you run yet (services that can: %s)",
			t.Lock, p.Service.Name, strings.Join(ExternalServices(), ", "))
	case t.Topology != "":
		return resolveTopology(p, form)
	case form.Login != nil:
		return fmt.Errorf("--external HOST:PORT: service %s needs a login: give a topology file (--external FILE, docs/your-lock.md)", p.Service.Name)
	case form.Check != nil:
		if err := form.Check(clusters.NewExternal(clusters.ExternalConfig{Addrs: t.External}).Config()); err != nil {
			return fmt.Errorf("--external HOST:PORT: service %s needs a topology file (--external FILE, docs/your-lock.md): %w", p.Service.Name, err)
		}
	case !form.Ensemble && len(t.External) != p.Design.LockNodes:
		return lockCountError(t.Lock, p.Design.LockNodes, len(t.External), "address")
	}
	for _, a := range t.External {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("--external %s: want HOST:PORT: %w", a, err)
		}
	}
	return nil
}

// lockCountError says a design got the wrong number of lock servers.
func lockCountError(lock string, want, given int, noun string) error {
	s := fmt.Sprintf("%d %ses were", given, noun)
	if given == 1 {
		s = "1 " + noun + " was"
	}
	return fmt.Errorf("--external: lock %s uses %d lock servers, and %s given", lock, want, s)
}

// ExternalServices returns the services a run can point at servers
// someone else runs, by name.
func ExternalServices() []string {
	var with []string
	for _, s := range clusters.Services() {
		if s.External != nil {
			with = append(with, s.Name)
		}
	}
	return with
}

// resolveTopology reads the test's topology file into the plan.
func resolveTopology(p *Plan, form *clusters.ExternalForm) error {
	t := p.Test
	f, err := topofile.Load(t.Topology)
	if err != nil {
		return err
	}
	if f.Service != "" && f.Service != p.Service.Name {
		return fmt.Errorf("topology file %s: its servers run %s, and lock %s runs on %s (give --service %s for a service that fronts it)",
			t.Topology, f.Service, t.Lock, p.Service.Name, f.Service)
	}
	for _, r := range f.Roles() {
		if _, ok := form.Roles[r]; !ok {
			return fmt.Errorf("topology file %s: role %q: service %s knows %s", t.Topology, r, p.Service.Name, rolesOf(form))
		}
	}
	if n := f.LockServers(); !form.Ensemble && n != p.Design.LockNodes {
		return lockCountError(t.Lock, p.Design.LockNodes, n, "lock server")
	}
	if form.Login != nil {
		if p.login, err = loginFrom(f.Login, *form.Login); err != nil {
			return fmt.Errorf("topology file %s: %w", t.Topology, err)
		}
	} else if f.Login != nil {
		return fmt.Errorf("topology file %s: service %s has no login (drop login:)", t.Topology, p.Service.Name)
	}
	if form.Check != nil {
		if err := form.Check(clusters.ExternalConfig{Servers: f.ExternalServers(), MasterName: f.MasterName}); err != nil {
			return fmt.Errorf("topology file %s: %w", t.Topology, err)
		}
	}
	p.external = f
	return nil
}

// rolesOf lists a service's roles for an error.
func rolesOf(form *clusters.ExternalForm) string {
	roles := []string{clusters.RoleLock}
	for r := range form.Roles {
		roles = append(roles, r)
	}
	sort.Strings(roles[1:])
	return "roles " + strings.Join(roles, ", ")
}

// loginFrom reads a login from the environment variables the file names,
// or the service's defaults; the user's must be set.
func loginFrom(names *topofile.Login, def clusters.LoginEnv) (clusters.Login, error) {
	env := def
	if names != nil {
		if names.UserEnv != "" {
			env.User = names.UserEnv
		}
		if names.PasswordEnv != "" {
			env.Password = names.PasswordEnv
		}
		if names.DatabaseEnv != "" {
			env.Database = names.DatabaseEnv
		}
	}
	l := clusters.Login{User: os.Getenv(env.User), Password: os.Getenv(env.Password), Database: os.Getenv(env.Database)}
	if l.User == "" {
		return clusters.Login{}, fmt.Errorf("the login's user comes from the environment variable %s, which is not set (login: user_env names another)", env.User)
	}
	if l.Database == "" {
		l.Database = def.DefaultDatabase
	}
	if l.Database == "" {
		l.Database = l.User
	}
	return l, nil
}

// buildExternal returns the external topology of the plan: its servers
// from the topology file or the addresses, with the service's own
// capabilities, and a leader when it has one lock server.
func buildExternal(p *Plan, cfg clusters.TopologyConfig) (topology, error) {
	ec := clusters.ExternalConfig{Addrs: p.Test.External, Workers: cfg.Workers, LogDir: cfg.LogDir, Login: p.login}
	if f := p.external; f != nil {
		ec.Servers = f.ExternalServers()
		ec.MasterName = f.MasterName
		ec.CommandTimeout, _ = f.Timeout()
	}
	e := clusters.NewExternal(ec)
	if form := p.Service.External; form != nil && form.Extend != nil {
		return form.Extend(e), nil
	}
	return ledIfOne(e), nil
}

// ledIfOne returns e with its one lock server as its leader, so the
// faults of a leader apply; e as it is with more.
func ledIfOne(e *clusters.External) topology {
	if e.Config().LockServers() == 1 {
		return e.Led(nil)
	}
	return e
}

// keepTopology copies the test's topology file into the run directory
// (topology.yml), so the run keeps what it ran against.
func keepTopology(dir string, t Test) error {
	if t.Topology == "" {
		return nil
	}
	b, err := os.ReadFile(t.Topology)
	if err != nil {
		return fmt.Errorf("keep the topology file: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "topology.yml"), b, 0o644)
}
