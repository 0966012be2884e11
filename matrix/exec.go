package matrix

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Executor runs cells as `check run` subprocesses.
type Executor struct {
	// Exe is the check binary.
	Exe string
	// Store is the store root; run directories are recorded relative to it.
	Store string
	// Dir is where the runs' own stores go:
	// Dir/runs/<number>-<row>-<column>-s<seed>/.
	Dir string
	// Jobs is how many runs go at a time (at least 1).
	Jobs int
	// RunTimeout bounds one run; past it the run is interrupted and
	// counted as an error. Zero means an hour.
	RunTimeout time.Duration
	// Progress gets one line per finished run (nil: none).
	Progress io.Writer
	// Stop, when set, is asked after every run whether to start no more
	// (`check repro --failfast`); runs in flight finish.
	Stop func(CellResult) bool
	// Docker, when set, runs each cell in a container on a Docker host
	// instead of as a subprocess of Exe (docker.go).
	Docker *Docker
}

// Run runs every cell for every seed and returns the cells with their
// runs (not judged). A cell that names a scenario runs with
// --stop-on-anomaly unless its own flags say otherwise. When ctx is done,
// runs in flight are interrupted (SIGINT) and the rest are recorded as
// interrupted.
func (x *Executor) Run(ctx context.Context, cells []Cell, seeds []uint64) []CellResult {
	p := Plan{Cells: cells}
	return x.RunItems(ctx, p, p.Items(seeds))
}

// RunItems runs the given items of plan p (all of them, or a shard's
// Pick) as Run does. It returns the plan's cells that have at least one
// item, each with its items' runs in plan order; every run directory is
// named by its item (Plan.RunName), so a shard names a run as the whole
// matrix would.
func (x *Executor) RunItems(ctx context.Context, p Plan, items []Item) []CellResult {
	cells := p.Cells
	// at[k] is where item k's run goes: cell out[at[k][0]], run at[k][1].
	out := []CellResult{}
	outOf := make(map[int]int)
	at := make([][2]int, len(items))
	for k, it := range items {
		i, ok := outOf[it.Cell]
		if !ok {
			i = len(out)
			outOf[it.Cell] = i
			out = append(out, CellResult{Cell: cells[it.Cell]})
		}
		at[k] = [2]int{i, len(out[i].Runs)}
		out[i].Runs = append(out[i].Runs, Run{Seed: it.Seed, Verdict: Interrupted, Exit: -1})
	}
	// Cells in plan order, whatever order the items came in.
	order := make([]int, 0, len(out))
	for ci := range cells {
		if i, ok := outOf[ci]; ok {
			order = append(order, i)
		}
	}
	started := make([]bool, len(items))
	n := x.Jobs
	if n < 1 {
		n = 1
	}
	var mu sync.Mutex
	done, stopped := 0, false
	ch := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(slot int) {
			defer wg.Done()
			for k := range ch {
				mu.Lock()
				skip := stopped
				if !skip {
					started[k] = true
				}
				mu.Unlock()
				if skip {
					continue
				}
				it := items[k]
				r := x.runOne(ctx, slot, it.N, p.RunName(it), cells[it.Cell], it.Seed)
				mu.Lock()
				c := &out[at[k][0]]
				c.Runs[at[k][1]] = r
				done++
				if x.Progress != nil {
					fmt.Fprintf(x.Progress, "[%d/%d] %s\n", done, len(items), progressLine(c.Cell, r))
				}
				if x.Stop != nil && x.Stop(*c) {
					stopped = true
				}
				mu.Unlock()
			}
		}(w)
	}
	for k := range items {
		mu.Lock()
		stop := stopped
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		select {
		case ch <- k:
		case <-ctx.Done():
		}
	}
	close(ch)
	wg.Wait()
	if stopped { // runs never started are not part of a repro's count
		kept := make([][]Run, len(out))
		for k, a := range at {
			if started[k] {
				kept[a[0]] = append(kept[a[0]], out[a[0]].Runs[a[1]])
			}
		}
		for i := range out {
			out[i].Runs = kept[i]
		}
	}
	res := make([]CellResult, len(order))
	for j, i := range order {
		res[j] = out[i]
	}
	return res
}

// progressLine is the line printed when a run ends.
func progressLine(c Cell, r Run) string {
	s := fmt.Sprintf("%s seed %d: %s", c.Name(), r.Seed, r.Verdict)
	switch {
	case r.Verdict == NotExercised:
		s += " (" + r.NotExercised + ")"
	case r.Verdict == Error:
		s += " (" + r.Error + ")"
	case len(r.Anomalies) > 0:
		s += " (" + r.AnomalyKinds()
		if r.FirstAnomalyS != nil {
			s += fmt.Sprintf(", first at %.1f s", *r.FirstAnomalyS)
		}
		s += ")"
	}
	s += fmt.Sprintf(" in %.0f s", r.WallS)
	if r.Dir != "" {
		s += "; " + r.Dir
	}
	return s
}

// RunArgs returns the `check run` arguments of one run of c: a scenario
// cell first gets --stop-on-anomaly (its own flags can turn it off), then
// the cell's flags, then the matrix's --quiet, --store and --seed.
func RunArgs(c Cell, store string, seed uint64) []string {
	args := []string{"run"}
	if c.Scenario() != "" {
		args = append(args, "--stop-on-anomaly")
	}
	args = append(args, c.Args...)
	return append(args, "--quiet", "--store", store, "--seed", fmt.Sprint(seed))
}

// runOne runs cell c with one seed, as the matrix's run number n (its
// directory runs/<name>), in job slot slot.
func (x *Executor) runOne(ctx context.Context, slot, n int, name string, c Cell, seed uint64) Run {
	r := Run{Seed: seed, Exit: -1}
	if ctx.Err() != nil {
		r.Verdict = Interrupted
		return r
	}
	store := filepath.Join(x.Dir, "runs", name)
	if err := os.MkdirAll(store, 0o755); err != nil {
		r.Verdict, r.Error = Error, fmt.Sprintf("create %s: %v", store, err)
		return r
	}
	logPath := filepath.Join(store, "output.txt")
	logf, err := os.Create(logPath)
	if err != nil {
		r.Verdict, r.Error = Error, fmt.Sprintf("create %s: %v", logPath, err)
		return r
	}
	defer logf.Close()
	limit := x.RunTimeout
	if limit <= 0 {
		limit = time.Hour
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	start := time.Now()
	var cmd *exec.Cmd
	var cell cellContainer
	if x.Docker != nil {
		if cmd, cell, err = x.Docker.start(rctx, slot, n, RunArgs(c, "/store", seed)); err != nil {
			_ = x.Docker.finish(cell, store)
			r.Verdict, r.Error = Error, err.Error()
			return r
		}
	} else {
		cmd = exec.CommandContext(rctx, x.Exe, RunArgs(c, store, seed)...)
		// Interrupt, as Ctrl-C would: the run stops its servers and workers
		// and checks what it recorded; kill it only if it does not exit.
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
		cmd.WaitDelay = time.Minute
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = runChild(cmd)
	if x.Docker != nil {
		if ferr := x.Docker.finish(cell, store); ferr != nil {
			fmt.Fprintf(logf, "matrix: %v\n", ferr)
		}
	}
	r.WallS = time.Since(start).Seconds()
	r.Exit = exitCode(cmd, err)
	if dir, ok := runDir(store); ok {
		if rel, err := filepath.Rel(x.Store, dir); err == nil {
			r.Dir = filepath.ToSlash(rel)
		} else {
			r.Dir = dir
		}
		if res, err := ReadResults(dir); err == nil {
			r.Fill(res)
		}
	}
	// A run that panicked in a goroutine exits 2 with a trace, maybe
	// after writing results.json: an error, never an unknown verdict.
	verdict, panicLine := ClassifyRun(r.Exit, r.NotExercised, logPath)
	r.Verdict = verdict
	switch {
	case rctx.Err() == context.DeadlineExceeded:
		r.Verdict, r.Error = Error, fmt.Sprintf("no verdict within %s (interrupted)", limit)
	case r.Exit == -1 && err != nil:
		r.Verdict, r.Error = Error, err.Error()
	case panicLine != "":
		r.Error = panicLine
	case r.Verdict == Error || r.Verdict == Unknown:
		r.Error = lastLine(logPath)
	}
	return r
}

// runChild runs cmd so that it dies with the matrix: the kernel sends it
// SIGKILL when the thread that started it ends (Pdeathsig), and a SIGKILLed
// matrix ends every thread; a `check run` so killed takes its servers and
// workers with it by the same means. The thread is this goroutine's, locked
// to it until the child has been waited for, so that no goroutine that
// locks and then ends an OS thread can take a running child with it.
// cmd's own process-group settings, if any, are kept.
func runChild(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return cmd.Run()
}

// exitCode returns the process's exit code, 130 for a death by SIGINT, -1
// when it did not run.
func exitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		if st.Signal() == syscall.SIGINT {
			return 130
		}
		return 128 + int(st.Signal())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && cmd.ProcessState.ExitCode() == 0 {
		return -1
	}
	return cmd.ProcessState.ExitCode()
}

// runDir finds the one run directory in a run's own store.
func runDir(store string) (string, bool) {
	ms, _ := filepath.Glob(filepath.Join(store, "*", "*", "test.json"))
	if len(ms) == 0 {
		return "", false
	}
	return filepath.Dir(ms[len(ms)-1]), true
}

// lastLine returns the last non-blank line of a file, shortened.
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	last := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			last = l
		}
	}
	if len(last) > 400 {
		last = last[:400] + "…"
	}
	return last
}

// slug makes a label safe as a path element.
func slug(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == '='
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 60 {
		b = b[:60]
	}
	return string(b)
}
