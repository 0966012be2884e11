package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Porcupine's visualization (linearizability.html) numbers its rows from 0
// by ClientId and spaces events evenly instead of to time scale. The
// checkers renumber processes to rows 0..n-1 (verbose), so the page is
// dressed here to speak the report's language:
//
//   - each row is labelled with its process ("process 6"), by patching the
//     two places Porcupine's script writes a row's number, and a table above
//     the drawing maps rows to processes and their times in any case;
//   - a "time (s)" row of back-to-back boxes, one per step of the run's
//     clock (a second, or a round step that gives at most maxTicks boxes),
//     is drawn under the processes as Porcupine annotations: Porcupine
//     places them in time order among the operations, so a box above
//     "4–5 s" was in flight during that second, though the widths are not
//     to scale;
//   - a box's tooltip gives its call and return in seconds of the run
//     instead of nanoseconds.

// timeTag is the tag of the time-axis row; Porcupine draws tag rows in
// lexicographic order under the processes, and "time (s)" sorts after
// "nemesis".
const timeTag = "time (s)"

// maxTicks bounds the boxes of the time-axis row.
const maxTicks = 12

// tickStep returns the round step (1, 2 or 5 times a power of ten) that cuts
// [from, to] into at most maxTicks pieces.
func tickStep(from, to time.Duration) time.Duration {
	length := max(to-from, time.Millisecond)
	step := time.Millisecond
	for _, unit := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second, 100 * time.Second, 1000 * time.Second} {
		for _, m := range []time.Duration{1, 2, 5} {
			step = m * unit
			if length/step < maxTicks {
				return step
			}
		}
	}
	return step
}

// tickLabel renders a boundary of the time axis with as few decimals as
// step needs: "4", "4.5", "4.25".
func tickLabel(t, step time.Duration) string {
	decimals := 0
	for s := step; s < time.Second; s *= 10 {
		decimals++
	}
	return strconv.FormatFloat(t.Seconds(), 'f', decimals, 64)
}

// timeAxis returns the annotations of the time-axis row over [from, to]:
// back-to-back boxes at round steps of the run's clock, labelled "4–5 s".
func timeAxis(from, to time.Duration) []porcupine.Annotation {
	if to < from {
		from, to = to, from
	}
	step := tickStep(from, to)
	first := from - from%step
	if from < 0 && from%step != 0 {
		first -= step
	}
	var out []porcupine.Annotation
	for i, t := 0, first; t < to || i == 0; i, t = i+1, t+step {
		bg := "#eceff1"
		if i%2 == 1 {
			bg = "#cfd8dc"
		}
		out = append(out, porcupine.Annotation{
			Tag:             timeTag,
			Start:           int64(t),
			End:             int64(t + step),
			Description:     tickLabel(t, step) + "–" + tickLabel(t+step, step) + " s",
			Details:         "the run's clock from " + secs(t) + " to " + secs(t+step) + ", as in the report",
			BackgroundColor: bg,
		})
	}
	return out
}

// vizRow is one row of the visualization: the process whose operations it
// draws, and when they were called and answered.
type vizRow struct {
	row, proc int
	ops       int
	from, to  time.Duration
	// open is set when one of the ops was never answered.
	open bool
}

// inputKey returns the lock key of a model input, or "".
func inputKey(in any) string {
	switch in := in.(type) {
	case *mutexOp:
		return in.key
	case *csOp:
		return in.key
	}
	return ""
}

// vizRows maps the visualization's rows back to processes, from the ops'
// inputs (which keep the real process numbers), lists the lock keys, and
// reports whether the ops are the protected register's critical sections
// rather than lock operations.
func vizRows(parts [][]porcupine.Operation) (rows []vizRow, keys []string, register bool) {
	by := make(map[int]*vizRow)
	for _, part := range parts {
		for _, op := range part {
			in, ok := op.Input.(linInput)
			if !ok {
				continue
			}
			if _, ok := op.Input.(*csOp); ok {
				register = true
			}
			if k := inputKey(op.Input); k != "" && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			r := by[op.ClientId]
			if r == nil {
				r = &vizRow{row: op.ClientId, proc: in.operation().ClientId, from: time.Duration(op.Call), to: time.Duration(op.Call)}
				by[op.ClientId] = r
			}
			r.ops++
			r.from = min(r.from, time.Duration(op.Call))
			if op.Return == math.MaxInt64 {
				r.open = true
			} else {
				r.to = max(r.to, time.Duration(op.Return))
			}
		}
	}
	rows = make([]vizRow, 0, len(by))
	for _, r := range by {
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b vizRow) int { return a.row - b.row })
	return rows, keys, register
}

// Porcupine's script, as v1.3.1 writes it: the two places that write a
// row's number, and the tooltip's call and return times.
const (
	jsRowWidth  = "i < realClients ? i.toString() :"
	jsRowLabel  = "i < realClients ? i :"
	jsCallTimes = "'<br><br>Call: ' + callTime + '<br><br>Return: ' + returnTime"
)

// dress rewrites Porcupine's page for rows: a title and a table that name
// the lock and the processes, rows labelled "process N", and tooltips in
// seconds. register says the ops are critical sections on the protected
// register.
func dress(page []byte, rows []vizRow, keys []string, register bool) []byte {
	s := string(page)
	fits := "a lock"
	if register {
		fits = "a register that each critical section read and then wrote"
	}
	labels := make([]string, 0, len(rows))
	for _, r := range rows {
		for len(labels) < r.row {
			labels = append(labels, "row "+strconv.Itoa(len(labels)))
		}
		labels = append(labels, "process "+strconv.Itoa(r.proc))
	}
	js, _ := json.Marshal(labels)
	script := "<script>\nconst lockcheckRows = " + string(js) + "\n" +
		"function lockcheckRow(i) { return i < lockcheckRows.length ? lockcheckRows[i] : 'row ' + i }\n" +
		"function lockcheckSecs(ns) { const n = Number(ns); return n >= 9e18 ? 'never answered' : (n / 1e9).toFixed(3) + ' s' }\n" +
		"</script>\n"
	s = strings.Replace(s, jsRowWidth, "i < realClients ? lockcheckRow(i) :", 1)
	s = strings.Replace(s, jsRowLabel, "i < realClients ? lockcheckRow(i) :", 1)
	s = strings.Replace(s, jsCallTimes, "'<br><br>Call: ' + lockcheckSecs(callTime) + '<br><br>Return: ' + lockcheckSecs(returnTime)", 1)

	lock := "The lock"
	switch len(keys) {
	case 0:
	case 1:
		lock = "Lock " + keys[0]
	default:
		lock = "Locks " + joinAnd(keys)
	}
	title := lock + ": operations that cannot be put in one order"
	s = strings.Replace(s, "<title>Porcupine</title>", "<title>"+html.EscapeString(title)+" (lockcheck)</title>", 1)

	var b strings.Builder
	// Porcupine's legend is fixed at the top left, over the first 45 px.
	b.WriteString("<style>#canvas{margin-top:12px}</style>\n")
	b.WriteString(`<div id="lockcheck" style="font-family:sans-serif;font-size:14px;max-width:62em;margin:45px 0 0">` + "\n")
	fmt.Fprintf(&b, "<h1 style=\"font-size:18px\">%s</h1>\n", html.EscapeString(title))
	b.WriteString("<p>Porcupine's drawing of lockcheck's linearizability check. Each row is a process of the run; each box is one of its operations, from when it was sent to when its answer came (a box that runs to the right edge was never answered). " +
		"Porcupine tried every order of the operations, with each one taking effect at some moment within its box, and found none that fits " + fits + ": " +
		"it shows the longest orders it found (click a box to follow one) and where they got stuck.</p>\n")
	fmt.Fprintf(&b, "<p>The boxes are spaced to be readable, not to time scale. The <b>%s</b> row at the bottom marks the run's clock, in the seconds the report uses: "+
		"a box above the one labelled \"a–b s\" was in flight between a and b seconds into the run. Hover a box for its times.</p>\n", html.EscapeString(timeTag))
	b.WriteString(`<table style="border-collapse:collapse" id="lockcheck-rows"><tr><th style="text-align:left;padding-right:1em">row</th><th style="text-align:left;padding-right:1em">operations</th><th style="text-align:left">sent and answered</th></tr>` + "\n")
	for _, r := range rows {
		to := secs(r.to)
		if r.open {
			to = "never answered"
			if r.to > r.from {
				to = secs(r.to) + ", one never answered"
			}
		}
		fmt.Fprintf(&b, "<tr><td style=\"padding-right:1em\">process %d</td><td style=\"padding-right:1em\">%d</td><td>from %s to %s</td></tr>\n", r.proc, r.ops, secs(r.from), to)
	}
	b.WriteString("</table>\n</div>\n")
	s = strings.Replace(s, "<body>", "<body>\n"+b.String()+script, 1)
	return []byte(s)
}

// writeDressed renders Porcupine's visualization of info into a buffer and
// returns it dressed for the report (see dress).
func writeDressed(model porcupine.Model, info porcupine.LinearizationInfo, parts [][]porcupine.Operation) ([]byte, error) {
	var buf bytes.Buffer
	if err := porcupine.Visualize(model, info, &buf); err != nil {
		return nil, err
	}
	rows, keys, register := vizRows(parts)
	return dress(buf.Bytes(), rows, keys, register), nil
}
