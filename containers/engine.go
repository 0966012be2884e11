package containers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/errdefs"

	"github.com/lockcheck/lockcheck/clusters"
)

// Labels every container and network lockcheck starts carries.
const (
	// LabelRun holds the run id (the run directory's name).
	LabelRun = "org.lockcheck.run"
	// LabelOwner holds the owning process (clusters.OwnerRecord).
	LabelOwner = "org.lockcheck.owner"
	// LabelNode holds the node name (lock0, zk1, storage).
	LabelNode = "org.lockcheck.node"
)

// ErrNoEngine is wrapped by errors about a Docker engine that does not
// answer.
var ErrNoEngine = errors.New("no Docker engine answers")

// ErrMissingImage is wrapped by errors about an image the engine does not
// have.
var ErrMissingImage = errors.New("no such image on the Docker engine")

// pingTimeout bounds the first call to the engine.
const pingTimeout = 5 * time.Second

// engine is a Docker API client for what testcontainers-go does not do:
// pause, kill, network disconnect, labelled clean-up.
type engine struct {
	cli *client.Client
}

// connect returns a client of the engine DOCKER_HOST (or the default
// socket) names, once it answers a ping; the client negotiates the API
// version down to the engine's (1.41 for Engine 20.10).
func connect(ctx context.Context) (*engine, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoEngine, err)
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		host := cli.DaemonHost()
		cli.Close()
		return nil, fmt.Errorf("%w at %s: %v", ErrNoEngine, host, err)
	}
	cli.NegotiateAPIVersion(ctx)
	// testcontainers-go would otherwise start its reaper (Ryuk), whose
	// image cannot be pulled; our labels and sweep do its job. It reads the
	// variable once, on its first use, which comes after this.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	return &engine{cli: cli}, nil
}

func (e *engine) close() { e.cli.Close() }

// checkImages returns an error naming the first image the engine lacks.
func (e *engine) checkImages(ctx context.Context, refs ...string) error {
	for _, ref := range refs {
		if _, err := e.cli.ImageInspect(ctx, ref); err != nil {
			if errdefs.IsNotFound(err) {
				return fmt.Errorf("%w: %s: build it with make images", ErrMissingImage, ref)
			}
			return fmt.Errorf("inspect image %s: %w", ref, err)
		}
	}
	return nil
}

// labels returns the labels of a resource of run runID.
func labels(runID, owner string) map[string]string {
	return map[string]string{LabelRun: runID, LabelOwner: owner}
}

// sweep removes the containers and networks of earlier runs whose owner
// process is gone (a run killed with SIGKILL cannot remove its own) and
// returns their names. Anything without lockcheck's labels, or whose owner
// still runs, is left alone.
func (e *engine) sweep(ctx context.Context) ([]string, error) {
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabelRun), filters.Arg("label", LabelOwner))})
	if err != nil {
		return nil, fmt.Errorf("list lockcheck containers: %w", err)
	}
	var removed []string
	var errs []error
	for _, c := range cs {
		if !clusters.OwnerGone(c.Labels[LabelOwner]) {
			continue
		}
		if err := e.removeContainer(ctx, c.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, strings.TrimPrefix(firstName(c.Names), "/"))
	}
	ns, err := e.cli.NetworkList(ctx, network.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", LabelRun), filters.Arg("label", LabelOwner))})
	if err != nil {
		return removed, errors.Join(append(errs, fmt.Errorf("list lockcheck networks: %w", err))...)
	}
	for _, n := range ns {
		if !clusters.OwnerGone(n.Labels[LabelOwner]) {
			continue
		}
		if err := e.cli.NetworkRemove(ctx, n.ID); err != nil {
			// Gone, or still in use by a container another sweep is
			// removing: left to that sweep, or to the next.
			if !errdefs.IsNotFound(err) && !errdefs.IsConflict(err) {
				errs = append(errs, fmt.Errorf("remove stale network %s: %w", n.Name, err))
			}
			continue
		}
		removed = append(removed, n.Name)
	}
	return removed, errors.Join(errs...)
}

func firstName(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// removeContainer removes a container, running or paused, with its
// anonymous volumes. A container already gone, or whose removal another
// client has under way (two lockcheck processes sweeping the same
// leftovers at once), is no error.
func (e *engine) removeContainer(ctx context.Context, id string) error {
	err := e.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !errdefs.IsNotFound(err) && !removalUnderWay(err) {
		return fmt.Errorf("remove container %.12s: %w", id, err)
	}
	return nil
}

// removalUnderWay reports whether err is the engine's answer to a forced
// removal of a container that another request is removing already.
func removalUnderWay(err error) bool {
	return errdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress")
}

// removeRun removes every container and network labelled with runID and
// owned by this process: what a run started, including a container whose
// creation an interrupt cut short.
func (e *engine) removeRun(ctx context.Context, runID, owner string) error {
	args := filters.NewArgs(filters.Arg("label", LabelRun+"="+runID), filters.Arg("label", LabelOwner+"="+owner))
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: args})
	if err != nil {
		return fmt.Errorf("list containers of run %s: %w", runID, err)
	}
	var errs []error
	for _, c := range cs {
		errs = append(errs, e.removeContainer(ctx, c.ID))
	}
	ns, err := e.cli.NetworkList(ctx, network.ListOptions{Filters: args})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list networks of run %s: %w", runID, err))...)
	}
	for _, n := range ns {
		if err := e.cli.NetworkRemove(ctx, n.ID); err != nil && !errdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Owned returns the names of the lockcheck containers this process started
// that are still there (after a run's teardown: none).
func Owned(ctx context.Context) ([]string, error) {
	e, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer e.close()
	me, err := clusters.OwnerRecord()
	if err != nil {
		return nil, err
	}
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabelRun), filters.Arg("label", LabelOwner+"="+me))})
	if err != nil {
		return nil, fmt.Errorf("list lockcheck containers: %w", err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, strings.TrimPrefix(firstName(c.Names), "/"))
	}
	return names, nil
}
