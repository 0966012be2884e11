package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/matrix"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/schedule"
	"github.com/lockcheck/lockcheck/workloads"
)

// matrixFlags are the flags `check matrix` takes itself, true for those
// that take a value (false: a boolean); every other flag is a `check
// run` flag, passed to every run.
var matrixFlags = map[string]bool{"cells": true, "lock": true, "nemesis": true, "seeds": true, "jobs": true,
	"junit": true, "json": true, "markdown": true, "store": true, "run-timeout": true, "h": false, "help": false,
	"docker-host": true, "cell-image": true, "service-version": true, "library-version": true, "shard": true, "until-covered": false, "max-seeds": true}

// cmdMatrix runs `check matrix`: cells (from --cells FILE, or --lock x
// --nemesis) over --seeds, --jobs runs at a time, each its own `check run`
// of this binary; prints the table, writes the reports and stores the
// matrix. Exit 0 when every cell met its expectation, 1 when one missed,
// 3 on bad input or when every run was an error, 130 when interrupted.
// `check matrix merge` and `check matrix diff` are matrix_merge.go's.
func cmdMatrix(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) > 0 {
		switch args[0] {
		case "merge", "--collect", "-collect":
			return cmdMatrixMerge(args[1:], stdout, stderr)
		case "diff":
			return cmdMatrixDiff(args[1:], stdout, stderr)
		}
	}
	own, extra := splitOwnFlags(args, matrixFlags)
	fs := newFlags("matrix", stderr)
	cellsFile := fs.String("cells", "", "cells file: one cell a line, ROW COLUMN EXPECT [reach=CONDITIONS] FLAGS... (docs/matrix.md)")
	locks := fs.String("lock", "", "lock designs, comma-separated (cells: each lock x each --nemesis; expectations from the built-in catalog)")
	nems := fs.String("nemesis", "none", "with --lock: nemeses, comma-separated; each is one column (for pause and partition in one run, use a cells file)")
	svcVersions := fs.String("service-version", "", "lock-server versions, comma-separated (check list shows each service's): every cell runs once on each, its row ROW@VERSION")
	libVersions := fs.String("library-version", "", "versions of the designs' Go client library, comma-separated (check list shows each library's): every cell runs once on each, its row ROW@client-VERSION")
	seedList := fs.String("seeds", "1..10", "seeds: a list like 1..10, 1,3,5 or 1..3,7")
	jobs := fs.Int("jobs", 2, "runs at a time")
	junit := fs.String("junit", "", "write JUnit XML here")
	jsonOut := fs.String("json", "", "write the matrix as JSON here (also stored as store/matrix/<time>/matrix.json)")
	md := fs.String("markdown", "", "write a markdown table here, ready for docs/verdicts.md")
	store := fs.String("store", "store", "store directory: the matrix goes to store/matrix/<time>/, each run to its own store below it")
	runTimeout := fs.Duration("run-timeout", time.Hour, "interrupt a run that has no verdict after this long (an error)")
	dockerHosts := fs.String("docker-host", "", "run each cell in a container of --cell-image on these Docker hosts, comma-separated DOCKER_HOST values (job slot i on host i mod n; docs/scale.md)")
	cellImage := fs.String("cell-image", matrix.DefaultCellImage, "with --docker-host: the cell image (scripts/images.sh build check)")
	shardFlag := fs.String("shard", "", "run only part I of N of the cells x seeds, written I/N as in 2/3 (sorted by cell name and seed, dealt round-robin), so N machines run the matrix with no overlap; check matrix merge judges the parts as one (docs/matrix.md)")
	untilCovered := fs.Bool("until-covered", false, "run more seeds of each cell whose required danger conditions (reach=) no run reached, one a round, with its faults aimed at the condition where a trigger can (docs/conditions.md), until each is reached or the cell has --max-seeds runs (docs/matrix.md)")
	maxSeeds := fs.Int("max-seeds", 30, "with --until-covered: the most runs a cell may have in all")
	if help, err := parseFlags(fs, own); help || err != nil {
		return helpOrError(help, err)
	}
	if *untilCovered && *shardFlag != "" {
		return exitError, errors.New("--until-covered with --shard: a shard cannot tell whether another covered a cell; run it without --shard")
	}
	if *maxSeeds < 1 || *maxSeeds > 10000 {
		return exitError, fmt.Errorf("--max-seeds %d: want 1 to 10000", *maxSeeds)
	}
	var docker *matrix.Docker
	if *dockerHosts != "" {
		hosts, err := matrix.ParseDockerHosts(*dockerHosts)
		if err != nil {
			return exitError, fmt.Errorf("--docker-host: %w", err)
		}
		docker = &matrix.Docker{Hosts: hosts, Image: *cellImage}
	}
	cells, err := matrixCells(*cellsFile, *locks, *nems, extra, fs)
	if err != nil {
		return exitError, err
	}
	if cells, err = versionCells(cells, *svcVersions, *libVersions); err != nil {
		return exitError, err
	}
	seeds, err := matrix.ParseSeeds(*seedList)
	if err != nil {
		return exitError, err
	}
	plan := matrix.Plan{Cells: cells, Seeds: matrix.FormatSeeds(seeds)}
	if *shardFlag != "" {
		if plan.Shard, err = matrix.ParseShard(*shardFlag); err != nil {
			return exitError, err
		}
	}
	if *jobs < 1 || *jobs > 64 {
		return exitError, fmt.Errorf("--jobs %d: want 1 to 64", *jobs)
	}
	if *runTimeout <= 0 {
		return exitError, fmt.Errorf("--run-timeout %s: want more than 0", *runTimeout)
	}
	for flag, path := range map[string]string{"junit": *junit, "json": *jsonOut, "markdown": *md} {
		if err := checkOutputPath(path); err != nil { // before the runs, not after hours of them
			return exitError, fmt.Errorf("--%s: %w", flag, err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return exitError, fmt.Errorf("find this binary to run the cells: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := &matrix.Matrix{Version: matrix.Version, Started: time.Now().UTC(), Seeds: plan.Seeds,
		Jobs: *jobs, Command: append([]string{"check", "matrix"}, args...)}
	if !plan.Shard.All() {
		m.Plan = &plan
	}
	return runMatrix(ctx, m, plan, plan.Pick(plan.Items(seeds)), matrixOutputs{exe: exe, store: *store, junit: *junit, json: *jsonOut,
		markdown: *md, runTimeout: *runTimeout, docker: docker, untilCovered: *untilCovered, maxSeeds: *maxSeeds}, stdout, stderr)
}

// matrixOutputs is where a matrix runs and what it writes.
type matrixOutputs struct {
	exe, store, junit, json, markdown string
	runTimeout                        time.Duration
	docker                            *matrix.Docker // nil: cells run as subprocesses
	// untilCovered runs more seeds of the cells whose required conditions
	// were not reached, up to maxSeeds runs a cell.
	untilCovered bool
	maxSeeds     int
}

// runMatrix runs the items of the plan (all of it, or a shard's part),
// judges and stores the matrix, prints its table and writes the reports;
// it returns the matrix's exit code. A shard judges only its own part, so
// it exits 0 unless it was interrupted or every run was an error: the
// verdict on the whole is `check matrix merge`'s.
func runMatrix(ctx context.Context, m *matrix.Matrix, plan matrix.Plan, items []matrix.Item, o matrixOutputs, stdout, stderr io.Writer) (int, error) {
	dir, err := matrix.NewDir(o.store, matrix.StoreDir, m.Started.Local())
	if err != nil {
		return exitError, err
	}
	m.Dir = filepath.ToSlash(strings.TrimPrefix(dir, filepath.Clean(o.store)+string(filepath.Separator)))
	if plan.Shard.All() {
		fmt.Fprintf(stderr, "matrix: %d cells x %d seeds = %d runs, %d at a time; %s\n",
			len(plan.Cells), len(items)/max(len(plan.Cells), 1), len(items), m.Jobs, dir)
	} else {
		fmt.Fprintf(stderr, "matrix: shard %s: %d of the runs of %d cells x seeds %s, %d at a time; %s\n",
			plan.Shard, len(items), len(plan.Cells), plan.Seeds, m.Jobs, dir)
	}
	x := &matrix.Executor{Exe: o.exe, Store: o.store, Dir: dir, Jobs: m.Jobs, RunTimeout: o.runTimeout, Progress: stderr, Docker: o.docker}
	start := time.Now()
	m.Cells = x.RunItems(ctx, plan, items)
	m.Judge()
	if o.untilCovered {
		if n := x.UntilCovered(ctx, m, len(items), o.maxSeeds, stderr); n > 0 {
			fmt.Fprintf(stderr, "until-covered: %d more runs\n", n)
		}
	}
	m.WallS = time.Since(start).Seconds()
	code, err := writeMatrix(m, dir, o, stdout)
	if err != nil || plan.Shard.All() {
		return code, err
	}
	if code == exitValid || code == exitInvalid {
		fmt.Fprintf(stdout, "matrix: this was shard %s (%d runs), judged on its own runs only; `check matrix merge` the %d shards' directories for the verdict\n",
			plan.Shard, len(items), plan.Shard.N)
		return exitValid, nil
	}
	return code, nil
}

// writeMatrix stores a judged matrix in dir, prints its table and summary
// and writes the reports o asks for; it returns the matrix's exit code.
func writeMatrix(m *matrix.Matrix, dir string, o matrixOutputs, stdout io.Writer) (int, error) {
	runs := 0
	for _, c := range m.Cells {
		runs += len(c.Runs)
	}
	var errs []error
	if err := matrix.Save(dir, m); err != nil {
		errs = append(errs, err)
	}
	if err := matrix.WriteTable(stdout, m); err != nil {
		errs = append(errs, err)
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer, *matrix.Matrix) error
	}{{o.junit, matrix.WriteJUnit}, {o.json, matrix.WriteJSON}, {o.markdown, matrix.WriteMarkdown}} {
		if out.path == "" {
			continue
		}
		if err := writeFileWith(out.path, func(w io.Writer) error { return out.write(w, m) }); err != nil {
			errs = append(errs, err)
		}
	}
	code := m.ExitCode()
	missed := len(m.Missed())
	switch code {
	case exitValid:
		fmt.Fprintf(stdout, "matrix: every cell met its expectation (%d cells, %d runs, %.0f s); %s\n", len(m.Cells), runs, m.WallS, filepath.Join(dir, "matrix.json"))
	case exitInvalid:
		fmt.Fprintf(stdout, "matrix: %d of %d cells missed their expectation; %s\n", missed, len(m.Cells), filepath.Join(dir, "matrix.json"))
	case exitError:
		fmt.Fprintf(stdout, "matrix: every run ended in an error (nothing was tested); %s\n", filepath.Join(dir, "matrix.json"))
	case exitInterrupted:
		fmt.Fprintf(stdout, "matrix: interrupted; the runs that ended are in %s\n", filepath.Join(dir, "matrix.json"))
	}
	if err := errors.Join(errs...); err != nil {
		return exitError, err
	}
	return code, nil
}

// checkOutputPath makes the folder of path when it is missing, and reports
// why a report could not be written to path: its folder cannot be made, or
// path is a directory.
func checkOutputPath(path string) error {
	if path == "" {
		return nil
	}
	// A missing folder is made (store/ does not exist before the first
	// run, and the Makefile's matrices write there).
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", filepath.Dir(path))
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	return nil
}

// writeFileWith creates path and writes it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// splitOwnFlags separates a command's own flags (with their values) from
// the rest, which are `check run` flags for every run (kept in order).
// own names the command's flags, true for one that takes a value: a
// boolean's next argument is not its value.
func splitOwnFlags(args []string, own map[string]bool) (mine, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if takes, ok := own[name]; strings.HasPrefix(a, "-") && ok {
			mine = append(mine, a)
			if !hasValue && takes && i+1 < len(args) {
				mine = append(mine, args[i+1])
				i++
			}
			continue
		}
		rest = append(rest, a)
	}
	return mine, rest
}

// matrixCells builds the cells from a cells file or from --lock x
// --nemesis, with extra run flags added to each, and checks every lock,
// nemesis and scenario they name.
func matrixCells(file, locks, nems string, extra []string, fs *flag.FlagSet) ([]matrix.Cell, error) {
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := matrix.CheckFlags(extra); err != nil {
		return nil, err
	}
	catalog, err := matrix.DefaultCatalog()
	if err != nil {
		return nil, err
	}
	var cells []matrix.Cell
	switch {
	case file != "" && (set["lock"] || set["nemesis"]):
		return nil, errors.New("give --cells or --lock/--nemesis, not both")
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if cells, err = matrix.ParseCells(f, file); err != nil {
			return nil, err
		}
		for i := range cells {
			cells[i].Args = append(cells[i].Args, extra...)
		}
		catalog.Resolve(cells)
	case locks != "":
		cells = catalog.Grid(splitList(locks), splitList(nems), extra)
	default:
		return nil, errors.New("no cells: give --cells FILE, or --lock a,b [--nemesis x,y]")
	}
	for _, c := range cells {
		if err := checkCell(c); err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.Name(), err)
		}
	}
	return cells, nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// checkCell checks the lock, nemesis and scenario a cell names, so that a
// typo is exit 3 at once, not an error in every run.
func checkCell(c matrix.Cell) error {
	var lock, nem, sc, ver, libVer string
	for i := 0; i < len(c.Args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(c.Args[i], "-"), "=")
		if !hasValue && i+1 < len(c.Args) {
			value = c.Args[i+1]
		}
		switch name {
		case "lock":
			lock = value
		case "nemesis":
			nem = value
		case "scenario":
			sc = value
		case "service-version":
			ver = value
		case "library-version":
			libVer = value
		}
	}
	if sc != "" {
		s, err := scenarios.Find(sc)
		if err != nil {
			return err
		}
		if lock == "" {
			for i := 0; i+1 < len(s.Args); i++ {
				if s.Args[i] == "--lock" {
					lock = s.Args[i+1]
				}
			}
		}
	}
	if lock != "" {
		d, err := workloads.FindDesign(lock)
		if err != nil {
			return err
		}
		if err := checkVersion(d, ver); err != nil {
			return err
		}
		if err := checkLibraryVersion(d, libVer); err != nil {
			return err
		}
	}
	if nem != "" {
		if _, err := schedule.Parse(nem); err != nil {
			return err
		}
	}
	return nil
}
