package topofile

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/lockcheck/lockcheck/clusters"
)

// File is a topology file as written.
type File struct {
	// Service names the lock service the servers run ("postgres"); ""
	// means the design's own.
	Service string `json:"service,omitempty"`
	// Servers are the servers, lock servers first or not: order is kept.
	Servers []Server `json:"servers"`
	// Commands are the control commands every server gets, by word
	// (clusters.ControlWords); a server's own override them.
	Commands map[string]string `json:"commands,omitempty"`
	// CommandTimeout bounds each control command ("30s" by default).
	CommandTimeout string `json:"command_timeout,omitempty"`
	// Login names the environment variables a database login comes from;
	// the values are read when the run starts and never stored.
	Login *Login `json:"login,omitempty"`
	// MasterName is the name the failover managers know the master by
	// (a Sentinel's master name).
	MasterName string `json:"master_name,omitempty"`
}

// Server is one server of a topology file.
type Server struct {
	Name     string            `json:"name"`
	Role     string            `json:"role,omitempty"`
	Addr     string            `json:"addr"`
	Announce string            `json:"announce,omitempty"`
	Commands map[string]string `json:"commands,omitempty"`
}

// Login names the environment variables of a database login; an empty
// field takes the service's default variable.
type Login struct {
	UserEnv     string `json:"user_env,omitempty"`
	PasswordEnv string `json:"password_env,omitempty"`
	DatabaseEnv string `json:"database_env,omitempty"`
}

// maxFile bounds a topology file's size.
const maxFile = 1 << 20

// Load reads and parses the topology file at path.
func Load(path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("topology file: %w", err)
	}
	if st.Size() > maxFile {
		return nil, fmt.Errorf("topology file %s: %d bytes, more than a topology file holds (%d at most)", path, st.Size(), maxFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("topology file: %w", err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("topology file %s: %w", path, err)
	}
	return f, nil
}

// Parse parses a topology file (YAML or JSON) and checks it: an unknown
// field, a server with no name or a name given twice, an address that is
// not host:port, an unknown control word or placeholder, a bad timeout.
// The error names the first mistake.
func Parse(b []byte) (*File, error) {
	var f File
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// check returns the first mistake in f.
func (f *File) check() error {
	if len(f.Servers) == 0 {
		return errors.New("no servers: list them under servers: (name, addr, and role for a server that grants no lock)")
	}
	if err := checkCommands("commands", f.Commands); err != nil {
		return err
	}
	if _, err := f.Timeout(); err != nil {
		return err
	}
	seen := map[string]bool{}
	locks := 0
	for i, s := range f.Servers {
		where := "servers[" + strconv.Itoa(i) + "]"
		if s.Name == "" {
			return fmt.Errorf("%s: no name", where)
		}
		if strings.ContainsAny(s.Name, " \t\n{}/") {
			return fmt.Errorf("%s: name %q: want letters, digits, '-', '_' or '.'", where, s.Name)
		}
		where = "server " + s.Name
		if seen[s.Name] {
			return fmt.Errorf("%s: named twice", where)
		}
		seen[s.Name] = true
		if err := checkAddr(s.Addr); err != nil {
			return fmt.Errorf("%s: addr: %w", where, err)
		}
		if s.Announce != "" {
			if err := checkAddr(s.Announce); err != nil {
				return fmt.Errorf("%s: announce: %w", where, err)
			}
		}
		if err := checkCommands(where+": commands", s.Commands); err != nil {
			return err
		}
		if s.Role == "" || s.Role == clusters.RoleLock {
			locks++
		}
	}
	if locks == 0 {
		return errors.New("no lock server: give at least one server role lock (the default)")
	}
	return nil
}

// checkAddr returns an error when a is not host:port with a port number.
func checkAddr(a string) error {
	if a == "" {
		return errors.New("missing (want HOST:PORT)")
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("%q: want HOST:PORT", a)
	}
	if host == "" {
		return fmt.Errorf("%q: no host", a)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q: want 1 to 65535", a, port)
	}
	return nil
}

// checkCommands returns an error naming an unknown control word or a bad
// line.
func checkCommands(where string, cmds map[string]string) error {
	words := make([]string, 0, len(cmds))
	for w := range cmds {
		words = append(words, w)
	}
	sort.Strings(words)
	for _, w := range words {
		known := false
		for _, k := range clusters.ControlWords {
			known = known || w == k
		}
		if !known {
			return fmt.Errorf("%s: unknown command %q (known: %s)", where, w, strings.Join(clusters.ControlWords, ", "))
		}
		if err := clusters.CheckCommandLine(cmds[w]); err != nil {
			return fmt.Errorf("%s: %s: %w", where, w, err)
		}
	}
	return nil
}

// Timeout returns the command timeout, 0 for the default.
func (f *File) Timeout() (time.Duration, error) {
	if f.CommandTimeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(f.CommandTimeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("command_timeout %q: want a positive duration such as 30s", f.CommandTimeout)
	}
	return d, nil
}

// ExternalServers returns the file's servers as an external topology takes them,
// each with the file's commands under its own.
func (f *File) ExternalServers() []clusters.ExternalServer {
	out := make([]clusters.ExternalServer, len(f.Servers))
	for i, s := range f.Servers {
		cmds := clusters.Commands{}
		for w, l := range f.Commands {
			cmds[w] = l
		}
		for w, l := range s.Commands {
			cmds[w] = l
		}
		role := s.Role
		if role == "" {
			role = clusters.RoleLock
		}
		out[i] = clusters.ExternalServer{Name: s.Name, Role: role, Addr: s.Addr, Announce: s.Announce, Commands: cmds}
	}
	return out
}

// Roles returns the roles the file names other than lock, sorted.
func (f *File) Roles() []string {
	var out []string
	for _, s := range f.Servers {
		if s.Role != "" && s.Role != clusters.RoleLock && !slices.Contains(out, s.Role) {
			out = append(out, s.Role)
		}
	}
	sort.Strings(out)
	return out
}

// LockServers returns the number of lock servers.
func (f *File) LockServers() int {
	n := 0
	for _, s := range f.Servers {
		if s.Role == "" || s.Role == clusters.RoleLock {
			n++
		}
	}
	return n
}
