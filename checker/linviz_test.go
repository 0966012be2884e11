package checker

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// TestLinearizabilityPage checks linearizability.html for a golden
// nonlinearizable history (redis-set-px under a pause of process 3): its
// rows are named by the processes the history uses, not Porcupine's rows
// 0-1, and it has a time axis in the run's seconds.
func TestLinearizabilityPage(t *testing.T) {
	h, err := history.ReadFile(filepath.Join("testdata", "histories", "real-redis-set-px-pause", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	page := visualizedPage(t, NewMutex(Options{}).Check(context.Background(), h))
	for _, want := range []string{
		// The rows' labels, and the table mapping rows to processes.
		`const lockcheckRows = ["process 3","process 4"]`,
		`<td style="padding-right:1em">process 3</td><td style="padding-right:1em">2</td><td>from 2.86 s to 5.89 s</td>`,
		`<td style="padding-right:1em">process 4</td>`,
		// The time axis: the run's seconds, in half-second steps over
		// 2.85 s to 5.89 s.
		`"Tag":"time (s)","Start":0,`,
		`"Description":"2.5–3.0 s"`,
		`"Description":"4.5–5.0 s"`,
		`"Description":"5.5–6.0 s"`,
		`"Description":"pause of process 3"`,
		"<title>Lock k0: operations that cannot be put in one order (lockcheck)</title>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// Porcupine's script was patched where it writes a row's number and
	// the tooltip's times: a Porcupine whose script changed fails here.
	if n := strings.Count(page, "i < realClients ? lockcheckRow(i) :"); n != 2 {
		t.Errorf("%d of 2 row labels patched", n)
	}
	for _, old := range []string{jsRowWidth, jsRowLabel, jsCallTimes} {
		if strings.Contains(page, old) {
			t.Errorf("unpatched: %s", old)
		}
	}
	if !strings.Contains(page, "lockcheckSecs(callTime)") {
		t.Error("tooltips not in seconds")
	}
}

// TestTimeAxis checks the time axis's boxes: back to back, covering the
// span, at most maxTicks+1 of them, labelled with the decimals their step
// needs.
func TestTimeAxis(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	for _, tc := range []struct {
		name        string
		from, to    time.Duration
		first, last string
	}{
		{"seconds", s(2.85), s(5.89), "2.5–3.0 s", "5.5–6.0 s"},
		{"one instant", s(4.77), s(4.77), "4.770–4.771 s", "4.770–4.771 s"},
		{"ten ms", s(4.773), s(4.783), "4.773–4.774 s", "4.782–4.783 s"},
		{"minutes", 0, s(300), "0–50 s", "250–300 s"},
		{"whole seconds", s(1), s(9), "1–2 s", "8–9 s"},
		{"reversed", s(9), s(1), "1–2 s", "8–9 s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ax := timeAxis(tc.from, tc.to)
			if len(ax) == 0 || len(ax) > maxTicks+1 {
				t.Fatalf("%d boxes", len(ax))
			}
			if ax[0].Description != tc.first || ax[len(ax)-1].Description != tc.last {
				t.Errorf("boxes %q to %q, want %q to %q", ax[0].Description, ax[len(ax)-1].Description, tc.first, tc.last)
			}
			lo, hi := min(tc.from, tc.to), max(tc.from, tc.to)
			if ax[0].Start > int64(lo) || ax[len(ax)-1].End < int64(hi) {
				t.Errorf("boxes cover %d to %d, not %v to %v", ax[0].Start, ax[len(ax)-1].End, lo, hi)
			}
			for i, a := range ax {
				if a.Tag != timeTag || a.End <= a.Start || (i > 0 && a.Start != ax[i-1].End) {
					t.Errorf("box %d: %+v", i, a)
				}
			}
		})
	}
}

// visualizedPage returns the linearizability page r draws; the test fails
// when r draws none.
func visualizedPage(t *testing.T, r Result) string {
	t.Helper()
	if r.Visualize == nil {
		t.Fatalf("no visualization (valid = %v)", r.Valid)
	}
	var buf bytes.Buffer
	if err := r.Visualize(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
