package topofile

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

// TestLoadGolden reads a whole topology file: servers in order, the
// file's commands under a server's own, the login's variables.
func TestLoadGolden(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "pgbouncer.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Service != "pgbouncer-transaction" || f.LockServers() != 1 || !reflect.DeepEqual(f.Roles(), []string{"backend"}) {
		t.Fatalf("service %q, %d lock servers, roles %v", f.Service, f.LockServers(), f.Roles())
	}
	if d, err := f.Timeout(); err != nil || d != 20*time.Second {
		t.Fatalf("timeout %v, %v", d, err)
	}
	if f.Login == nil || f.Login.UserEnv != "APP_DB_USER" || f.Login.PasswordEnv != "APP_DB_PASSWORD" || f.Login.DatabaseEnv != "" {
		t.Fatalf("login %+v", f.Login)
	}
	got := f.ExternalServers()
	want := []clusters.ExternalServer{
		{Name: "bouncer", Role: clusters.RoleLock, Addr: "127.0.0.1:6432", Commands: clusters.Commands{
			"kill": "docker kill {name}", "start": "docker start {name}", "stop": "docker pause {name}", "continue": "docker unpause {name}"}},
		{Name: "db", Role: "backend", Addr: "127.0.0.1:5432", Commands: clusters.Commands{
			"stop": "docker pause {name}", "continue": "docker unpause {name}"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("servers\n%+v\nwant\n%+v", got, want)
	}
}

// TestParseOverride: a server's own command replaces the file's.
func TestParseOverride(t *testing.T) {
	f, err := Parse([]byte("servers:\n- {name: a, addr: '127.0.0.1:1', commands: {kill: own}}\ncommands: {kill: shared}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.ExternalServers()[0].Commands["kill"]; got != "own" {
		t.Fatalf("kill = %q, want the server's own", got)
	}
	if d, err := f.Timeout(); err != nil || d != 0 {
		t.Fatalf("no timeout given: %v, %v; want 0 (the default)", d, err)
	}
}

// TestParseMistakes: each mistake is refused with a line naming it.
func TestParseMistakes(t *testing.T) {
	for _, tt := range []struct{ name, file, want string }{
		{"empty", "", "no servers"},
		{"unknown field", "servers: [{name: a, addr: '127.0.0.1:1'}]\nmaster: x\n", `unknown field "master"`},
		{"no name", "servers: [{addr: '127.0.0.1:1'}]\n", "servers[0]: no name"},
		{"bad name", "servers: [{name: 'a b', addr: '127.0.0.1:1'}]\n", `name "a b"`},
		{"twice", "servers: [{name: a, addr: '127.0.0.1:1'}, {name: a, addr: '127.0.0.1:2'}]\n", "server a: named twice"},
		{"no addr", "servers: [{name: a}]\n", "server a: addr: missing"},
		{"no port", "servers: [{name: a, addr: localhost}]\n", "want HOST:PORT"},
		{"no host", "servers: [{name: a, addr: ':80'}]\n", "no host"},
		{"bad port", "servers: [{name: a, addr: 'h:99999'}]\n", "want 1 to 65535"},
		{"bad announce", "servers: [{name: a, addr: 'h:1', announce: x}]\n", "server a: announce"},
		{"unknown word", "servers: [{name: a, addr: 'h:1'}]\ncommands: {crash: x}\n", `unknown command "crash"`},
		{"server word", "servers: [{name: a, addr: 'h:1', commands: {freeze: x}}]\n", `server a: commands: unknown command "freeze"`},
		{"placeholder", "servers: [{name: a, addr: 'h:1'}]\ncommands: {kill: 'docker kill {id}'}\n", "unknown placeholder {id}"},
		{"empty line", "servers: [{name: a, addr: 'h:1'}]\ncommands: {kill: ' '}\n", "kill: empty command"},
		{"timeout", "servers: [{name: a, addr: 'h:1'}]\ncommand_timeout: soon\n", `command_timeout "soon"`},
		{"negative timeout", "servers: [{name: a, addr: 'h:1'}]\ncommand_timeout: -1s\n", "want a positive duration"},
		{"no lock", "servers: [{name: a, addr: 'h:1', role: sentinel}]\n", "no lock server"},
		{"not yaml", "servers: [\n", "yaml"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestLoadErrors: a missing file, or one too big, is refused naming it.
func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none.yml")); err == nil || !strings.Contains(err.Error(), "none.yml") {
		t.Errorf("missing file: err = %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.yml")
	if err := os.WriteFile(big, make([]byte, maxFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "more than a topology file holds") {
		t.Errorf("big file: err = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(bad, []byte("servers: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "bad.yml: no servers") {
		t.Errorf("bad file: err = %v", err)
	}
}

// FuzzParse: any input is parsed or refused, never a panic, and what is
// accepted has at least one lock server, each with a good address.
func FuzzParse(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "pgbouncer.yml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("servers: [{name: a, addr: '127.0.0.1:1'}]\n"))
	f.Add([]byte(`{"servers":[{"name":"a","addr":"[::1]:5","commands":{"kill":"x {port}"}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			return
		}
		if file.LockServers() < 1 {
			t.Fatalf("accepted a file with no lock server: %q", b)
		}
		for _, s := range file.ExternalServers() {
			if checkAddr(s.Addr) != nil || s.Name == "" {
				t.Fatalf("accepted server %+v", s)
			}
		}
	})
}
