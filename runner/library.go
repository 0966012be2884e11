package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lockcheck/lockcheck/libraries"
	"github.com/lockcheck/lockcheck/workloads"
)

// ResolveLibrary finds the Go client library design d wraps and the
// version t asks its workers to link (--library-version, canonical: "" for
// the pinned one), refusing a version for a design that wraps no Go
// library lockcheck builds, one that is no version of its library, or one
// for workers someone else starts (--worker-cmd). check matrix calls it
// on every cell before any run.
func ResolveLibrary(t Test, d workloads.Design) (libraries.Library, string, error) {
	if d.Library == "" {
		if t.LibraryVersion != "" {
			return libraries.Library{}, "", fmt.Errorf("--library-version %s: design %s wraps no Go client library lockcheck can link at another version (designs that do: %s)",
				t.LibraryVersion, d.Name, strings.Join(workloads.LibraryDesigns(""), ", "))
		}
		return libraries.Library{}, "", nil
	}
	lib, err := libraries.Find(d.Library)
	if err != nil {
		return libraries.Library{}, "", fmt.Errorf("design %s: %w", d.Name, err)
	}
	if t.LibraryVersion == "" {
		return lib, "", nil
	}
	if len(t.WorkerCmd) > 0 {
		return libraries.Library{}, "", fmt.Errorf("--library-version %s: goes with lockcheck's own workers, not --worker-cmd", t.LibraryVersion)
	}
	v, err := lib.Canonical(t.LibraryVersion)
	if err != nil {
		return libraries.Library{}, "", err
	}
	return lib, v, nil
}

// workerBinary returns the binary the plan's workers run `worker` from:
// this one, or, for a library version of its own, a lockcheck built with
// the library at that version (built first when the cache has none;
// progress to log).
func (p *Plan) workerBinary(ctx context.Context, log io.Writer) (string, error) {
	if p.LibraryVersion != "" && p.LibraryVersion != p.Library.Pinned() {
		path, err := libraries.Worker(ctx, p.Library, p.LibraryVersion, log)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", p.Library.Name, p.LibraryVersion, err)
		}
		p.worker = path
		return path, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this binary for the worker command: %w", err)
	}
	p.worker = exe
	return exe, nil
}

// libraryLinked is the version of the design's library the workers link,
// read from the worker binary, for test.json; "" for a design with none
// or workers of another command.
func (p *Plan) libraryLinked() string {
	if len(p.Library.Modules) == 0 || p.worker == "" {
		return ""
	}
	return p.Library.Linked(p.worker)
}
