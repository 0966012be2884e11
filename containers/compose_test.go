package containers

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/internal/dockertest"
)

// setup skips the test, saying why, unless a Docker engine answers, a
// Compose tool is installed and the images of the named services exist.
func setup(t *testing.T, ctx context.Context, services ...string) Tool {
	t.Helper()
	dockertest.Skip(t)
	if err := EngineAnswers(ctx); err != nil {
		t.Skip(err.Error())
	}
	tool, err := FindTool(ctx)
	if err != nil {
		t.Skip(err.Error())
	}
	if missing := MissingImages(ctx, services...); len(missing) > 0 {
		t.Skipf("images missing: %s (make images builds them)", strings.Join(missing, ", "))
	}
	return tool
}

// project returns a project of the repository's compose file whose name no
// other test or user has, and removes it when the test ends, checking that
// nothing of it is left.
func project(t *testing.T, tool Tool, profiles ...string) *Project {
	t.Helper()
	p := &Project{
		Tool:     tool,
		Name:     fmt.Sprintf("lockchecktest%d%d", os.Getpid(), time.Now().UnixNano()%1e9),
		File:     "../docker-compose.yml",
		Profiles: profiles,
		Timeout:  90 * time.Second,
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Down(ctx); err != nil {
			t.Errorf("down: %v", err)
		}
		if ids, err := p.Containers(ctx); err != nil || len(ids) > 0 {
			t.Errorf("after down, docker ps -a --filter label=%s=%s lists %v (err %v)", ProjectLabel, p.Name, ids, err)
		}
		out, err := exec.CommandContext(ctx, "docker", "network", "ls", "-q", "--filter", "label="+ProjectLabel+"="+p.Name).Output()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("after down, networks of %s left: %q (err %v)", p.Name, out, err)
		}
	})
	return p
}

// ask sends one line to addr and returns the reply's lines.
func ask(t *testing.T, addr, line string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\r\n", line); err != nil {
		t.Fatalf("write %s: %v", addr, err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "+") || strings.HasPrefix(sc.Text(), "-") {
			break // a one-line RESP reply
		}
	}
	return b.String()
}

// TestDockerComposeRedisAndZooKeeper brings the redis and zookeeper profiles of
// docker-compose.yml up healthy in one project, talks to a Redis node and a
// ZooKeeper server through their ports on 127.0.0.1, and takes the project
// down, leaving no container or network.
func TestDockerComposeRedisAndZooKeeper(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tool := setup(t, ctx, "redis", "zookeeper")
	p := project(t, tool, "redis", "zookeeper")
	start := time.Now()
	if err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s --profile redis --profile zookeeper up healthy in %s", strings.Join(tool.Argv, " "), time.Since(start).Round(time.Millisecond))
	states, err := p.States(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 5 {
		t.Errorf("containers: %v, want storage, redis-lock, zk1, zk2, zk3", states)
	}
	for _, tc := range []struct {
		service string
		port    int
		send    string
		want    string
	}{
		{"redis-lock", 6379, "PING", "+PONG"},
		{"storage", 6379, "PING", "+PONG"},
		{"zk1", 2181, "srvr", "Mode: "},
		{"zk3", 2181, "srvr", "Mode: "},
	} {
		addr, err := p.Port(ctx, tc.service, tc.port)
		if err != nil {
			t.Fatal(err)
		}
		if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
			t.Errorf("%s:%d published on %s, want 127.0.0.1 only", tc.service, tc.port, addr)
		}
		if got := ask(t, addr, tc.send); !strings.Contains(got, tc.want) {
			t.Errorf("%s at %s answered %q to %s, want %q", tc.service, addr, got, tc.send, tc.want)
		}
	}
}
