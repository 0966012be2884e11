package matrix

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// CellLabel is the label on every cell container, with the matrix's
// process id as its value: a leftover from a killed matrix can be found
// (docker ps -a --filter label=org.lockcheck.cell) and removed by it.
const CellLabel = "org.lockcheck.cell"

// DefaultCellImage is the image a cell runs in unless told otherwise
// (scripts/images.sh build check).
const DefaultCellImage = "lockcheck/check:dev"

// Docker runs each cell in a container of Image (the check binary and the
// servers of its lock design) on one of Hosts, instead of as a subprocess:
// job slot i uses Hosts[i mod len(Hosts)], so --jobs 4 over two hosts runs
// two cells on each. The cell's run directory is written inside the
// container under /store and copied out with docker cp, so a host need not
// share a filesystem with the matrix.
type Docker struct {
	// Hosts are DOCKER_HOST values (unix:///var/run/docker.sock,
	// ssh://user@host, tcp://host:2376); "" is the docker CLI's default.
	Hosts []string
	// Image is the cell image; DefaultCellImage when empty.
	Image string
}

// ParseDockerHosts splits a comma-separated --docker-host list; a blank
// entry is an error.
func ParseDockerHosts(s string) ([]string, error) {
	var hosts []string
	for _, h := range strings.Split(s, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, fmt.Errorf("docker hosts %q: an empty entry", s)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// cellContainer is one cell's container on one host.
type cellContainer struct {
	host, name string
}

func (c cellContainer) docker(ctx context.Context, args ...string) *exec.Cmd {
	if c.host != "" {
		args = append([]string{"-H", c.host}, args...)
	}
	return exec.CommandContext(ctx, "docker", args...)
}

// start creates the container of run n of a cell and returns the command
// that runs it attached (its exit code is the run's) and the cell's
// container, which finish copies out and removes.
func (d *Docker) start(ctx context.Context, slot, n int, args []string) (*exec.Cmd, cellContainer, error) {
	c := cellContainer{name: fmt.Sprintf("lockcheck-cell-%d-%d", os.Getpid(), n+1)}
	if len(d.Hosts) > 0 {
		c.host = d.Hosts[slot%len(d.Hosts)]
	}
	image := d.Image
	if image == "" {
		image = DefaultCellImage
	}
	create := append([]string{"create", "--init", "--name", c.name, "--label", fmt.Sprintf("%s=%d", CellLabel, os.Getpid()), image}, args...)
	if out, err := c.docker(ctx, create...).CombinedOutput(); err != nil {
		return nil, c, fmt.Errorf("docker %s create: %w: %s", c.hostName(), err, strings.TrimSpace(string(out)))
	}
	cmd := c.docker(ctx, "start", "--attach", c.name)
	// Interrupt as Ctrl-C would: the attached client passes SIGINT on to
	// the container, where check stops its servers and checks its history.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	return cmd, c, nil
}

// finish copies the container's /store into store and removes the
// container, whatever happened to the run.
func (d *Docker) finish(c cellContainer, store string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := c.docker(ctx, "cp", c.name+":/store/.", store).CombinedOutput()
	if err != nil {
		err = fmt.Errorf("docker %s cp: %w: %s", c.hostName(), err, strings.TrimSpace(string(out)))
	}
	if out, rmErr := c.docker(ctx, "rm", "-f", "-v", c.name).CombinedOutput(); rmErr != nil && err == nil {
		err = fmt.Errorf("docker %s rm: %w: %s", c.hostName(), rmErr, strings.TrimSpace(string(out)))
	}
	return err
}

func (c cellContainer) hostName() string {
	if c.host == "" {
		return "(default host)"
	}
	return c.host
}
