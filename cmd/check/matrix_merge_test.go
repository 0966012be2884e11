package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/matrix"
)

// nights is the matrix package's store of stored-matrix fixtures: three
// nights and a shard.
const nights = "../../matrix/testdata/nights"

func TestMatrixDiff(t *testing.T) {
	n := func(day string) string { return filepath.Join(nights, "matrix", "202611"+day+"T020000") }
	for _, tt := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"new miss", []string{n("22"), n("23")}, exitInvalid,
			[]string{"new miss: redis-set-px pause (was U 4/4 met, now U? 3/4 missed)", "fixed: zk-ephemeral pause",
				"1 cells met in " + n("22") + " and missed in " + n("23") + ": redis-set-px pause\n"}},
		{"two new misses, by matrix.json", []string{n("23") + "/matrix.json", n("22")}, exitInvalid,
			[]string{": zk-ephemeral pause; zk-sequential none\n"}},
		{"none", []string{n("23"), n("23")}, exitValid, []string{"no cell that met in", "(0 changes)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(append([]string{"matrix", "diff"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"one matrix", []string{n("22")}, "want two stored matrices"},
		{"not a matrix", []string{n("22"), nights}, "read matrix " + nights},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(append([]string{"matrix", "diff"}, tt.args...)...)
			if code != exitError || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 3 and %q", code, stderr, tt.want)
			}
		})
	}
}

// writeShards stores the n shards of a plan of two S cells over seeds
// 1..3 in store, every run valid with its run directory, and returns the
// shards' matrix directories.
func writeShards(t *testing.T, store string, n int) []string {
	t.Helper()
	plan := matrix.Plan{Seeds: "1..3", Cells: []matrix.Cell{
		{Row: "redis-set-px", Column: "none", Expect: matrix.Safe, Args: []string{"--lock", "redis-set-px"}},
		{Row: "zk-ephemeral", Column: "none", Expect: matrix.Safe, Args: []string{"--lock", "zk-ephemeral"}}}}
	items := plan.Items([]uint64{1, 2, 3})
	var dirs []string
	for i := 1; i <= n; i++ {
		p := plan
		p.Shard = matrix.Shard{I: i, N: n}
		name := fmt.Sprintf("20261126T10000%d", i)
		m := &matrix.Matrix{Version: matrix.Version, Started: time.Date(2026, 11, 26, 10, 0, i, 0, time.UTC), WallS: 30,
			Seeds: plan.Seeds, Jobs: 1, Dir: matrix.StoreDir + "/" + name, Plan: &p}
		for _, it := range p.Pick(items) {
			r := matrix.Run{Seed: it.Seed, Verdict: matrix.Valid, WallS: 10,
				Dir: m.Dir + "/runs/" + p.RunName(it) + "/t/20261126T100000"}
			if err := os.MkdirAll(filepath.Join(store, filepath.FromSlash(r.Dir)), 0o755); err != nil {
				t.Fatal(err)
			}
			if k := len(m.Cells) - 1; k < 0 || m.Cells[k].Name() != p.Cells[it.Cell].Name() {
				m.Cells = append(m.Cells, matrix.CellResult{Cell: p.Cells[it.Cell]})
			}
			m.Cells[len(m.Cells)-1].Runs = append(m.Cells[len(m.Cells)-1].Runs, r)
		}
		m.Judge()
		dir := filepath.Join(store, matrix.StoreDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := matrix.Save(dir, m); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

func TestMatrixMerge(t *testing.T) {
	tmp := t.TempDir()
	store := filepath.Join(tmp, "store")
	dirs := writeShards(t, store, 3)
	junit := filepath.Join(tmp, "out", "j.xml")
	code, stdout, stderr := run(append([]string{"matrix", "merge", "--store", store, "--junit", junit}, dirs...)...)
	if code != exitValid || !strings.Contains(stdout, "every cell met its expectation (2 cells, 6 runs") {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	ms, err := matrix.List(store)
	var merged *matrix.Matrix
	for _, m := range ms {
		if len(m.Merged) > 0 {
			merged = m
		}
	}
	if err != nil || len(ms) != 4 || merged == nil || len(merged.Merged) != 3 || merged.Plan != nil || merged.Seeds != "1..3" {
		t.Fatalf("stored: %d matrices, merged %+v, %v", len(ms), merged, err)
	}
	for _, c := range merged.Cells {
		for _, r := range c.Runs {
			if !strings.HasPrefix(r.Dir, "matrix/2026112") {
				t.Errorf("merged run dir %q is not relative to the store", r.Dir)
			}
		}
	}
	if b, err := os.ReadFile(junit); err != nil || !strings.Contains(string(b), `tests="6" failures="0" errors="0"`) {
		t.Errorf("JUnit: %v\n%s", err, b)
	}

	// A run directory gone: missing, and the merge exits 1 (spelled
	// --collect, as docs/scale.md first named it).
	gone := filepath.Join(dirs[1], "runs")
	des, err := os.ReadDir(gone)
	if err != nil || len(des) == 0 {
		t.Fatalf("shard 2 runs: %v %v", des, err)
	}
	if err := os.RemoveAll(filepath.Join(gone, des[0].Name())); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(append([]string{"matrix", "--collect", "--store", store}, dirs...)...)
	if code != exitInvalid || !regexp.MustCompile(`missing: \S+ none seed \d: its run directory .* is gone \(it was valid\)`).MatchString(stderr) ||
		!strings.Contains(stdout, "1 runs missing") || !strings.Contains(stdout, "1 of 4 runs missing") && !strings.Contains(stdout, "1 of 3 runs missing") {
		t.Errorf("merge with a run gone: exit %d\n%s%s", code, stdout, stderr)
	}
	// Shard 3 not given.
	code, _, stderr = run("matrix", "merge", "--store", store, dirs[0])
	if code != exitInvalid || !strings.Contains(stderr, "shard 2/3's, which was not merged") || !strings.Contains(stderr, "shard 3/3's, which was not merged") {
		t.Errorf("merge of shard 1 alone: exit %d\n%s", code, stderr)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing", []string{"matrix", "merge"}, "give the shards' matrix directories"},
		{"twice", []string{"matrix", "merge", "--store", store, dirs[0], dirs[0]}, "shard 1/3 given twice"},
		{"not a matrix", []string{"matrix", "merge", tmp}, "read matrix " + tmp},
		{"bad shard", []string{"matrix", "--lock", "redis-set-px", "--shard", "4/3"}, "--shard \"4/3\": want 1 <= I <= N"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(tt.args...)
			if code != exitError || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 3 and %q", code, stderr, tt.want)
			}
		})
	}
}

// TestMatrixShardWithNothingToRun: a shard that the deal gives no run (2
// of 2 for one cell and one seed) runs nothing, stores its plan, and
// exits 0; merged alone, the other shard's run is missing.
func TestMatrixShardWithNothingToRun(t *testing.T) {
	store := t.TempDir()
	code, stdout, stderr := run("matrix", "--lock", "redis-set-px", "--seeds", "7", "--shard", "2/2", "--store", store)
	if code != exitValid || !strings.Contains(stdout, "this was shard 2/2 (0 runs)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	ms, err := matrix.List(store)
	if err != nil || len(ms) != 1 || ms[0].Plan == nil || ms[0].Plan.Shard != (matrix.Shard{I: 2, N: 2}) ||
		len(ms[0].Plan.Cells) != 1 || ms[0].Plan.Seeds != "7" {
		t.Fatalf("stored shard: %+v %v", ms, err)
	}
	code, _, stderr = run("matrix", "merge", "--store", store, filepath.Join(store, filepath.FromSlash(ms[0].Dir)))
	if code != exitInvalid || !strings.Contains(stderr, "missing: redis-set-px none seed 7: no shard ran it (it is shard 1/2's") {
		t.Errorf("merge: exit %d\n%s", code, stderr)
	}
}

func TestTrendPage(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "next "+r.URL.Path) })
	srv := httptest.NewServer(withTrend(nights, next))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	code, page := get("/trend")
	if code != http.StatusOK {
		t.Fatalf("GET /trend: %d\n%s", code, page)
	}
	rows := make(map[string]string)
	for _, tr := range regexp.MustCompile(`(?s)<tr class="cell"><th>([^<]+)</th>(.*?)</tr>`).FindAllStringSubmatch(page, -1) {
		rows[tr[1]] = tr[2]
	}
	if len(rows) != 6 {
		t.Fatalf("%d cell rows, want 6:\n%s", len(rows), page)
	}
	label := func(l string) string {
		return `<span class="label label-` + strings.ReplaceAll(l, " ", "-") + `">` + l + `</span>`
	}
	for cell, want := range map[string][]string{
		"redis-set-px pause":      {label("new miss")},
		"zk-ephemeral pause":      {label("fixed")},
		"redis-watchdog failover": {label("flaky")},
		"zk-sequential none":      {label("fixed"), label("flaky")},
		"redis-set-px none":       nil,
	} {
		got := regexp.MustCompile(`<span class="label[^>]*>[^<]*</span>`).FindAllString(rows[cell], -1)
		if strings.Join(got, "") != strings.Join(want, "") {
			t.Errorf("%s: labels %q, want %q", cell, got, want)
		}
	}
	// Three nights (the shard left out), linked; each run linked.
	for _, n := range []string{"20261121T020000", "20261122T020000", "20261123T020000"} {
		if !strings.Contains(page, `<a href="/matrix/`+n+`">`+n+`</a>`) {
			t.Errorf("night %s not linked", n)
		}
	}
	if strings.Contains(page, "20261124T020000") {
		t.Error("the shard is on the trend page")
	}
	if !strings.Contains(rows["redis-set-px pause"], `<a class="s-valid" href="/runs/matrix/20261123T020000/runs/003-redis-set-px-pause-s3/t/r/" title="valid">3</a>`) {
		t.Errorf("run link missing:\n%s", rows["redis-set-px pause"])
	}
	if strings.Count(rows["redis-set-px kill"], `<td class="muted">—</td>`) != 2 {
		t.Errorf("a cell of the last night only:\n%s", rows["redis-set-px kill"])
	}
	if code, body := get("/trend/"); code != http.StatusOK || body != page {
		t.Errorf("GET /trend/: %d", code)
	}
	if _, body := get("/matrix/"); body != "next /matrix/" {
		t.Errorf("other paths: %q", body)
	}
	resp, err := http.Post(srv.URL+"/trend", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /trend: %d", resp.StatusCode)
	}
}
