package runner

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
)

// TestRunBuiltEtcdVersion runs etcd-mutex with no fault on etcd 3.6.16, the
// release built from etcd's server module: valid, with grants, and test.json
// records the version asked for and the one the server reports. It needs
// the build in the cache (a first `check run --service-version 3.6.16`
// makes it; building here would take minutes), and skips without it.
func TestRunBuiltEtcdVersion(t *testing.T) {
	needService(t, "etcd-mutex")
	g := clusters.GoModuleServer{Module: "go.etcd.io/etcd/server/v3", Version: "v3.6.16", Binary: "etcd"}
	if _, err := os.Stat(g.Path()); err != nil {
		t.Skipf("etcd 3.6.16 is not built yet (%s); check run --lock etcd-mutex --service-version 3.6.16 builds it", g.Path())
	}
	tt := quick(t, "etcd-mutex", "none", false)
	tt.ServiceVersion, tt.Lease, tt.Time = "3.6.16", 2*time.Second, 3*time.Second
	out, err := Run(context.Background(), tt, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Valid != checker.Valid || grants(t, out.Dir) == 0 {
		t.Fatalf("verdict %v with %d grants, anomalies %+v; want valid with grants", out.Result.Valid, grants(t, out.Dir), out.Result.Anomalies)
	}
	b, err := os.ReadFile(filepath.Join(out.Dir, "test.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		ServiceVersion string            `json:"service_version"`
		Versions       map[string]string `json:"versions"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ServiceVersion != "3.6.16" || rec.Versions["etcd"] != "3.6.16" {
		t.Fatalf("test.json: service_version %q, versions %v; want 3.6.16 asked for and reported", rec.ServiceVersion, rec.Versions)
	}
}
