package containers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// ErrNoCompose means neither `docker compose` nor `docker-compose` is
// installed.
var ErrNoCompose = errors.New("neither docker compose (v2) nor docker-compose (v1) is installed")

// ProjectLabel is the label Compose puts on every container, network and
// volume of a project.
const ProjectLabel = "com.docker.compose.project"

// EngineAnswers returns nil when a Docker engine answers, else an error wrapping
// ErrNoEngine with the CLI's own words.
func EngineAnswers(ctx context.Context) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("%w: docker CLI not in PATH", ErrNoEngine)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: docker version: %s", ErrNoEngine, composeFirstLine(out, err))
	}
	return nil
}

// Tool is the Compose command line found on this machine.
type Tool struct {
	// Argv is the command: ["docker", "compose"] or ["docker-compose"].
	Argv []string
	// Wait says the tool has `up --wait` (Compose v2).
	Wait bool
}

// FindTool prefers Compose v2 (`docker compose`) and falls back to v1
// (`docker-compose`, 1.28 or later for profiles).
func FindTool(ctx context.Context) (Tool, error) {
	if exec.CommandContext(ctx, "docker", "compose", "version").Run() == nil {
		return Tool{Argv: []string{"docker", "compose"}, Wait: true}, nil
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return Tool{Argv: []string{"docker-compose"}}, nil
	}
	return Tool{}, ErrNoCompose
}

// Project is one Compose project of a compose file: its own containers,
// network and volumes, named Name, running the services of Profiles.
type Project struct {
	Tool     Tool
	Name     string
	File     string
	Profiles []string
	// Env is added to the environment of every compose command
	// (LOCKCHECK_*_PORT, ...); the LOCKCHECK_*_IMAGE variables are set from
	// Images unless Env sets them.
	Env []string
	// Timeout bounds Up's wait for healthy containers (2 min by default).
	Timeout time.Duration
}

func (p *Project) cmd(ctx context.Context, args ...string) *exec.Cmd {
	argv := append([]string{}, p.Tool.Argv[1:]...)
	argv = append(argv, "-p", p.Name, "-f", p.File)
	for _, prof := range p.Profiles {
		argv = append(argv, "--profile", prof)
	}
	c := exec.CommandContext(ctx, p.Tool.Argv[0], append(argv, args...)...)
	env := os.Environ()
	for _, im := range Images() {
		env = append(env, im.Env+"="+im.Ref())
	}
	c.Env = append(env, p.Env...)
	return c
}

func (p *Project) run(ctx context.Context, args ...string) error {
	out, err := p.cmd(ctx, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", strings.Join(p.Tool.Argv, " "), strings.Join(args, " "), err, composeTail(out, 2000))
	}
	return nil
}

// Up starts the project's services and returns once every container is
// healthy (or running, when it has no healthcheck). On error the project is
// left as it is: call Down.
func (p *Project) Up(ctx context.Context) error {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	if p.Tool.Wait {
		return p.run(ctx, "up", "-d", "--wait", "--wait-timeout", fmt.Sprint(int(timeout.Seconds())))
	}
	if err := p.run(ctx, "up", "-d"); err != nil {
		return err
	}
	return p.Wait(ctx, timeout)
}

// Wait polls the project's containers until all of them are healthy,
// failing early when one exits or turns unhealthy.
func (p *Project) Wait(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		states, err := p.States(ctx)
		if err != nil {
			return err
		}
		var waiting []string
		for _, name := range composeSortedKeys(states) {
			switch st := states[name]; st {
			case "healthy", "running":
			case "exited", "dead", "unhealthy":
				return fmt.Errorf("compose project %s: %s is %s: %s", p.Name, name, st, p.logs(ctx, name))
			default:
				waiting = append(waiting, name+" "+st)
			}
		}
		if len(states) > 0 && len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compose project %s not healthy within %s: waiting for %s", p.Name, timeout, strings.Join(waiting, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// States returns each container of the project by name with its health
// ("starting", "healthy", "unhealthy") or, without a healthcheck, its state
// ("running", "exited", ...).
func (p *Project) States(ctx context.Context) (map[string]string, error) {
	ids, err := p.Containers(ctx)
	if err != nil || len(ids) == 0 {
		return map[string]string{}, err
	}
	out, err := exec.CommandContext(ctx, "docker", append([]string{"inspect", "--format",
		"{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}"}, ids...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("docker inspect project %s: %w", p.Name, err)
	}
	states := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		st := f[1]
		if st == "running" && len(f) > 2 {
			st = f[2]
		}
		states[strings.TrimPrefix(f[0], "/")] = st
	}
	return states, nil
}

// Containers returns the ids of every container (running or not) labelled
// with the project's name.
func (p *Project) Containers(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, "docker", "ps", "-a", "-q", "--filter", "label="+ProjectLabel+"="+p.Name).Output()
	if err != nil {
		return nil, fmt.Errorf("docker ps project %s: %w", p.Name, err)
	}
	return strings.Fields(string(out)), nil
}

// Port returns the 127.0.0.1 address a service's container port is
// published on.
func (p *Project) Port(ctx context.Context, service string, port int) (string, error) {
	out, err := p.cmd(ctx, "port", service, fmt.Sprint(port)).Output()
	if err != nil {
		return "", fmt.Errorf("compose port %s %d: %w", service, port, err)
	}
	addr := strings.TrimSpace(string(out))
	if addr == "" || strings.HasSuffix(addr, ":0") {
		return "", fmt.Errorf("compose port %s %d: not published", service, port)
	}
	return addr, nil
}

// Down removes the project's containers, network and volumes. It is safe
// to call on a project that is not up.
func (p *Project) Down(ctx context.Context) error {
	return p.run(ctx, "down", "-v", "--remove-orphans", "-t", "2")
}

func (p *Project) logs(ctx context.Context, container string) string {
	out, _ := exec.CommandContext(ctx, "docker", "logs", "--tail", "20", container).CombinedOutput()
	return composeTail(out, 1500)
}

func composeSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func composeTail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func composeFirstLine(out []byte, err error) string {
	s := strings.TrimSpace(string(out))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return err.Error()
	}
	return s
}

// MissingImages returns those of the named services whose image the engine
// does not have.
func MissingImages(ctx context.Context, names ...string) []string {
	var missing []string
	for _, n := range names {
		im, ok := ImageOf(n)
		img := im.Ref()
		if !ok {
			img = n
		}
		if !ok || exec.CommandContext(ctx, "docker", "image", "inspect", img).Run() != nil {
			missing = append(missing, img)
		}
	}
	return missing
}
