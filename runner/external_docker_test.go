package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/containers"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/dockertest"
)

// composeSentinel brings up docker-compose.yml's sentinel profile (a
// master, two replicas, three Sentinels monitoring lockmaster) as a
// project of its own, as a user runs their stack, and takes it down when
// the test ends. It returns the project and a topology file naming its
// containers by their addresses on the project's network, the Sentinels'
// names for them as announce, and docker commands to kill, start, pause
// and unpause them.
func composeSentinel(t *testing.T, ctx context.Context) (*containers.Project, string) {
	t.Helper()
	dockertest.Skip(t)
	if err := containers.EngineAnswers(ctx); err != nil {
		t.Skip(err.Error())
	}
	tool, err := containers.FindTool(ctx)
	if err != nil {
		t.Skip(err.Error())
	}
	if missing := containers.MissingImages(ctx, "redis"); len(missing) > 0 {
		t.Skipf("images missing: %s (make images builds them)", strings.Join(missing, ", "))
	}
	p := &containers.Project{Tool: tool, Name: fmt.Sprintf("lockcheckext%d%d", os.Getpid(), time.Now().UnixNano()%1e9),
		File: "../docker-compose.yml", Profiles: []string{"sentinel"}, Timeout: 2 * time.Minute}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Down(ctx); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	if err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	ids, err := p.Containers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "docker", append([]string{"inspect", "--format",
		`{{index .Config.Labels "com.docker.compose.service"}} {{.Name}} {{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}`}, ids...)...).Output()
	if err != nil {
		t.Fatalf("docker inspect: %v", err)
	}
	var servers []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] == "storage" {
			continue
		}
		service, name, ip := f[0], strings.TrimPrefix(f[1], "/"), f[2]
		port, role := "6379", "lock"
		if strings.HasPrefix(service, "sentinel") {
			port, role = "26379", "sentinel"
		}
		servers = append(servers, fmt.Sprintf("  - {name: %s, role: %s, addr: '%s:%s', announce: '%s:%s'}", name, role, ip, port, service, port))
	}
	sort.Strings(servers)
	if len(servers) != 6 {
		t.Fatalf("the sentinel profile's servers: %q", servers)
	}
	return p, writeTopology(t, "master_name: lockmaster\nservers:\n"+strings.Join(servers, "\n")+"\n"+
		"commands: {kill: 'docker kill {name}', start: 'docker start {name}', stop: 'docker pause {name}', continue: 'docker unpause {name}'}\n")
}

// TestRunExternalSentinelDocker runs the redis-sentinel design against a
// Compose stack of Redis with Sentinel, as a user points lockcheck at
// theirs: a pause of the holder past its lease is invalid; a kill of the
// master through `docker kill` makes the Sentinels promote a replica (the
// catalog's D: either verdict, never an error), and the history records
// each docker command with its exit status; every container of the stack
// runs again at the end.
func TestRunExternalSentinelDocker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	p, topo := composeSentinel(t, ctx)

	test := quick(t, "redis-sentinel", "pause", false)
	test.Cluster, test.Topology = ClusterExternal, topo
	test.Lease, test.NemesisDuration = time.Second, 3*time.Second
	test.Time, test.Until = patient, untilAnomaly(checker.NewOverlap(checker.Options{}), "double-holder")
	out, err := Run(ctx, test, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Valid != checker.Invalid {
		t.Fatalf("pause: verdict %v with anomalies %v, want invalid", out.Result.Valid, kinds(out.Result, false))
	}

	// The master stays down 20 s: the Sentinels see it down after 1 s, and
	// when an election splits they try again only after twice the
	// failover-timeout (6 s). A 6 s kill let the master come back, empty,
	// before the second try, and a 12 s one before the third, on a CI
	// machine busy with the fuzz targets and the image builds: no
	// failover happened (CI, 2026-11-30, twice).
	test = quick(t, "redis-sentinel", "kill@grant:20s", false)
	test.Cluster, test.Topology = ClusterExternal, topo
	test.Lease, test.Time, test.OpTimeout = time.Second, 30*time.Second, 2*time.Second
	out, err = Run(ctx, test, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.ReadFile(filepath.Join(out.Dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, op := range h {
		for _, c := range op.Value.Ext().Commands {
			if c.Exit != 0 {
				t.Errorf("%s: %+v", op, c)
			}
			ran = append(ran, c.Word+": "+c.Line)
		}
	}
	if len(ran) != 2 || !strings.HasPrefix(ran[0], "kill: docker kill ") || !strings.HasPrefix(ran[1], "start: docker start ") {
		t.Fatalf("commands recorded: %q, want the master's docker kill, then its docker start", ran)
	}
	t.Logf("kill of the master: %v (%v)", out.Result.Valid, kinds(out.Result, false))
	// The Sentinels promoted a replica: the master they name is no longer
	// the compose file's redis-master.
	id, err := exec.CommandContext(ctx, "docker", "ps", "-q", "--filter", "label="+containers.ProjectLabel+"="+p.Name,
		"--filter", "label=com.docker.compose.service=sentinel1").Output()
	if err != nil || len(strings.Fields(string(id))) != 1 {
		t.Fatalf("find sentinel1: %q, %v", id, err)
	}
	// The Sentinels promoted a replica: their configuration epoch, which
	// each failover raises, is above zero (who is master now is theirs to
	// say: a later failover may name the old master again, resynced).
	reply, err := exec.CommandContext(ctx, "docker", "exec", strings.TrimSpace(string(id)), "redis-cli", "-p", "26379",
		"sentinel", "master", "lockmaster").CombinedOutput()
	if epoch := fieldAfter(string(reply), "config-epoch"); err != nil || epoch == "" || epoch == "0" {
		t.Errorf("after the master's kill the Sentinels' config-epoch is %q (%v), want a failover's: %s", epoch, err, reply)
	}
	// The killed master was started again by the docker start command:
	// every container of the stack is healthy again within a minute.
	if err := p.Wait(ctx, time.Minute); err != nil {
		t.Errorf("after the runs: %v; the stack is the user's and must be left running", err)
	}
}

// fieldAfter returns the line after the line name in redis-cli's answer
// of field and value lines ("" when name is not there).
func fieldAfter(reply, name string) string {
	lines := strings.Split(strings.TrimSpace(reply), "\n")
	for i := 0; i+1 < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == name {
			return strings.TrimSpace(lines[i+1])
		}
	}
	return ""
}
