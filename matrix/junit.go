package matrix

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit XML elements WriteJUnit writes (the common schema Jenkins,
// GitLab and GitHub test reporters read).
type (
	junitSuites struct {
		XMLName xml.Name `xml:"testsuites"`
		junitCounts
		Suites []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		junitCounts
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	// junitCounts are the attributes a suite and the suites share.
	junitCounts struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Time     string `xml:"time,attr"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Classname string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure"`
		Error     *junitProblem `xml:"error"`
		Skipped   *junitSkipped `xml:"skipped"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	junitSkipped struct {
		Message string `xml:"message,attr"`
	}
)

// WriteJUnit writes m as JUnit XML: a testsuite per cell, a testcase per
// cell and seed (classname the row, name the column and seed). A run
// fails its testcase when it contradicts its cell:
//
//   - an error run is an <error>, and so is a run a merged matrix expected
//     and did not find (type "missing");
//   - a not-exercised (or interrupted) run is <skipped>, except in a cell
//     with an expectation that no run exercised: there it is a <failure>
//     (type "not-exercised"), since the cell missed for want of one;
//   - in an S cell, an invalid or unknown run is a <failure> whose text is
//     the first anomaly's explanation;
//   - in a U or L cell, a run that did not find the anomaly is a <failure>
//     only when the cell missed its expectation (a cell that needs 90 %
//     tolerates the rest); a run that found it passes, its story in
//     <system-out>;
//   - a D cell's runs pass, their verdicts in <system-out>;
//   - in a cell that requires a danger condition none of its runs reached,
//     every exercised run is a <failure> of type "not-exercised".
//
// Each suite's properties give the cell's coverage: the danger conditions
// its runs reached, each with how many of its runs did (reached).
func WriteJUnit(w io.Writer, m *Matrix) error {
	root := junitSuites{junitCounts: junitCounts{Name: "lockcheck matrix", Time: secs(m.WallS)}}
	for _, c := range m.Cells {
		s := junitSuite{junitCounts: junitCounts{Name: c.Name()}, Properties: []junitProperty{
			{"expect", string(c.Expect)}, {"status", string(c.Status)},
			{"summary", c.Summary()}, {"flags", strings.Join(c.Args, " ")}}}
		if c.Why != "" {
			s.Properties = append(s.Properties, junitProperty{"why", c.Why})
		}
		if len(c.Require) > 0 {
			s.Properties = append(s.Properties, junitProperty{"require", strings.Join(c.Require, ",")})
		}
		if cov := c.Coverage(); cov != "" {
			s.Properties = append(s.Properties, junitProperty{"reached", cov})
		}
		var wall float64
		for _, r := range c.Runs {
			tc := junitCaseOf(c, r)
			wall += r.WallS
			s.Tests++
			switch {
			case tc.Error != nil:
				s.Errors++
			case tc.Failure != nil:
				s.Failures++
			case tc.Skipped != nil:
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
		}
		s.Time = secs(wall)
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
		root.Suites = append(root.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitCaseOf is one run as a testcase.
func junitCaseOf(c CellResult, r Run) junitCase {
	tc := junitCase{Classname: c.Row, Name: fmt.Sprintf("%s seed %d", c.Column, r.Seed), Time: secs(r.WallS)}
	where := ""
	if r.Dir != "" {
		where = "run dir " + r.Dir
	}
	out := func(lines ...string) string {
		var keep []string
		for _, l := range lines {
			if l != "" {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	verdict := string(r.Verdict)
	if len(r.Anomalies) > 0 {
		verdict += ": " + r.AnomalyKinds()
	}
	switch r.Verdict {
	case Error:
		tc.Error = &junitProblem{Message: fmt.Sprintf("exit %d: %s", r.Exit, r.Error), Type: "error", Text: out(r.Error, where)}
		return tc
	case Interrupted:
		tc.Skipped = &junitSkipped{Message: "interrupted before the run ended"}
		return tc
	case Missing:
		tc.Error = &junitProblem{Message: "missing: " + r.Error, Type: "missing", Text: r.Error}
		return tc
	case NotExercised:
		if c.Status == Missed && c.Tally.Exercised == 0 && c.Tally.Error == 0 && c.Tally.Missing == 0 {
			// No run of the cell tested anything, so it missed for want of
			// one: a CI reader must see the cell fail, as the exit code says.
			tc.Failure = &junitProblem{Message: "not exercised: " + r.NotExercised + "; the cell: " + c.Why,
				Type: "not-exercised", Text: out(r.NotExercised, where)}
			return tc
		}
		tc.Skipped = &junitSkipped{Message: "not exercised: " + r.NotExercised}
		tc.SystemOut = where
		return tc
	}
	if len(c.Unreached) > 0 && c.Status == Missed {
		// The cell's runs never reached what it exists for: each run is
		// a failure, as the exit code says, whatever its verdict.
		tc.Failure = &junitProblem{Message: "never reached " + strings.Join(c.Unreached, ", ") + ": the cell requires it (" + verdict + ")",
			Type: "not-exercised", Text: out(r.Story, where)}
		return tc
	}
	switch c.Expect {
	case Safe:
		if r.Verdict != Valid {
			text := r.Story
			if text == "" {
				text = r.Error
			}
			tc.Failure = &junitProblem{Message: verdict + ", expected valid (S)", Type: string(r.Verdict), Text: out(text, where)}
			return tc
		}
	case Unsafe, Stuck:
		if !Detected(c.Expect, r) {
			if c.Status == Missed {
				tc.Failure = &junitProblem{Message: fmt.Sprintf("%s, expected %s (%s); the cell: %s", verdict, want(c.Expect), c.Expect, c.Why),
					Type: "not-detected", Text: out(r.Story, where)}
				return tc
			}
			tc.SystemOut = out(verdict+fmt.Sprintf(" (tolerated: the cell met %s with %s)", c.Expect, c.Summary()), r.Story, where)
			return tc
		}
	}
	tc.SystemOut = out(verdict, r.Story, where)
	return tc
}

// want names what an expectation looks for.
func want(e Expect) string {
	switch e {
	case Safe:
		return "valid"
	case Stuck:
		return "invalid with a stuck lock"
	}
	return "invalid"
}

// secs renders seconds for JUnit's time attributes.
func secs(s float64) string { return fmt.Sprintf("%.3f", s) }
