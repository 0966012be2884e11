package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/matrix"
)

// mergeFlags are the flags `check matrix merge` takes (true: with a
// value, as for splitOwnFlags); every other word is
// a shard's matrix directory.
var mergeFlags = map[string]bool{"store": true, "junit": true, "json": true, "markdown": true, "h": false, "help": false}

// cmdMatrixMerge runs `check matrix merge DIR...` (also spelled `check
// matrix --collect DIR...`): it reads the stored matrices of the shards of
// one matrix (`check matrix --shard I/N`), judges their runs as the one
// matrix that ran them all, and prints, writes and stores it as `check
// matrix` does. A run the plan expects that no shard has, or whose run
// directory is gone, is missing: its cell misses and the merge exits 1.
// Exit 3 when the directories are not shards of one matrix.
func cmdMatrixMerge(args []string, stdout, stderr io.Writer) (int, error) {
	own, dirs := splitOwnFlags(args, mergeFlags)
	fs := newFlags("matrix merge", stderr)
	store := fs.String("store", "store", "store directory: the merged matrix goes to store/matrix/<time>/matrix.json, its runs linked where the shards stored them")
	junit := fs.String("junit", "", "write JUnit XML here")
	jsonOut := fs.String("json", "", "write the merged matrix as JSON here")
	md := fs.String("markdown", "", "write a markdown table here")
	if help, err := parseFlags(fs, own); help || err != nil {
		if help {
			fmt.Fprintln(stdout, "check matrix merge [flags] DIR...: DIR is each shard's store/matrix/<time>/ (or its matrix.json); also spelled check matrix --collect")
		}
		return helpOrError(help, err)
	}
	if len(dirs) == 0 {
		return exitError, errors.New("matrix merge: give the shards' matrix directories (store/matrix/<time>/ of each `check matrix --shard I/N`)")
	}
	for flag, path := range map[string]string{"junit": *junit, "json": *jsonOut, "markdown": *md} {
		if err := checkOutputPath(path); err != nil {
			return exitError, fmt.Errorf("--%s: %w", flag, err)
		}
	}
	parts := make([]matrix.Part, 0, len(dirs))
	for _, d := range dirs {
		p, err := matrix.LoadPart(d)
		if err != nil {
			return exitError, err
		}
		parts = append(parts, p)
	}
	m, err := matrix.Merge(parts, *store)
	if err != nil {
		return exitError, fmt.Errorf("matrix merge: %w", err)
	}
	m.Command = append([]string{"check", "matrix", "merge"}, args...)
	dir, err := matrix.NewDir(*store, matrix.StoreDir, time.Now())
	if err != nil {
		return exitError, err
	}
	m.Dir = filepath.ToSlash(strings.TrimPrefix(dir, filepath.Clean(*store)+string(filepath.Separator)))
	fmt.Fprintf(stderr, "matrix merge: %d shards of %d cells x seeds %s\n", len(parts), len(m.Cells), m.Seeds)
	missing := m.MissingRuns()
	for _, line := range missing {
		fmt.Fprintf(stderr, "missing: %s\n", line)
	}
	code, err := writeMatrix(m, dir, matrixOutputs{store: *store, junit: *junit, json: *jsonOut, markdown: *md}, stdout)
	if len(missing) > 0 && err == nil {
		fmt.Fprintf(stdout, "matrix merge: %d runs missing; a missing run is never met\n", len(missing))
	}
	return code, err
}

// cmdMatrixDiff runs `check matrix diff A B`: it compares two stored
// matrices cell by cell and exits 1 when a cell that met its expectation
// in A misses it in B, naming every such cell; 0 otherwise (other changes
// are printed too); 3 when a matrix cannot be read.
func cmdMatrixDiff(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("matrix diff", stderr)
	if help, err := parseFlags(fs, args); help || err != nil {
		if help {
			fmt.Fprintln(stdout, "check matrix diff A B: A and B are stored matrices (store/matrix/<time>/ or its matrix.json), A the older; exit 1 when a cell that met in A misses in B")
		}
		return helpOrError(help, err)
	}
	if fs.NArg() != 2 {
		return exitError, fmt.Errorf("matrix diff: want two stored matrices, A (before) and B (after); got %d", fs.NArg())
	}
	var ms [2]*matrix.Matrix
	for i, p := range fs.Args() {
		pt, err := matrix.LoadPart(p)
		if err != nil {
			return exitError, err
		}
		ms[i] = pt.M
	}
	changes := matrix.Diff(ms[0], ms[1])
	for _, c := range changes {
		fmt.Fprintln(stdout, c)
	}
	news := matrix.NewMisses(changes)
	if len(news) > 0 {
		names := make([]string, len(news))
		for i, c := range news {
			names[i] = c.Cell
		}
		fmt.Fprintf(stdout, "matrix diff: %d cells met in %s and missed in %s: %s\n", len(news), fs.Arg(0), fs.Arg(1), strings.Join(names, "; "))
		return exitInvalid, nil
	}
	fmt.Fprintf(stdout, "matrix diff: no cell that met in %s missed in %s (%d changes)\n", fs.Arg(0), fs.Arg(1), len(changes))
	return exitValid, nil
}
