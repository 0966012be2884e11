package bugs

import (
	"strings"
	"testing"
)

// TestLibrary: every report has an id, a title, rows numbered 1.. with no
// gap, runs with commands and measured rates, and at most one fixed run.
func TestLibrary(t *testing.T) {
	all := All()
	if len(all) < 14 {
		t.Fatalf("%d reports, want at least the 14 bugs.md had", len(all))
	}
	for i, b := range all {
		if b.Order != i+1 {
			t.Errorf("%s: row %d at place %d: the rows have a gap", b.ID, b.Order, i+1)
		}
		if b.Title == "" || b.What == "" || strings.ContainsAny(b.ID, " _/") {
			t.Errorf("%s: want an id of words and dashes, a title and what it shows", b.ID)
		}
		fixed := 0
		for _, r := range b.Runs {
			if r.Report == "" || r.Component == "" || r.Invalid == "" || r.FixedIn == "" {
				t.Errorf("%s: run %v: report, component, measured rate and fixed-in are required", b.ID, r.Args)
			}
			if !strings.HasSuffix(strings.Fields(r.Invalid)[0], "/10") {
				t.Errorf("%s: rate %q: want N/10", b.ID, r.Invalid)
			}
			if r.Fixed {
				fixed++
			}
		}
		if fixed > 1 || (fixed == 1 && b.Runs[0].Fixed) {
			t.Errorf("%s: %d fixed runs (the first run is the broken one): want at most one, after it", b.ID, fixed)
		}
	}
}

// TestFind: a report by its id; a near miss is suggested.
func TestFind(t *testing.T) {
	b, err := Find("etcd-22082")
	if err != nil || b.Order != 14 || b.Broken().Args[1] != "etcd-unlock-retry" {
		t.Fatalf("Find(etcd-22082) = %+v, %v", b, err)
	}
	if _, ok := b.FixedRun(); ok {
		t.Error("etcd-22082 has no fixed release to run")
	}
	n, _ := Find("nats-4320")
	if f, ok := n.FixedRun(); !ok || !strings.Contains(f.Component, "2.15.2") {
		t.Errorf("nats-4320's fixed run: %+v, %v", f, ok)
	}
	if _, err := Find("etcd-2208"); err == nil || !strings.Contains(err.Error(), "etcd-22082") {
		t.Errorf("Find(etcd-2208): %v, want the closest id suggested", err)
	}
}

// TestRowLabel: the first run is the row's number, the others b, c, ...
func TestRowLabel(t *testing.T) {
	b := Bug{Order: 7}
	for i, want := range []string{"7", "7b", "7c"} {
		if got := b.RowLabel(i); got != want {
			t.Errorf("RowLabel(%d) = %q, want %q", i, got, want)
		}
	}
}

// TestRegisterRefuses: a report with no run, a run with no command, or an
// id or row taken is a programming error.
func TestRegisterRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		b    Bug
	}{
		{"no run", Bug{ID: "x-1", Order: 901}},
		{"no command", Bug{ID: "x-2", Order: 902, Runs: []Run{{Component: "c"}}}},
		{"id taken", Bug{ID: "etcd-22082", Order: 903, Runs: []Run{{Args: []string{"--lock", "redis-set-px"}}}}},
		{"row taken", Bug{ID: "x-4", Order: 1, Runs: []Run{{Args: []string{"--lock", "redis-set-px"}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("register(%+v) did not panic", c.b)
				}
			}()
			register(c.b)
		})
	}
}
