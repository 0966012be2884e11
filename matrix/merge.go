package matrix

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Part is one stored matrix given to Merge: a shard, or a whole matrix.
type Part struct {
	M *Matrix
	// Store is the store the part's run directories are relative to.
	Store string
	// Name is the part as it was given (a directory or a matrix.json).
	Name string
}

// LoadPart reads the stored matrix at path: a matrix.json, or the
// directory that holds one (store/matrix/<time>/). Its runs' directories
// are relative to its store, two levels above that directory.
func LoadPart(path string) (Part, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "matrix.json")
	}
	m, err := Load(file)
	if err != nil {
		return Part{}, fmt.Errorf("read matrix %s: %w", path, err)
	}
	return Part{M: m, Store: filepath.Dir(filepath.Dir(filepath.Dir(file))), Name: path}, nil
}

// planOf is the plan a part belongs to: its stored Plan, or, for a matrix
// run whole, its own cells and seeds.
func planOf(m *Matrix) Plan {
	if m.Plan != nil {
		return *m.Plan
	}
	p := Plan{Seeds: m.Seeds}
	for _, c := range m.Cells {
		p.Cells = append(p.Cells, c.Cell)
	}
	return p
}

// Merge judges the parts, the shards of one plan, as the one matrix that
// ran the whole plan: every cell of the plan with its runs in seed order,
// each run as its shard recorded it, judged as `check matrix` judges. A
// run the plan expects that no part has, or whose run directory is gone,
// is Missing (so its cell misses). Run directories are given relative to
// store, where the merged matrix is stored. It is an error when the parts
// belong to different plans or share a shard or a run.
func Merge(parts []Part, store string) (*Matrix, error) {
	if len(parts) == 0 {
		return nil, errors.New("nothing to merge: give the shards' matrix directories")
	}
	plan := planOf(parts[0].M)
	plan.Shard = Shard{}
	n := max(planOf(parts[0].M).Shard.N, 1)
	seeds, err := ParseSeeds(plan.Seeds)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", parts[0].Name, err)
	}
	bySeen := make(map[int]string)
	for _, pt := range parts {
		p := planOf(pt.M)
		if p.PlanKey() != plan.PlanKey() {
			return nil, fmt.Errorf("%s and %s are parts of different matrices (their cells or seeds differ)", parts[0].Name, pt.Name)
		}
		if max(p.Shard.N, 1) != n {
			return nil, fmt.Errorf("%s is shard %s, %s is of %d shards", pt.Name, p.Shard, parts[0].Name, n)
		}
		i := max(p.Shard.I, 1)
		if prev, dup := bySeen[i]; dup {
			return nil, fmt.Errorf("shard %d/%d given twice: %s and %s", i, n, prev, pt.Name)
		}
		bySeen[i] = pt.Name
	}
	items := plan.Items(seeds)
	shardOf := plan.Deal(items, n)
	index := make(map[string]int, len(items))
	for k, it := range items {
		index[itemID(plan.Cells[it.Cell], it.Seed)] = k
	}
	runs := make([]*Run, len(items))
	from := make([]string, len(items))
	for _, pt := range parts {
		for _, c := range pt.M.Cells {
			for _, r := range c.Runs {
				k, ok := index[itemID(c.Cell, r.Seed)]
				if !ok {
					return nil, fmt.Errorf("%s: cell %s seed %d is not in the plan", pt.Name, c.Name(), r.Seed)
				}
				if runs[k] != nil {
					return nil, fmt.Errorf("cell %s seed %d is in both %s and %s", c.Name(), r.Seed, from[k], pt.Name)
				}
				r := rebase(r, pt.Store, store)
				runs[k], from[k] = &r, pt.Name
			}
		}
	}
	m := &Matrix{Version: Version, Seeds: plan.Seeds}
	for _, pt := range parts {
		m.Merged = append(m.Merged, pt.Name)
		m.Jobs += pt.M.Jobs
		if m.Started.IsZero() || pt.M.Started.Before(m.Started) {
			m.Started = pt.M.Started
		}
	}
	var end time.Time
	for _, pt := range parts {
		if e := pt.M.Started.Add(time.Duration(pt.M.WallS * float64(time.Second))); e.After(end) {
			end = e
		}
	}
	m.WallS = end.Sub(m.Started).Seconds()
	m.Cells = make([]CellResult, len(plan.Cells))
	for i, c := range plan.Cells {
		m.Cells[i] = CellResult{Cell: c, Runs: make([]Run, 0, len(seeds))}
	}
	for k, it := range items {
		r := Run{Seed: it.Seed, Verdict: Missing, Exit: -1,
			Error: fmt.Sprintf("no shard ran it (it is shard %d/%d's, which was not merged)", shardOf[k], n)}
		if runs[k] != nil {
			r = *runs[k]
		} else if _, ok := bySeen[shardOf[k]]; ok {
			r.Error = fmt.Sprintf("shard %d/%d (%s) has no record of it", shardOf[k], n, bySeen[shardOf[k]])
		}
		m.Cells[it.Cell].Runs = append(m.Cells[it.Cell].Runs, r)
	}
	m.Judge()
	return m, nil
}

// itemID names a run of a cell across parts.
func itemID(c Cell, seed uint64) string { return fmt.Sprintf("%s\x03%d", c.Key(), seed) }

// rebase checks that a run's directory is still there (else the run is
// Missing) and makes it relative to store when it can.
func rebase(r Run, from, store string) Run {
	if r.Dir == "" {
		return r
	}
	abs := filepath.FromSlash(r.Dir)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(from, abs)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return Run{Seed: r.Seed, Verdict: Missing, Exit: -1, Dir: "",
			Error: fmt.Sprintf("its run directory %s is gone (it was %s)", abs, r.Verdict)}
	}
	if rel, err := filepath.Rel(store, abs); err == nil && !strings.HasPrefix(rel, "..") {
		r.Dir = filepath.ToSlash(rel)
	} else if a, err := filepath.Abs(abs); err == nil {
		r.Dir = filepath.ToSlash(a)
	}
	return r
}

// MissingRuns lists the merged matrix's missing runs, one line each:
// "cell seed 3: <why>".
func (m *Matrix) MissingRuns() []string {
	var out []string
	for _, c := range m.Cells {
		for _, r := range c.Runs {
			if r.Verdict == Missing {
				out = append(out, fmt.Sprintf("%s seed %d: %s", c.Name(), r.Seed, r.Error))
			}
		}
	}
	sort.Strings(out)
	return out
}
