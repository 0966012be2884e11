package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/internal/suggest"
	"github.com/lockcheck/lockcheck/runner"
	"github.com/lockcheck/lockcheck/scenarios"
)

// flagHint is the flag package's error err with what helps: the flag a
// mistyped one most likely meant, and the form of a duration.
func flagHint(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if c := suggest.Closest(strings.TrimLeft(name, "-"), names); c != "" {
			msg += fmt.Sprintf("; did you mean --%s?", c)
		}
		return msg
	}
	// invalid value "10" for flag -time: parse error
	if _, rest, ok := strings.Cut(msg, " for flag -"); ok {
		name, _, _ := strings.Cut(rest, ":")
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, ok := g.Get().(time.Duration); ok {
					msg += " (a duration with its unit, such as 30s, 500ms or 2m)"
				}
			}
		}
	}
	return msg
}

// clockSeed is --seed: a number of 0 or more, or, left out, one taken
// from the clock. Its zero value prints no default in the usage, where an
// int flag's -1 would print one beside the words that say so.
type clockSeed struct {
	v   uint64
	set bool
}

// String returns the seed given, or "" when none was.
func (s *clockSeed) String() string {
	if s == nil || !s.set {
		return ""
	}
	return strconv.FormatUint(s.v, 10)
}

// Set parses a seed of 0 or more.
func (s *clockSeed) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return fmt.Errorf("want a whole number, 0 or more (leave it out for a seed from the clock)")
	}
	s.v, s.set = n, true
	return nil
}

// value returns the seed given, or one from the clock.
func (s *clockSeed) value() uint64 {
	if s.set {
		return s.v
	}
	return uint64(time.Now().UnixNano() % 1_000_000)
}

// scenarioNames lists the named scenarios for a usage line.
func scenarioNames() string {
	var names []string
	for _, sc := range scenarios.All() {
		names = append(names, sc.Name)
	}
	return strings.Join(names, ", ")
}

// analyzeTarget resolves check analyze's argument: a run directory, a
// history file (its directory is the run's), or a test's directory
// (store/NAME, whose runs are its subdirectories named by their start
// time), for its newest run that has a history.
func analyzeTarget(arg string) (dir, path string, err error) {
	st, err := os.Stat(arg)
	if err != nil {
		return "", "", err
	}
	if !st.IsDir() {
		return filepath.Dir(arg), arg, nil
	}
	dir = filepath.Clean(arg)
	path = filepath.Join(dir, "history.jsonl")
	if _, err := os.Stat(path); err == nil {
		return dir, path, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", "", err
	}
	// Run directories are named by their start time (20261126T181323), so
	// the newest sorts last.
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		run := filepath.Join(dir, e.Name())
		if e.IsDir() && e.Name() != "analysis" {
			if _, err := os.Stat(filepath.Join(run, "history.jsonl")); err == nil {
				return run, filepath.Join(run, "history.jsonl"), nil
			}
		}
	}
	return "", "", fmt.Errorf("%s: no history.jsonl here or in a run directory below it", dir)
}

// flagGiven reports whether the flag called name was on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// observeFlag defines --observe on fs: whether the run records the lock
// servers' own releases (runner.Test.NoObserve), on by default.
func observeFlag(fs *flag.FlagSet, t *runner.Test) {
	fs.Var(observeValue{t}, "observe", "record when the lock servers themselves release a lock (server-release ops, lost-lock windows); off (=false): none are recorded, and the verdict is the same")
}

// observeValue is --observe: a boolean flag that sets runner.Test.NoObserve
// to its opposite.
type observeValue struct{ t *runner.Test }

// String returns "true" unless the observer is off.
func (v observeValue) String() string {
	return strconv.FormatBool(v.t == nil || !v.t.NoObserve)
}

// Set parses true or false.
func (v observeValue) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	v.t.NoObserve = !on
	return nil
}

// IsBoolFlag lets --observe stand alone for --observe=true.
func (observeValue) IsBoolFlag() bool { return true }
