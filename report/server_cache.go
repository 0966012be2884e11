package report

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// cacheLimit bounds the runs (and results.json summaries) a server keeps
// in memory: a few hundred bytes each. Runs beyond it are still listed,
// read afresh on every index request.
const cacheLimit = 20000

// runCache is the server's memory of the store for the index: each run's
// row, kept while the run's files are unchanged, and the summary derived
// from each results.json, kept while the file's modification time and size
// are unchanged. Index requests that arrive while a scan of the store is
// running share the next scan instead of starting their own.
type runCache struct {
	mu      sync.Mutex
	runs    map[string]runEntry      // by run directory
	results map[string]*resultsEntry // by results.json path
	limit   int
	// scanning is the scan in flight, queued the one the requests that
	// arrived during it wait for.
	scanning, queued *scanCall
	// parses counts the results.json files decoded, for tests.
	parses atomic.Int64
}

// newRunCache returns an empty cache holding at most limit runs.
func newRunCache(limit int) *runCache {
	return &runCache{runs: make(map[string]runEntry), results: make(map[string]*resultsEntry), limit: limit}
}

// fileSig identifies one state of a file: present, modification time and
// size.
type fileSig struct {
	ok        bool
	mod, size int64
}

// statFile returns the state of the regular file path (not a link).
func statFile(path string) fileSig {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return fileSig{}
	}
	return fileSig{ok: true, mod: st.ModTime().UnixNano(), size: st.Size()}
}

// runSig is the state of the files of a run directory the index reads.
type runSig struct {
	test, results, summary fileSig
	report, history        bool
}

// statRun returns the state of the run directory dir.
func statRun(dir string) runSig {
	return runSig{
		test:    statFile(filepath.Join(dir, "test.json")),
		results: statFile(filepath.Join(dir, "results.json")),
		summary: statFile(filepath.Join(dir, SummaryFile)),
		report:  statFile(filepath.Join(dir, "report.html")).ok,
		history: statFile(filepath.Join(dir, "history.jsonl")).ok,
	}
}

// summaryFresh reports whether summary.json was written no earlier than
// the results.json and test.json it summarizes.
func (g runSig) summaryFresh() bool {
	return g.summary.ok && g.results.ok && g.summary.mod >= g.results.mod && g.summary.mod >= g.test.mod
}

// runEntry is a run's index row as of sig.
type runEntry struct {
	sig  runSig
	info runInfo
}

// resultsEntry is the summary of one results.json as of mod and size;
// done is closed once it is filled in.
type resultsEntry struct {
	mod, size int64
	done      chan struct{}
	verdict   string // valid, invalid or unknown; "" with problem
	anomalies string
	problem   string
	transient bool // the file could not be opened: not kept
}

// scanCall is one scan of the store, shared by the requests waiting on
// done.
type scanCall struct {
	done chan struct{}
	runs []runInfo
	err  error
}

// list returns the runs of store, newest first: the result of a scan that
// started after the call did. If a scan is running, the call waits for the
// one queued after it, which every call arriving meanwhile shares.
func (c *runCache) list(store string) ([]runInfo, error) {
	c.mu.Lock()
	var sc *scanCall
	if c.scanning == nil {
		sc = &scanCall{done: make(chan struct{})}
		c.scanning = sc
		c.mu.Unlock()
		c.runScan(store, sc)
	} else {
		if c.queued == nil {
			c.queued = &scanCall{done: make(chan struct{})}
		}
		sc = c.queued
		c.mu.Unlock()
	}
	<-sc.done
	return sc.runs, sc.err
}

// runScan runs sc, then starts the scan queued meanwhile, if any, in a
// goroutine of its own (the caller's request is answered meanwhile).
func (c *runCache) runScan(store string, sc *scanCall) {
	sc.runs, sc.err = c.scan(store)
	close(sc.done)
	c.mu.Lock()
	next := c.queued
	c.scanning, c.queued = next, nil
	c.mu.Unlock()
	if next != nil {
		go c.runScan(store, next)
	}
}

// runDir is a candidate run directory.
type runDir struct{ dir, test, run string }

// scan reads every store/<test>/<run>/ that holds a test.json, newest
// first, from the cache where the run's files are unchanged. Symbolic
// links (store/latest) and hidden names are skipped, so every run is
// listed once and none from outside the store. Entries of runs no longer
// in the store are dropped.
func (c *runCache) scan(store string) ([]runInfo, error) {
	tests, err := os.ReadDir(store)
	if err != nil {
		return nil, err
	}
	var dirs []runDir
	for _, td := range tests {
		if !td.IsDir() || strings.HasPrefix(td.Name(), ".") {
			continue
		}
		rds, err := os.ReadDir(filepath.Join(store, td.Name()))
		if err != nil {
			continue
		}
		for _, rd := range rds {
			if rd.IsDir() && !strings.HasPrefix(rd.Name(), ".") {
				dirs = append(dirs, runDir{filepath.Join(store, td.Name(), rd.Name()), td.Name(), rd.Name()})
			}
		}
	}
	infos := make([]runInfo, len(dirs))
	listed := make([]bool, len(dirs))
	// A few workers: reading the cache is a handful of lstat calls a run,
	// a results.json without summary is decoded once.
	workers := min(runtime.GOMAXPROCS(0), 8, len(dirs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(dirs); i = int(next.Add(1)) - 1 {
				infos[i], listed[i] = c.run(dirs[i])
			}
		})
	}
	wg.Wait()
	runs := make([]runInfo, 0, len(dirs))
	for i, ok := range listed {
		if ok {
			runs = append(runs, infos[i])
		}
	}
	slices.SortStableFunc(runs, func(a, b runInfo) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return strings.Compare(b.Test+"/"+b.Run, a.Test+"/"+a.Run)
	})
	c.prune(dirs)
	return runs, nil
}

// prune drops the entries of runs not among dirs.
func (c *runCache) prune(dirs []runDir) {
	seen := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		seen[d.dir] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for dir := range c.runs {
		if !seen[dir] {
			delete(c.runs, dir)
		}
	}
	for path := range c.results {
		if !seen[filepath.Dir(path)] {
			delete(c.results, path)
		}
	}
}

// run returns the index row of d, and false if d holds no test.json.
func (c *runCache) run(d runDir) (runInfo, bool) {
	sig := statRun(d.dir)
	if !sig.test.ok {
		return runInfo{}, false
	}
	c.mu.Lock()
	e, ok := c.runs[d.dir]
	c.mu.Unlock()
	if ok && e.sig == sig {
		return e.info, true
	}
	ri := c.readRun(d, sig)
	c.mu.Lock()
	if _, ok := c.runs[d.dir]; ok || len(c.runs) < c.limit {
		c.runs[d.dir] = runEntry{sig: sig, info: ri}
	}
	c.mu.Unlock()
	return ri, true
}

// readRun reads the run d, whose files are as sig says: from its
// summary.json when that is at least as new as its results.json and
// test.json and readable, from test.json and the cached summary of
// results.json otherwise.
func (c *runCache) readRun(d runDir, sig runSig) runInfo {
	ri := newRunInfo(d.test, d.run)
	ri.Report, ri.History, ri.Results = sig.report, sig.history, sig.results.ok
	var problems []string
	sum, err := Summary{}, errors.New("no summary")
	if sig.summaryFresh() {
		sum, err = ReadSummary(d.dir)
	}
	if err == nil {
		ri.setTest(sum.TestInfo)
		if sum.TestProblem != "" {
			problems = append(problems, sum.TestProblem)
		}
		ri.Verdict, ri.Anomalies = sum.Valid.String(), countsSummary(sum.Anomalies)
	} else {
		if tf, err := readTestFile(d.dir); err != nil {
			problems = append(problems, err.Error())
		} else {
			ri.setTest(tf)
		}
		if sig.results.ok {
			e := c.resultsSummary(filepath.Join(d.dir, "results.json"), sig.results)
			if e.problem != "" {
				problems = append(problems, e.problem)
			} else {
				ri.Verdict, ri.Anomalies = e.verdict, e.anomalies
			}
		}
	}
	ri.finish(problems)
	return ri
}

// resultsSummary returns the summary of the results.json at path, whose
// state is sig: from the cache if it holds one for that state, else
// decoded once, however many callers ask at the same time.
func (c *runCache) resultsSummary(path string, sig fileSig) *resultsEntry {
	c.mu.Lock()
	e := c.results[path]
	if e != nil && e.mod == sig.mod && e.size == sig.size {
		c.mu.Unlock()
		<-e.done
		return e
	}
	e = &resultsEntry{mod: sig.mod, size: sig.size, done: make(chan struct{})}
	cached := len(c.results) < c.limit || c.results[path] != nil
	if cached {
		c.results[path] = e
	}
	c.mu.Unlock()
	c.decodeResults(path, e)
	close(e.done)
	if cached && e.transient {
		c.mu.Lock()
		if c.results[path] == e {
			delete(c.results, path)
		}
		c.mu.Unlock()
	}
	return e
}

// decodeResults fills e in from the results.json at path.
func (c *runCache) decodeResults(path string, e *resultsEntry) {
	f, err := os.Open(path)
	if err != nil {
		e.problem, e.transient = err.Error(), true
		return
	}
	defer f.Close()
	c.parses.Add(1)
	valid, counts, err := decodeResults(f)
	if err != nil {
		e.problem = err.Error()
		if !errors.Is(err, errNoVerdict) {
			e.transient = true
		}
		return
	}
	e.verdict, e.anomalies = valid.String(), countsSummary(counts)
}
