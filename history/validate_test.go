package history

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ops builds a history from "process type f time" lines, each op's Index
// its position; time is in microseconds.
func ops(t testing.TB, lines ...string) History {
	t.Helper()
	var h History
	for i, l := range lines {
		var op Op
		var us int64
		if _, err := fmt.Sscanf(l, "%d %s %s %d", &op.Process, &op.Type, &op.F, &us); err != nil {
			t.Fatalf("op %q: %v", l, err)
		}
		op.Index, op.Time, op.Key = i, time.Duration(us)*time.Microsecond, "k"
		h = append(h, op)
	}
	return h
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		h    []string
		// want is the error ("" when valid), line the line it names.
		want string
		line int
	}{
		{"empty", nil, "", 0},
		{"a cycle", []string{"0 invoke acquire 1", "0 ok acquire 2", "0 invoke cs 3", "0 ok cs 4", "0 invoke release 5", "0 ok release 6"}, "", 0},
		{"completion at its invocation's time", []string{"0 invoke acquire 1", "0 fail acquire 1"}, "", 0},
		{"interleaved processes", []string{"0 invoke acquire 1", "1 invoke acquire 2", "1 ok acquire 3", "0 info acquire 4", "0 invoke crash 5", "0 info crash 5"}, "", 0},
		{"open at the end", []string{"0 invoke acquire 1", "0 ok acquire 2", "0 invoke cs 3"}, "", 0},
		{"events while an op is open", []string{"0 invoke acquire 1", "0 info event 2", "0 info event 2", "0 ok acquire 3", "3 info event 0"}, "", 0},
		{"nemesis and stock ops", []string{"-1 invoke seed 0", "-1 ok seed 1", "-1 invoke pause 2", "-1 info pause 3", "-1 invoke resume 4",
			"-1 info resume 5", "-1 invoke failover 6", "-1 info failover 7", "-1 invoke heal 8", "-1 info heal 9", "-1 invoke final 10", "-1 fail final 11"}, "", 0},
		{"every nemesis op", nil, "", 0}, // filled below

		{"completion before its invocation", []string{"0 invoke acquire 1", "1 invoke acquire 6000", "1 ok acquire 500"},
			"process 1's acquire completes at 500µs, before its invocation on line 2 at 6ms", 3},
		{"nemesis completion before its invocation", []string{"-1 invoke pause 9", "-1 info pause 8"}, "process -1's pause completes at 8µs", 2},
		{"completion with no open invocation", []string{"0 invoke acquire 1", "0 ok acquire 2", "0 ok acquire 3"},
			"process 0 completes acquire (ok) with no open invocation", 3},
		{"completion of another process's op", []string{"0 invoke acquire 1", "1 ok acquire 2"}, "process 1 completes acquire (ok) with no open invocation", 2},
		{"two open invocations", []string{"0 invoke acquire 1", "0 ok acquire 2", "0 invoke cs 3", "0 invoke release 4"},
			"process 0 invokes release while its cs invoked on line 3 is open", 4},
		{"two open nemesis invocations", []string{"-1 invoke pause 1", "-1 invoke kill 2"}, "process -1 invokes kill while its pause invoked on line 1 is open", 2},
		{"completes another f", []string{"0 invoke acquire 1", "0 ok release 2"}, "process 0 completes release but invoked acquire on line 1", 2},
		{"unknown f", []string{"0 invoke acquire 1", "0 ok acquire 2", "0 invoke write 3"}, `unknown f "write" (worker ops: acquire, release, cs, crash, event; nemesis ops: seed, final, server-exit, server-release, clock,`, 3},
		{"unknown type", []string{"0 done acquire 1"}, `unknown type "done"`, 1},
		{"negative time", []string{"0 invoke acquire -1"}, "negative time -1000", 1},
		{"invalid process", []string{"-2 invoke acquire 1"}, "invalid process -2", 1},
		{"event of type invoke", []string{"0 invoke event 1"}, "event op of type invoke (an event is a lone info op)", 1},
		{"a server exit", []string{"-1 invoke pause 1", "-1 info server-exit 2", "-1 info pause 3", "0 invoke acquire 4", "-1 info server-exit 5"}, "", 0},
		{"server exit of type invoke", []string{"-1 invoke server-exit 1"}, "server-exit op of type invoke (a server exit is a lone info op)", 1},
		{"server exit on a worker", []string{"0 info server-exit 1"}, "server-exit is a nemesis op, recorded on process -1, not on process 0", 1},
		{"worker op on the nemesis process", []string{"-1 invoke acquire 1"}, "acquire is a worker's op, recorded on a process from 0, not on the nemesis process -1", 1},
		{"nemesis op on a worker", []string{"2 invoke pause 1"}, "pause is a nemesis op, recorded on process -1, not on process 2", 1},
		{"the first impossible op", []string{"0 ok acquire 1", "0 invoke write 2"}, "process 0 completes acquire (ok) with no open invocation", 1},
	}
	for _, f := range nemesisFs() {
		if f == FServerExit || f == FServerRelease { // lone ops: see "a server exit", TestServerReleaseValidate
			continue
		}
		tests[7].h = append(tests[7].h, "-1 invoke "+f+" 1", "-1 info "+f+" 2")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := ops(t, tt.h...)
			err := Validate(h)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				if _, err := h.Pairs(); err != nil {
					t.Fatalf("Validate accepted what Pairs refuses: %v", err)
				}
				return
			}
			var se *StructureError
			if !errors.As(err, &se) {
				t.Fatalf("Validate: %v (%T), want a *StructureError", err, err)
			}
			if want := fmt.Sprintf("line %d: %s", tt.line, tt.want); !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("Validate:\n %s\nwant it to start with\n %s", err, want)
			}
			if se.Pos != tt.line-1 || se.Line != tt.line {
				t.Fatalf("error at position %d line %d, want %d and %d", se.Pos, se.Line, tt.line-1, tt.line)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line", err)
			}
		})
	}
}

// TestValidateFile names the lines of a file whose blank lines Decode
// skipped, for the op at fault and the invocation it names.
func TestValidateFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, h History, blank bool) string {
		var buf bytes.Buffer
		if err := Encode(&buf, h); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if blank {
			b = bytes.ReplaceAll(b, []byte("\n"), []byte("\n\n  \n"))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	bad := ops(t, "0 invoke acquire 5", "0 ok acquire 4")
	good := ops(t, "0 invoke acquire 5", "0 ok acquire 6")
	tests := []struct {
		name  string
		h     History
		blank bool
		want  string
	}{
		{"one op a line", bad, false, "plain: line 2: process 0's acquire completes at 4µs, before its invocation on line 1 at 5µs"},
		{"blank lines", bad, true, "blank: line 4: process 0's acquire completes at 4µs, before its invocation on line 1 at 5µs"},
		{"valid", good, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "plain"
			if tt.blank {
				name = "blank"
			}
			path := write(name, tt.h, tt.blank)
			h, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			err = ValidateFile(path, h)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("ValidateFile: %v, want nil", err)
			case tt.want != "" && (err == nil || err.Error() != filepath.Join(dir, tt.want)):
				t.Fatalf("ValidateFile: %v, want %s", err, filepath.Join(dir, tt.want))
			}
		})
	}
	// A file gone since it was read still gives the error, with positions.
	gone := filepath.Join(dir, "gone")
	if err := ValidateFile(gone, bad); err == nil || err.Error() != gone+": line 2: process 0's acquire completes at 4µs, before its invocation on line 1 at 5µs" {
		t.Fatalf("ValidateFile of a missing file: %v", err)
	}
}

// TestValidateStoredHistories checks that every history stored as test
// data in the repository, golden histories of real runs included, is
// one Validate accepts: it refuses no legal history.
func TestValidateStoredHistories(t *testing.T) {
	roots, err := filepath.Glob(filepath.Join("..", "*", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	roots = append(roots, filepath.Join("..", "cmd", "check", "testdata"))
	n := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
				return err
			}
			h, err := ReadFile(path)
			if err != nil {
				return nil // a test's deliberately malformed file
			}
			n++
			if err := ValidateFile(path, h); err != nil {
				t.Errorf("stored history refused: %v", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 30 {
		t.Fatalf("validated %d stored histories, want the 30 or more under */testdata", n)
	}
}

// FuzzValidate checks that Validate never panics on a decoded history,
// that its error is one line naming the first impossible op, and that a
// history it accepts pairs.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k"}` + "\n" +
		`{"index":1,"time":2,"process":0,"type":"ok","f":"acquire","key":"k","value":{"token":3,"owner":"a"}}` + "\n"))
	f.Add([]byte(`{"index":0,"time":7000,"process":1,"type":"invoke","f":"acquire","key":"k"}` + "\n" +
		`{"index":1,"time":500,"process":1,"type":"ok","f":"acquire","key":"k"}` + "\n"))
	f.Add([]byte(`{"index":0,"time":1,"process":0,"type":"ok","f":"cs"}` + "\n"))
	f.Add([]byte(`{"index":0,"time":1,"process":0,"type":"invoke","f":"cs"}` + "\n" + `{"index":1,"time":2,"process":0,"type":"invoke","f":"cs"}` + "\n"))
	f.Add([]byte(`{"index":0,"time":1,"process":-1,"type":"invoke","f":"pause"}` + "\n" + `{"index":1,"time":1,"process":-1,"type":"info","f":"pause"}` + "\n" +
		`{"index":2,"time":3,"process":2,"type":"info","f":"event"}` + "\n" + `{"index":3,"time":4,"process":0,"type":"invoke","f":"read"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		err = Validate(h)
		if err == nil {
			pairs, perr := h.Pairs()
			if perr != nil {
				t.Fatalf("Validate accepted what Pairs refuses: %v", perr)
			}
			for _, p := range pairs {
				if p.Complete != nil && p.Complete.Time < p.Invoke.Time {
					t.Fatalf("Validate accepted op %d completing before its invocation", p.Complete.Index)
				}
			}
			return
		}
		var se *StructureError
		if !errors.As(err, &se) {
			t.Fatalf("error %v is a %T, not a *StructureError", err, err)
		}
		if se.Pos < 0 || se.Pos >= len(h) || se.Line != se.Pos+1 {
			t.Fatalf("error at position %d line %d in a history of %d ops", se.Pos, se.Line, len(h))
		}
		if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), fmt.Sprintf("line %d: ", se.Line)) {
			t.Fatalf("error %q is not one line starting with its line", err)
		}
		if perr := Validate(h[:se.Pos]); perr != nil {
			t.Fatalf("the ops before the impossible one are refused too: %v", perr)
		}
	})
}

// TestValidateKnowsEveryF checks that every op name this package declares
// (an untyped string constant F...) is one Validate accepts, so that a new op name
// cannot be refused by a Validate nobody told about it.
func TestValidateKnowsEveryF(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	known := append(append([]string(nil), workerFs...), nemesisFs()...)
	n := 0
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !strings.HasPrefix(name.Name, "F") || vs.Type != nil || i >= len(vs.Values) {
							continue
						}
						lit, ok := vs.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						n++
						f, _ := strconv.Unquote(lit.Value)
						if !slices.Contains(known, f) {
							t.Errorf("op name %s = %q is not one Validate knows", name.Name, f)
						}
					}
				}
			}
		}
	}
	if n != len(known) {
		t.Errorf("found %d op name constants, Validate knows %d names", n, len(known))
	}
}

// TestRegisteredFaultOps registers a fault from test code and checks that
// Validate accepts its ops on the nemesis process, Faults pairs them (from
// the invoke when the fault says so), and EndOf and ClassOf know it; a
// conflicting registration, or one that reuses a worker's op name, panics.
func TestRegisteredFaultOps(t *testing.T) {
	RegisterFaultOps(FaultOps{Start: "toy-strike", End: "toy-undo", FromInvoke: true, Class: ClassNetwork})
	RegisterFaultOps(FaultOps{Start: "toy-strike", End: "toy-undo", FromInvoke: true, Class: ClassNetwork}) // again, the same: fine
	h := ops(t, "0 invoke acquire 1", "0 ok acquire 2", "-1 invoke toy-strike 3", "-1 info toy-strike 4",
		"-1 invoke toy-undo 5", "-1 info toy-undo 6")
	if err := Validate(h); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	fs := h.Faults()
	if len(fs) != 1 || fs[0].F != "toy-strike" || fs[0].Start != h[2].Time || fs[0].End != h[5].Time {
		t.Errorf("Faults: %+v, want one toy-strike from its invoke (%s) to %s", fs, h[2].Time, h[5].Time)
	}
	if end, ok := EndOf("toy-strike"); !ok || end != "toy-undo" {
		t.Errorf("EndOf: %q %v", end, ok)
	}
	if c := ClassOf("toy-strike"); c != ClassNetwork {
		t.Errorf("ClassOf: %q", c)
	}
	if c := ClassOf("toy-undo"); c != ClassOther {
		t.Errorf("ClassOf of an end op: %q, want other", c)
	}
	for _, bad := range []FaultOps{
		{Start: "toy-strike", End: "toy-other"},
		{Start: FAcquire, End: "toy-x"},
		{Start: "toy-y", End: ""},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterFaultOps(%+v) did not panic", bad)
				}
			}()
			RegisterFaultOps(bad)
		}()
	}
}
