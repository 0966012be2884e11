package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/workloads"
)

// newRunDir creates store/<test>/<yyyymmddThhmmss>/, adding a suffix when a
// run of the same test started in the same second.
func newRunDir(store, test string, now time.Time) (string, error) {
	base := filepath.Join(store, test, now.Format("20060102T150405"))
	dir := base
	for i := 2; ; i++ {
		err := os.MkdirAll(filepath.Dir(dir), 0o755)
		if err == nil {
			err = os.Mkdir(dir, 0o755)
		}
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 100 {
			return "", fmt.Errorf("create run directory: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// updateLatest points store/latest at dir.
func updateLatest(store, dir string) error {
	rel, err := filepath.Rel(store, dir)
	if err != nil {
		return err
	}
	tmp := filepath.Join(store, fmt.Sprintf(".latest-%d", os.Getpid()))
	_ = os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return fmt.Errorf("link latest run: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(store, "latest")); err != nil {
		return fmt.Errorf("link latest run: %w", err)
	}
	return nil
}

// testRecord is test.json: the test map plus what it ran on.
type testRecord struct {
	Test
	Command  []string          `json:"command"`
	Versions map[string]string `json:"versions"`
}

func writeTestJSON(dir string, p *Plan) error {
	rec := testRecord{Test: p.Test, Command: Command(p.Test),
		Versions: map[string]string{"go": runtime.Version(), "redis-server": redisVersion()}}
	if v, ok := p.serverVersion(); ok {
		rec.Versions[p.Service.Name] = v
	} else if p.Service.Version != nil {
		rec.Versions[p.Service.Name] = p.Service.Version()
	}
	if v := p.libraryLinked(); v != "" {
		rec.Versions[p.Library.Modules[0]] = v
	}
	return writeJSON(filepath.Join(dir, "test.json"), rec)
}

// ReadTest reads the test map stored in a run directory.
func ReadTest(dir string) (Test, error) {
	b, err := os.ReadFile(filepath.Join(dir, "test.json"))
	if err != nil {
		return Test{}, err
	}
	var rec testRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return Test{}, fmt.Errorf("%s: %w", filepath.Join(dir, "test.json"), err)
	}
	return rec.Test, nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		_ = os.Remove(tmp) // no partial file left behind (a full disk)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Command returns the check command line that re-runs t.
func Command(t Test) []string {
	args := []string{"check", "run", "--lock", t.Lock, "--nemesis", t.Nemesis,
		"--workers", fmt.Sprint(t.Workers), "--keys", fmt.Sprint(t.Keys), "--nodes", fmt.Sprint(t.Nodes),
		"--time", t.Time.String(), "--lease", t.Lease.String(), "--think", t.Think.String(),
		"--nemesis-interval", t.NemesisInterval.String(), "--nemesis-duration", t.NemesisDuration.String(),
		"--seed", fmt.Sprint(t.Seed)}
	if t.Workload != "" && t.Workload != workloads.WorkloadRegister {
		args = append(args, "--workload", t.Workload)
	}
	if t.Stock > 0 {
		args = append(args, "--stock", fmt.Sprint(t.Stock))
	}
	if t.Fencing {
		args = append(args, "--fencing")
	}
	if t.Failpoint != "" {
		args = append(args, "--failpoint", t.Failpoint)
	}
	if t.StuckBound > 0 {
		args = append(args, "--stuck-bound", t.StuckBound.String())
	}
	if t.StopOnAnomaly {
		args = append(args, "--stop-on-anomaly")
	}
	if t.NoObserve {
		args = append(args, "--observe=false")
	}
	if t.Sections > 1 {
		args = append(args, "--sections", fmt.Sprint(t.Sections))
	}
	if t.Service != "" {
		args = append(args, "--service", t.Service)
	}
	if t.ServiceVersion != "" {
		args = append(args, "--service-version", t.ServiceVersion)
	}
	if t.LibraryVersion != "" {
		args = append(args, "--library-version", t.LibraryVersion)
	}
	if t.Cluster != "" && t.Cluster != ClusterLocal {
		args = append(args, "--cluster", t.Cluster)
	}
	if len(t.External) > 0 {
		args = append(args, "--external", strings.Join(t.External, ","))
	}
	if t.Topology != "" {
		args = append(args, "--external", t.Topology)
	}
	return args
}
