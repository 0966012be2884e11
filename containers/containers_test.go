package containers

import (
	"context"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/internal/dockertest"
)

// testImage is an image of the list the tests use (the Redis one).
var testImage = MustImage("redis")

func TestImageRef(t *testing.T) {
	cases := []struct {
		prefix, own, want string
	}{
		{"", "", "lockcheck/redis:7.0"},
		{"registry.example/lc", "", "registry.example/lc/redis:7.0"},
		{"registry.example/lc", "redis:7.0", "redis:7.0"},
	}
	for _, c := range cases {
		t.Setenv(ImagePrefixEnv, c.prefix)
		t.Setenv(testImage.Env, c.own)
		if got := testImage.Ref(); got != c.want {
			t.Errorf("prefix %q, %s=%q: Ref %q, want %q", c.prefix, testImage.Env, c.own, got, c.want)
		}
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"redis-set-px-pause-20261123T161136": "redis-set-px-pause-20261123T161136",
		"zk/seq+pause 1":                     "zk-seq-pause-1",
		"..x..":                              "x",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

// engineOrSkip returns an engine that has the redis image, or skips with
// the reason.
func engineOrSkip(t *testing.T) *engine {
	t.Helper()
	dockertest.Skip(t)
	e, err := connect(context.Background())
	if err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	t.Cleanup(e.close)
	if err := e.checkImages(context.Background(), testImage.Ref()); err != nil {
		t.Skip(err)
	}
	return e
}

// TestDockerSweep creates (without starting) three containers: one of a run
// whose owner is gone, one of a run whose owner is this process, one
// without lockcheck's labels. The sweep removes only the first.
func TestDockerSweep(t *testing.T) {
	e := engineOrSkip(t)
	ctx := context.Background()
	me, err := clusters.OwnerRecord()
	if err != nil {
		t.Fatal(err)
	}
	gone := "pid=1 start=1 boot=00000000-0000-0000-0000-000000000000" // pid 1 of another boot
	if !clusters.OwnerGone(gone) || clusters.OwnerGone(me) {
		t.Fatalf("OwnerGone(%q) = %v, OwnerGone(me) = %v", gone, clusters.OwnerGone(gone), clusters.OwnerGone(me))
	}
	mk := func(lbls map[string]string) string {
		lbls["org.lockcheck.test"] = t.Name()
		c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: testImage.Ref(), Labels: lbls}, nil, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.removeContainer(context.Background(), c.ID) })
		return c.ID
	}
	stale := mk(labels("test-sweep-stale", gone))
	live := mk(labels("test-sweep-live", me))
	foreign := mk(map[string]string{})
	if _, err := e.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	left, err := e.cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", "org.lockcheck.test="+t.Name()))})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, c := range left {
		have[c.ID] = true
	}
	if have[stale] || !have[live] || !have[foreign] {
		t.Errorf("after the sweep: stale %v (want gone), live %v, foreign %v (want kept)", have[stale], have[live], have[foreign])
	}
}

// TestDockerSweepsAtOnce runs four sweeps at once over the same stale
// containers, as two lockcheck processes (or two test packages) starting
// together do: every sweep succeeds, and the containers are gone. A sweep
// that took another's removal under way for an error failed its run.
func TestDockerSweepsAtOnce(t *testing.T) {
	e := engineOrSkip(t)
	ctx := context.Background()
	gone := "pid=1 start=1 boot=00000000-0000-0000-0000-000000000000"
	for range 8 {
		c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: testImage.Ref(),
			Labels: map[string]string{LabelRun: "test-sweeps-at-once", LabelOwner: gone, "org.lockcheck.test": t.Name()}}, nil, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.removeContainer(context.Background(), c.ID) })
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			_, err := e.sweep(ctx)
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("a sweep beside others: %v", err)
		}
	}
	left, err := e.cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", "org.lockcheck.test="+t.Name()))})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("%d stale containers left after the sweeps", len(left))
	}
}
