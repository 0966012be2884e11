package history

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
)

// StructureError is an op that makes a history impossible: no run of the
// harness records it, so no checker may judge the history.
type StructureError struct {
	// Pos is the op's position in the history, from 0.
	Pos int
	// Line is the op's line in the history file, from 1 (Pos + 1 for a
	// file with one op a line, as Encode and Recorder write it).
	Line int
	// Reason says what is impossible about the op.
	Reason string
}

// Error returns "line N: reason".
func (e *StructureError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// workerFs are the ops a worker process (Process >= 0) records: its
// operations, its retirement, and the lone events of its lock client.
var workerFs = []string{FAcquire, FRelease, FCS, FCrash, FEvent}

// isWorkerF reports whether f is a worker's op.
func isWorkerF(f string) bool { return slices.Contains(workerFs, f) }

// nemesisFs returns the ops of the nemesis process: the controller's stock
// ops, a server's exit, and the start and end op of every registered fault
// (RegisterFaultOps).
func nemesisFs() []string {
	return append([]string{FSeed, FFinal, FServerExit, FServerRelease}, faultFs()...)
}

// Validate checks that h's structure is one a run can record, before any
// checker reads it: every op has a known type and f (a worker op on a
// worker process, a nemesis op on NemesisProcess), every completion
// completes its process's open invocation of the same f no earlier than
// it, and no process invokes while an op of its own is open. Lone ops
// (FEvent, FServerExit, FServerRelease) are info ops with no invocation. An invocation
// left open at the end (an interrupted run) is allowed. The error is a
// *StructureError naming the first impossible op by its line, Pos + 1;
// ValidateFile names the line of a file with blank lines.
func Validate(h History) error {
	return validate(h, func(pos int) int { return pos + 1 })
}

// ValidateFile is Validate for the history h decoded from path, naming
// the lines of path, whose blank lines Decode skipped. The error starts
// with path.
func ValidateFile(path string, h History) error {
	err := Validate(h)
	if err == nil {
		return nil
	}
	if lines, lerr := opLines(path); lerr == nil && len(lines) >= len(h) {
		err = validate(h, func(pos int) int { return lines[pos] })
	}
	return fmt.Errorf("%s: %w", path, err)
}

// validate is Validate with line giving an op's line from its position.
func validate(h History, line func(pos int) int) error {
	open := make(map[int]int) // process -> position of its open invocation
	nfs := nemesisFs()        // once: it reads the fault registry
	for i := range h {
		op := &h[i]
		fail := func(format string, args ...any) error {
			return &StructureError{Pos: i, Line: line(i), Reason: fmt.Sprintf(format, args...)}
		}
		if err := checkOp(op, nfs); err != "" {
			return fail("%s", err)
		}
		if op.IsLone() {
			continue
		}
		j, isOpen := open[op.Process]
		if op.Type == Invoke {
			if isOpen {
				return fail("process %d invokes %s while its %s invoked on line %d is open", op.Process, op.F, h[j].F, line(j))
			}
			open[op.Process] = i
			continue
		}
		if !isOpen {
			return fail("process %d completes %s (%s) with no open invocation", op.Process, op.F, op.Type)
		}
		inv := &h[j]
		if inv.F != op.F {
			return fail("process %d completes %s but invoked %s on line %d", op.Process, op.F, inv.F, line(j))
		}
		if op.Time < inv.Time {
			return fail("process %d's %s completes at %s, before its invocation on line %d at %s", op.Process, op.F, op.Time, line(j), inv.Time)
		}
		delete(open, op.Process)
	}
	return nil
}

// checkOp returns what is wrong with op on its own, or "": nfs are the
// nemesis ops (nemesisFs).
func checkOp(op *Op, nfs []string) string {
	// Ifs, not the cases of a switch, so that coverage (and gremlins)
	// sees each condition run.
	if !op.Type.Valid() {
		return fmt.Sprintf("unknown type %q (want invoke, ok, fail or info)", op.Type)
	}
	if op.Time < 0 {
		return fmt.Sprintf("negative time %d", op.Time)
	}
	if op.Process < NemesisProcess {
		return fmt.Sprintf("invalid process %d", op.Process)
	}
	switch {
	case slices.Contains(workerFs, op.F):
		if op.IsNemesis() {
			return fmt.Sprintf("%s is a worker's op, recorded on a process from 0, not on the nemesis process %d", op.F, NemesisProcess)
		}
		if op.F == FEvent && op.Type != Info {
			return fmt.Sprintf("event op of type %s (an event is a lone info op)", op.Type)
		}
	case slices.Contains(nfs, op.F):
		if !op.IsNemesis() {
			return fmt.Sprintf("%s is a nemesis op, recorded on process %d, not on process %d", op.F, NemesisProcess, op.Process)
		}
		if op.F == FServerExit && op.Type != Info {
			return fmt.Sprintf("server-exit op of type %s (a server exit is a lone info op)", op.Type)
		}
		if op.F == FServerRelease && op.Type != Info {
			return fmt.Sprintf("server-release op of type %s (an observation is a lone info op)", op.Type)
		}
	default:
		return fmt.Sprintf("unknown f %q (worker ops: %s; nemesis ops: %s)", op.F,
			strings.Join(workerFs, ", "), strings.Join(nfs, ", "))
	}
	return ""
}

// opLines returns the line number, from 1, of each op of the history file
// at path: its non-blank lines, as Decode reads them.
func opLines(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			lines = append(lines, n)
		}
	}
	return lines, sc.Err()
}
