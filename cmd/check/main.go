package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/internal/heapbudget"
	"github.com/lockcheck/lockcheck/matrix"
)

// Exit codes.
const (
	exitValid       = 0
	exitInvalid     = 1
	exitUnknown     = 2
	exitError       = 3
	exitInterrupted = 130
)

const usage = `usage: check <command> [flags]

commands:
  run       run a test: check run --lock NAME [--nemesis none|pause|partition|kill|...[,...]] [--fencing] ...
            faults at lock events: --nemesis 'pause@grant+5ms:lease+1s' or --schedule FILE (docs/triggers.md)
            or a named story: check run --scenario NAME [--seed S] [--fencing]
  analyze   re-check a stored run: check analyze RUN_DIR
  list      list lock designs, scenarios and nemeses
  serve     browse stored runs: check serve [--store DIR] [--addr 127.0.0.1:8080] [--allow-remote]
  worker    serve the worker protocol on stdin/stdout (started by run)
  bench     measure harness overhead against a plain client loop
  matrix    run cells over seeds: check matrix --cells FILE | --lock a,b --nemesis x,y [--seeds 1..10] [--jobs 2]
            [--junit FILE] [--json FILE] [--markdown FILE] [--shard I/N] [run flags]; exit 1 when a cell misses its
            expectation. check matrix merge DIR... judges shards as one matrix (exit 1 for a missed or missing run);
            check matrix diff A B compares two stored matrices (exit 1 when a cell that met in A misses in B)
  repro     reproduction rate: check repro --scenario NAME | RUN_DIR [--count 5] [--failfast] [--same-seed] [--jobs J]
            [--seed BASE]; exit 1 when it reproduced, 0 when every run was valid, 2 not exercised or unknown, 3 errors
  replay    a stored run's fault schedule again: check replay RUN_DIR [--count 5] [--jobs J]; how often each of its
            anomaly kinds recurs; exit codes as repro's
  shrink    cut a failing run down: check shrink RUN_DIR [--count 10] [--rate 0.9] [--budget 15m] [--jobs 2]; the
            smallest case that still fails, its check run line and schedule file; exit 1 found, 2 not reproduced

  learn     a course on distributed locks, one failure at a time: check learn (the lessons) | check learn ID [--live]
            (a lesson: predict, its recorded run replayed or run live, the answer) | check learn --html DIR (web pages)

  conformance  check a worker against the protocol: check conformance [--worker-cmd CMD] [--lock NAME]; exit 1 naming
            each broken rule

exit codes: 0 valid, 1 invalid, 2 unknown or not exercised, 3 error, 130 interrupted
`

func main() {
	stop := startProfile(os.Args[1:])
	code := Main(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Main runs the command line args and returns the exit code. A panic of
// the command is an error (exit 3), told in one line, its stack written to
// a file (see internalError); -h or --help of any command is exit 0.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError
	}
	inv := &invocation{}
	defer func() {
		if p := recover(); p != nil {
			code = internalError(stderr, inv.dir, args, p, debug.Stack())
		}
	}()
	out := &errOutput{Writer: stderr, stdout: stdout}
	code, err := dispatch(inv, args, stdout, out)
	if err != nil {
		fmt.Fprintf(stderr, "check: %s\n", oneLine(err.Error()))
	}
	if out.help && err == nil && code == exitError {
		// A command that printed its usage for -h or --help succeeded,
		// whatever it returned.
		code = exitValid
	}
	return code
}

// invocation is what Main learns while a command runs, for a panic's
// report: the run directory, once the command knows it.
type invocation struct {
	dir string
}

// errOutput is the standard error Main hands a command; parseFlags marks
// it when it printed the command's usage for -h or --help.
type errOutput struct {
	io.Writer
	help bool
	// stdout is where a command's usage goes for -h or --help.
	stdout io.Writer
}

// dispatch runs the command args[0].
func dispatch(inv *invocation, args []string, stdout, stderr io.Writer) (int, error) {
	var code int
	var err error
	if slices.Contains([]string{"run", "matrix", "repro", "replay", "shrink"}, args[0]) {
		// The commands that record histories keep their heap within a
		// budget (a long run's history is most of a gigabyte).
		defer heapbudget.Start()()
	}
	switch args[0] {
	case "run":
		code, err = cmdRun(args[1:], stdout, stderr)
	case "analyze":
		code, err = cmdAnalyze(inv, args[1:], stdout, stderr)
	case "list":
		code, err = cmdList(args[1:], stdout, stderr)
	case "worker":
		code, err = cmdWorker(args[1:], stderr)
	case "bench":
		code, err = cmdBench(args[1:], stdout, stderr)
	case "serve":
		code, err = cmdServe(args[1:], stdout, stderr)
	case "matrix":
		code, err = cmdMatrix(args[1:], stdout, stderr)
	case "repro":
		code, err = cmdRepro(args[1:], stdout, stderr)
	case "replay":
		code, err = cmdReplay(args[1:], stdout, stderr)
	case "shrink":
		code, err = cmdShrink(args[1:], stdout, stderr)
	case "conformance":
		code, err = cmdConformance(args[1:], stdout, stderr)
	case "learn":
		code, err = cmdLearn(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitValid, nil
	default:
		err = fmt.Errorf("unknown command %q (commands: run, analyze, list, serve, worker, bench, matrix, repro, replay, shrink, conformance, learn)", args[0])
		code = exitError
	}
	return code, err
}

// internalError reports panic p of the command args: one line on stderr,
// and the stack in a file of the run directory dir, or of os.TempDir()
// when dir is "" or cannot be written. It returns exitError: a panic is
// never a verdict.
func internalError(stderr io.Writer, dir string, args []string, p any, stack []byte) int {
	text := fmt.Sprintf("check %s\npanic: %v\n\n%s", strings.Join(args, " "), p, stack)
	var path string
	var err error
	for _, d := range []string{dir, os.TempDir()} {
		if d == "" {
			continue
		}
		if path, err = writeStack(d, text); err == nil {
			break
		}
	}
	where := "stack in " + path
	if err != nil {
		where = "stack not written: " + err.Error()
	}
	fmt.Fprintf(stderr, "check: internal error: %s; %s\n", oneLine(fmt.Sprint(p)), oneLine(where))
	return exitError
}

// writeStack writes text to a new check-panic-*.txt file in dir and
// returns its path.
func writeStack(dir, text string) (string, error) {
	f, err := os.CreateTemp(dir, "check-panic-*.txt")
	if err != nil {
		return "", fmt.Errorf("create stack file: %w", err)
	}
	_, err = io.WriteString(f, text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("check "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args. A bad flag is one line naming it and pointing to
// --help (exit 3), never the whole usage; -h or --help prints the usage and
// returns help. Given a flagCollector as output, it hands it fs and
// returns help without parsing, so that the command stops there.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	if c, ok := fs.Output().(*flagCollector); ok {
		// The command reference asks for the flag set (see flagSet).
		c.fs = fs
		return true, nil
	}
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		w := helpOut(out)
		fmt.Fprintf(w, "usage of %s:\n", fs.Name())
		if note := usageNotes[fs.Name()]; note != "" {
			fmt.Fprintf(w, "%s\n", note)
		}
		if takesRunFlags[fs.Name()] {
			fmt.Fprintf(w, "%s", runFlagList(fs))
		}
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
		markHelp(out)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s (see %s --help)", oneLine(flagHint(fs, err)), fs.Name())
	}
	return false, nil
}

// usageNotes is what a command's --help says before its flags, by the
// flag set's name, for a command whose usage the flags alone do not tell.
var usageNotes = map[string]string{
	"check matrix": "check matrix --cells FILE | --lock LOCKS --nemesis NEMESES [flags below] [check run flags]\n" +
		"  Every flag not below is a check run flag (check run --help), passed to every run.\n" +
		"  The cells file format and the verdicts: docs/matrix.md.",
	"check shrink": "check shrink RUN_DIR [flags below] [check run flags]\n" +
		"  Every flag not below is a check run flag (check run --help), passed to every try.",
}

// takesRunFlags are the commands whose --help lists the `check run` flags
// they pass on to every run.
var takesRunFlags = map[string]bool{"check matrix": true, "check shrink": true}

// runFlagList is the line of a command's --help that names the `check run`
// flags it passes on (those of its own set aside), wrapped.
func runFlagList(own *flag.FlagSet) string {
	run, err := flagSet("run")
	if err != nil {
		return ""
	}
	var names []string
	run.VisitAll(func(f *flag.Flag) {
		// Not its own, and not one it sets for every run itself
		// (--seed, --store, --quiet: matrix.CheckFlags refuses those).
		if own.Lookup(f.Name) == nil && matrix.CheckFlags([]string{"--" + f.Name + "=x"}) == nil {
			names = append(names, "--"+f.Name)
		}
	})
	var b strings.Builder
	line := "  check run flags it takes:"
	for _, n := range names {
		if len(line)+len(n)+2 > 100 {
			b.WriteString(line + "\n")
			line = "   "
		}
		line += " " + n
	}
	return b.String() + line + "\n"
}

// derivedFlags are flags whose zero value stands for a default derived
// from other flags: given explicitly, 0 is refused rather than replaced.
var derivedFlags = map[string]string{
	"acquire-timeout":  "leave it out for 2 x lease",
	"nemesis-duration": "leave it out for 3 x lease",
	"stock":            "leave it out for 100",
}

// checkGiven refuses an explicit 0 for a derived flag.
func checkGiven(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		v := f.Value.String()
		if why, ok := derivedFlags[f.Name]; ok && (v == "0" || v == "0s") {
			err = fmt.Errorf("--%s 0: want more than 0 (%s)", f.Name, why)
		}
	})
	return err
}

// helpOut is where a command prints the usage asked for with -h or
// --help: standard output, as for `check --help`, when stderr is Main's.
func helpOut(stderr io.Writer) io.Writer {
	if o, ok := stderr.(*errOutput); ok && o.stdout != nil {
		return o.stdout
	}
	return stderr
}

// markHelp tells Main, through its errOutput, that a command printed its
// usage for -h or --help.
func markHelp(w io.Writer) {
	if o, ok := w.(*errOutput); ok {
		o.help = true
	}
}

// noArgsHelp handles the arguments of a command that takes none: -h or
// --help prints usage and gives help; any other argument is an error.
func noArgsHelp(args []string, stderr io.Writer, usage string) (help bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprint(helpOut(stderr), usage)
		markHelp(stderr)
		return true, nil
	}
	return false, fmt.Errorf("unexpected argument %q", args[0])
}

// helpOrError is what a command returns when parseFlags says help (exit 0)
// or fails (exit 3).
func helpOrError(help bool, err error) (int, error) {
	if help {
		return exitValid, nil
	}
	return exitError, err
}

// verdictExit is the exit code of a checked result: its verdict's, or an
// error when a checker panicked (a crash is never a verdict).
func verdictExit(res checker.Result) (int, error) {
	if res.Panicked != "" {
		return exitError, fmt.Errorf("checker %s: the verdict is not to be trusted", res.Panicked)
	}
	return exitCode(res.Valid), nil
}

func exitCode(v checker.Validity) int {
	switch v {
	case checker.Valid:
		return exitValid
	case checker.Invalid:
		return exitInvalid
	}
	return exitUnknown
}

func verdictWord(v checker.Validity) string {
	switch v {
	case checker.Valid:
		return "valid"
	case checker.Invalid:
		return "invalid"
	}
	return "unknown"
}
