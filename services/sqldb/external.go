package sqldb

import (
	"context"
	"errors"

	"github.com/lockcheck/lockcheck/clusters"
)

// RoleBackend is the role, in a topology file, of the PostgreSQL server
// behind a PgBouncer someone else runs: the session kill ends the
// sessions there.
const RoleBackend = "backend"

// externalDB is a database server someone else runs (or PgBouncer in
// front of one), with lockcheck's session kill through the login the
// topology file's environment gives.
type externalDB struct {
	*clusters.LedExternal
	engine dbEngine
	// admin is where the session kill connects: the lock server, or the
	// PostgreSQL server behind a pooler.
	admin  string
	pooled bool
}

var (
	_ clusters.SessionKiller = (*externalDB)(nil)
	_ clusters.LoginNeeder   = (*externalDB)(nil)
)

// externalForm returns the external form of a database service: its
// login's environment variables and its session kill; pooled for
// PgBouncer, whose topology file may name the PostgreSQL server behind
// it (role backend).
func externalForm(env clusters.LoginEnv, engine func(as *clusters.Login) dbEngine, pooled bool) *clusters.ExternalForm {
	form := &clusters.ExternalForm{Login: &env, Extend: func(e *clusters.External) clusters.Topology {
		cfg := e.Config()
		as := cfg.Login
		d := &externalDB{LedExternal: e.Led(nil), engine: engine(&as), pooled: pooled}
		for _, s := range cfg.Servers {
			if s.Role == clusters.RoleLock && d.admin == "" {
				d.admin = s.Addr
			}
		}
		for _, s := range cfg.Servers {
			if s.Role == RoleBackend {
				d.admin = s.Addr
			}
		}
		return d
	}}
	if pooled {
		form.Roles = map[string]string{RoleBackend: "the PostgreSQL server behind PgBouncer, where the session kill ends a holder's sessions"}
	}
	return form
}

// Login returns the topology file's login, marked pooled behind
// PgBouncer.
func (d *externalDB) Login() clusters.Login {
	l := d.LedExternal.Login()
	l.Pooled = d.pooled
	return l
}

// KillSessions ends the sessions named name on the server (or the one
// behind the pooler).
func (d *externalDB) KillSessions(ctx context.Context, name string) ([]int64, error) {
	return d.engine.killSessions(ctx, d.admin, name)
}

// Teardown closes the session kill's connection, then the proxies and the
// storage node; the servers are left running.
func (d *externalDB) Teardown(ctx context.Context) error {
	var err error
	if c, ok := d.engine.(interface{ closeAdmin() error }); ok {
		err = c.closeAdmin()
	}
	return errors.Join(err, d.LedExternal.Teardown(ctx))
}
