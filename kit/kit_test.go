package kit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockcheck/lockcheck/conformance"
	"github.com/lockcheck/lockcheck/internal/servicetest"
	"github.com/lockcheck/lockcheck/kit"
	"github.com/lockcheck/lockcheck/workloads"
)

// TestMain lets the test binary serve as a kit worker whose resource
// keeps no fencing (LOCKCHECK_KIT_WORKER=unfenced).
func TestMain(m *testing.M) {
	if os.Getenv("LOCKCHECK_KIT_WORKER") == "unfenced" {
		kit.SetUnfenced(true)
		kit.Main(func(ctx context.Context, cfg kit.Config) (kit.Lock, error) {
			return &setNX{c: redis.NewClient(&redis.Options{Addr: cfg.LockAddrs[0]}), cfg: cfg}, nil
		})
	}
	os.Exit(m.Run())
}

// setNX is the smallest Redis lock with a token: SET NX PX, INCR.
type setNX struct {
	c   *redis.Client
	cfg kit.Config
	n   int
}

func (l *setNX) Acquire(ctx context.Context, key string) (kit.Grant, error) {
	l.n++
	owner := fmt.Sprintf("p%d-%d", l.cfg.Process, l.n)
	for {
		ok, err := l.c.SetNX(ctx, key, owner, l.cfg.Lease()).Result()
		if err != nil {
			return kit.Grant{}, err
		}
		if ok {
			t, err := l.c.Incr(ctx, key+":token").Result()
			return kit.Grant{Owner: owner, Token: t}, err
		}
		select {
		case <-ctx.Done():
			return kit.Grant{}, kit.ErrNotAcquired
		case <-time.After(l.cfg.Retry()):
		}
	}
}

func (l *setNX) Release(ctx context.Context, key string, g kit.Grant) (bool, error) {
	v, err := l.c.Get(ctx, key).Result()
	if err == redis.Nil {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if v != g.Owner {
		return false, nil
	}
	return true, l.c.Del(ctx, key).Err()
}

// TestKitExamplesConform builds each Go kit example as its users would
// (go build) and checks it with check conformance's rules on the design
// it implements: every rule kept, the fenced resource's among them.
func TestKitExamplesConform(t *testing.T) {
	for _, tt := range []struct{ dir, lock string }{
		{"redis", "redis-set-px"},
		{"postgres", "pg-advisory"},
		{"etcd", "etcd-mutex"},
		{"nats", "nats-kv"},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			t.Parallel()
			servicetest.Need(t, tt.lock)
			bin := filepath.Join(t.TempDir(), tt.dir+"-worker")
			out, err := exec.Command("go", "build", "-o", bin, "./examples/"+tt.dir).CombinedOutput()
			if err != nil {
				t.Fatalf("go build ./examples/%s: %v\n%s", tt.dir, err, out)
			}
			conforms(t, []string{bin}, tt.lock, false)
		})
	}
}

// TestUnfencedKitWorker: a kit worker whose resource lets a stale token
// write fails conformance, naming the fenced resource's rule and nothing
// else.
func TestUnfencedKitWorker(t *testing.T) {
	t.Parallel()
	unfencedFails(t, []string{os.Args[0]}, []string{"LOCKCHECK_KIT_WORKER=unfenced"})
}

// TestPythonKitExamplesConform checks each Python kit example with Debian's
// python3 (where the client libraries come from) against the design it
// implements.
func TestPythonKitExamplesConform(t *testing.T) {
	for _, tt := range []struct {
		file, module, lock string
		zk                 bool
	}{
		{"redis_worker.py", "redis", "redis-set-px", false},
		{"postgres_worker.py", "psycopg2", "pg-advisory", false},
		{"kazoo_worker.py", "kazoo", "zk-sequential", true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			needPython(t, tt.module)
			conforms(t, []string{"/usr/bin/python3", filepath.Join("python", "examples", tt.file)}, tt.lock, tt.zk)
		})
	}
}

// TestUnfencedPythonKitWorker: the Python kit with its fencing check
// removed fails conformance on the fenced resource's rule alone.
func TestUnfencedPythonKitWorker(t *testing.T) {
	t.Parallel()
	servicetest.Need(t, "redis-set-px")
	script := filepath.Join(t.TempDir(), "unfenced.py")
	ex, _ := filepath.Abs(filepath.Join("python", "examples", "redis_worker.py"))
	kitDir, _ := filepath.Abs("python")
	src := "import sys, runpy\nsys.path.insert(0, " + fmt.Sprintf("%q", kitDir) + ")\nimport lockcheck_kit\nlockcheck_kit.UNFENCED = True\n" +
		"runpy.run_path(" + fmt.Sprintf("%q", ex) + ", run_name='__main__')\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	needPython(t, "redis")
	unfencedFails(t, []string{"/usr/bin/python3", script}, nil)
}

// needPython skips the test when Debian's python3 lacks module.
func needPython(t *testing.T, module string) {
	t.Helper()
	if out, err := exec.Command("/usr/bin/python3", "-c", "import "+module).CombinedOutput(); err != nil {
		t.Skipf("Debian's python3 has no %s (scripts/deps.sh python installs it): %s", module, out)
	}
}

// javaClassPath is the class path of the Java kit's examples' libraries,
// Debian's jars.
const javaClassPath = "/usr/share/java/curator-recipes.jar:/usr/share/java/slf4j-simple.jar:/usr/share/java/postgresql.jar"

// compileJava compiles the Java kit and its examples (and extra sources)
// into a temporary directory and returns it; it skips without javac or a
// library jar.
func compileJava(t *testing.T, extra ...string) string {
	t.Helper()
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("no javac (scripts/deps.sh curator installs it)")
	}
	for _, jar := range strings.Split(javaClassPath, ":") {
		if _, err := os.Stat(jar); err != nil {
			t.Skipf("%s is not installed (scripts/deps.sh curator)", jar)
		}
	}
	out := t.TempDir()
	srcs, _ := filepath.Glob(filepath.Join("java", "examples", "*.java"))
	args := append([]string{"-cp", javaClassPath, "-d", out, filepath.Join("java", "LockcheckKit.java")}, srcs...)
	if b, err := exec.Command("javac", append(args, extra...)...).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	return out
}

// TestJavaKitExamplesConform compiles the Java kit and its examples with
// the JDK and Debian's jars, and checks each against its design.
func TestJavaKitExamplesConform(t *testing.T) {
	classes := compileJava(t)
	for _, tt := range []struct {
		class, lock string
		zk          bool
	}{
		{"RedisWorker", "redis-set-px", false},
		{"PostgresWorker", "pg-advisory", false},
		{"CuratorWorker", "zk-sequential", true},
	} {
		t.Run(tt.class, func(t *testing.T) {
			t.Parallel()
			conforms(t, []string{"java", "-cp", classes + ":" + javaClassPath, tt.class}, tt.lock, tt.zk)
		})
	}
}

// TestUnfencedJavaKitWorker: the Java kit with its fencing check removed
// fails conformance on the fenced resource's rule alone.
func TestUnfencedJavaKitWorker(t *testing.T) {
	t.Parallel()
	servicetest.Need(t, "redis-set-px")
	src := filepath.Join(t.TempDir(), "Unfenced.java")
	if err := os.WriteFile(src, []byte("public class Unfenced {\n  public static void main(String[] a) {\n"+
		"    LockcheckKit.unfenced = true;\n    RedisWorker.main(a);\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unfencedFails(t, []string{"java", "-cp", compileJava(t, src), "Unfenced"}, nil)
}

// The examples' checks run two at a time (go test's -parallel is the
// number of CPUs): each waits out leases and partitions far more than it
// computes.

// conforms checks the worker argv against lock's design with conformance's
// rules: every rule kept, every rule of the design checked. A ZooKeeper
// worker gets a 3 s session (a 1 s one is lost whenever a loaded machine
// starves a JVM or a client for a third of a second).
func conforms(t *testing.T, argv []string, lock string, zk bool) {
	t.Helper()
	servicetest.Need(t, lock)
	o := conformance.Options{Worker: argv, Lock: lock, Dir: t.TempDir(), Lease: 2 * time.Second, ReplyTimeout: 30 * time.Second}
	if zk {
		o.Lease = 3 * time.Second
	}
	rep, err := conformance.Check(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Conforms() {
		t.Fatalf("broken rules: %+v", rep.Broken)
	}
	d, _ := workloads.FindDesign(lock)
	if want := conformance.RulesFor(d); len(rep.Checked) != len(want) {
		t.Errorf("checked %v, want every rule of %v", rep.Checked, want)
	}
}

// unfencedFails checks that the worker argv (env added), whose fencing
// check was removed, fails conformance on the fenced resource's rule
// alone, a stale write that replied ok.
func unfencedFails(t *testing.T, argv, env []string) {
	t.Helper()
	servicetest.Need(t, "redis-set-px")
	rep, err := conformance.Check(context.Background(), conformance.Options{Worker: argv, Env: env, Lock: "redis-set-px",
		Dir: t.TempDir(), ReplyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Broken) != 1 || rep.Broken[0].Rule != conformance.RuleFenced || !strings.Contains(rep.Broken[0].Detail, "replied ok, want fail") {
		t.Fatalf("broken: %+v; want the fenced resource's rule alone", rep.Broken)
	}
}
