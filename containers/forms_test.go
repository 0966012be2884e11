package containers_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/containers"

	// The services and their container forms.
	_ "github.com/lockcheck/lockcheck/services"
)

// TestLookNoEngine checks the no-engine path: one line, wrapping
// containers.ErrNoEngine, without waiting long.
func TestLookNoEngine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	err := containers.Look(context.Background(), formOf(t, "redis"))
	if !errors.Is(err, containers.ErrNoEngine) {
		t.Fatalf("Look = %v, want ErrNoEngine", err)
	}
	if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "/nonexistent/docker.sock") {
		t.Errorf("want one line naming the host: %q", err)
	}
}

// formOf returns the container form of service, failing tb when it has
// none.
func formOf(tb testing.TB, service string) clusters.ContainerForm {
	tb.Helper()
	s, err := clusters.FindService(service)
	if err != nil {
		tb.Fatal(err)
	}
	if s.Container == nil {
		tb.Fatalf("service %s has no container form", service)
	}
	return *s.Container
}

// TestContainerForms checks which services this package gives a container
// form, and that each form's images are in the image list.
func TestContainerForms(t *testing.T) {
	want := map[string]bool{"redis": true, "zookeeper": true}
	for _, s := range clusters.Services() {
		if (s.Container != nil) != want[s.Name] {
			t.Errorf("service %s: container form %v, want %v", s.Name, s.Container != nil, want[s.Name])
		}
		if s.Container == nil {
			continue
		}
		for _, short := range s.Container.Images {
			if _, ok := containers.ImageOf(short); !ok {
				t.Errorf("service %s runs image %q, which images.txt does not list", s.Name, short)
			}
		}
	}
}
