package main

import (
	"bufio"
	"cmp"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/libraries"
	"github.com/lockcheck/lockcheck/nemesis"
	"github.com/lockcheck/lockcheck/runner"
	"github.com/lockcheck/lockcheck/scenarios"
	"github.com/lockcheck/lockcheck/schedule"
	"github.com/lockcheck/lockcheck/workloads"
)

// cmdList runs `check list`: one line for each lock design, scenario,
// failpoint, lock service, workload and nemesis; `check list bugs`, the
// reproduced bug reports; with --markdown PAGE, the page docs/PAGE.md
// instead, generated from the same registries.
func cmdList(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("list", stderr)
	page := fs.String("markdown", "", "print the page docs/`PAGE`.md, generated from the same registries and the commands' flags, instead of the list: "+
		orList(pageNames())+" (`go run ./cmd/check list --markdown designs > docs/designs.md`)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return helpOrError(help, err)
	}
	switch {
	case fs.NArg() == 1 && fs.Arg(0) == "bugs":
		if err := printBugs(stdout); err != nil {
			return exitError, fmt.Errorf("write list: %w", err)
		}
		return exitValid, nil
	case fs.NArg() > 0:
		return exitError, fmt.Errorf("unexpected argument %q (check list takes one section, bugs, or none)", fs.Arg(0))
	}
	if *page != "" {
		text, err := markdownPage(*page)
		if err != nil {
			return exitError, err
		}
		if _, err := io.WriteString(stdout, text); err != nil {
			return exitError, fmt.Errorf("write page: %w", err)
		}
		return exitValid, nil
	}
	if err := printList(stdout); err != nil {
		return exitError, fmt.Errorf("write list: %w", err)
	}
	return exitValid, nil
}

// printList prints the plain list: a section for each registry, one line
// for each entry, and a legend of the mechanisms the entries cite.
func printList(stdout io.Writer) error {
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	row := func(name, text string) { fmt.Fprintf(w, "  %s\t%s\n", name, text) }
	fmt.Fprintln(w, "locks:")
	for _, d := range workloads.Designs() {
		row(d.Name, d.Summary)
	}
	fmt.Fprintln(w, "scenarios (check run --scenario NAME [flags that override]):")
	for _, sc := range scenarios.All() {
		row(sc.Name, sc.Summary+"; expect "+sc.Expect)
		row("", "= "+strings.Join(sc.Args, " "))
	}
	fmt.Fprintln(w, "failpoints (check run --failpoint NAME, with the crash nemesis):")
	for _, f := range workloads.Failpoints() {
		row(f.Name, f.Lock+": "+f.Summary)
	}
	fmt.Fprintln(w, "lock services (each design names one; Debian packages in brackets):")
	for _, svc := range clusters.Services() {
		row(svc.Name, svc.Summary+" ["+svc.Packages+"]")
		if svc.Fronts != "" {
			row("", "--service "+svc.Name+": runs the "+svc.Fronts+" designs")
		}
		for _, v := range svc.Versions {
			row("", "--service-version "+strings.Join(v.Names(), " or ")+": "+v.Summary)
		}
	}
	fmt.Fprintln(w, "Go client libraries (check run --library-version VERSION; docs/versions.md):")
	for _, l := range libraries.All() {
		row(l.Name, l.Summary+" ["+strings.Join(l.Modules, ", ")+"]")
		row("", "pinned "+cmp.Or(l.Pinned(), "(unknown)")+"; designs: "+strings.Join(workloads.LibraryDesigns(l.Name), ", "))
		if len(l.Tried) > 0 {
			row("", "also run: "+strings.Join(l.Tried, ", "))
		}
	}
	fmt.Fprintln(w, "workloads (check run --workload NAME):")
	for _, wl := range workloads.Workloads() {
		summary := wl.Summary
		if wl.Listed {
			summary += " (" + strings.Join(workloads.DesignsRunning(wl), ", ") + ")"
		}
		row(wl.Name, summary)
	}
	fmt.Fprintln(w, "nemeses:")
	row("none", noneSummary)
	for _, k := range nemesis.Kinds() {
		row(k.Name, k.Summary)
	}
	fmt.Fprintln(w, "trigger events (--nemesis KIND@EVENT[/pN][#N][+OFFSET][:DURATION][*REPEAT], e.g. pause@grant+5ms:lease+1s; docs/triggers.md):")
	for _, e := range schedule.Events() {
		row(e.Name, e.Summary)
	}
	fmt.Fprintln(w, "mechanisms (the M codes above; docs/concepts.md tells each in full):")
	for _, m := range mechanisms {
		row(m.code, m.what)
	}
	return w.Flush()
}

// noneSummary is the line of the nemesis "none".
const noneSummary = "no faults: the control run"

// nemesisNames is the --nemesis flag's list of kinds: "a, b or c".
func nemesisNames() string {
	var names []string
	for _, k := range nemesis.Kinds() {
		names = append(names, k.Name)
	}
	return orList(names)
}

// workloadNames returns the --workload values, for the flag's help.
func workloadNames() string {
	var names []string
	for _, wl := range workloads.Workloads() {
		names = append(names, wl.Name)
	}
	return orList(names)
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// The markdown pages.
//
// Each page of docs/ that lists a registry is generated: a header line
// saying so, the page's title, an introduction written by the code (it
// counts what the registries hold), and the page's prose from
// pages/<name>.md, in which a line `<!-- table NAME -->` stands for one of
// the tables the code generates. The registries give the tables; the prose
// says what they cannot. TestMarkdownPages fails when a committed page is
// not what this generates.

//go:embed pages/*.md
var pageFiles embed.FS

// page is one generated page, docs/<name>.md.
type page struct {
	name, title string
	// intro is the first paragraph, written from the registries.
	intro func() string
	// tables are the tables the prose places, by name.
	tables func() (map[string]string, error)
}

// allPages returns the generated pages. (A function, not a variable: the
// command reference's tables call the commands, cmdList among them.)
func allPages() []page {
	return []page{
		{name: "bugs", title: "Bug library: reported lock losses, reproduced", intro: bugsIntro, tables: bugsTables},
		{name: "cli", title: "Command reference", intro: cliIntro, tables: cliTables},
		{name: "conditions", title: "Danger conditions", intro: conditionsIntro, tables: conditionsTables},
		{name: "designs", title: "Lock designs", intro: designsIntro, tables: designsTables},
		{name: "nemeses", title: "Nemeses: the faults", intro: nemesesIntro, tables: nemesesTables},
		{name: "scenarios", title: "Scenarios", intro: scenariosIntro, tables: scenariosTables},
		{name: "services", title: "Lock services and topologies", intro: servicesIntro, tables: servicesTables},
	}
}

// pageNames returns the names of the generated pages, sorted.
func pageNames() []string {
	var names []string
	for _, p := range allPages() {
		names = append(names, p.name)
	}
	return names
}

// generatedLine is the first line of a generated page.
func generatedLine(name string) string {
	return "<!-- generated by check list --markdown " + name + "; do not edit -->"
}

// directive is a line of a page's prose that places a table.
var directive = regexp.MustCompile(`^<!-- table (.+?) -->$`)

// markdownPage returns the page called name.
func markdownPage(name string) (string, error) {
	var p page
	for _, q := range allPages() {
		if q.name == name {
			p = q
		}
	}
	if p.name == "" {
		return "", fmt.Errorf("--markdown %q: want %s", name, orList(pageNames()))
	}
	prose, err := pageFiles.ReadFile("pages/" + name + ".md")
	if err != nil {
		return "", fmt.Errorf("page %s: %w", name, err)
	}
	tables, err := p.tables()
	if err != nil {
		return "", fmt.Errorf("page %s: %w", name, err)
	}
	var b strings.Builder
	b.WriteString(generatedLine(name) + "\n")
	fmt.Fprintf(&b, "<!-- the prose is in cmd/check/pages/%s.md, the tables come from the registries: edit those, then run `go run ./cmd/check list --markdown %s > docs/%s.md` -->\n\n", name, name, name)
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", p.title, wrap(p.intro()))
	used := make(map[string]bool)
	sc := bufio.NewScanner(strings.NewReader(string(prose)))
	for sc.Scan() {
		line := sc.Text()
		m := directive.FindStringSubmatch(line)
		if m == nil {
			b.WriteString(line + "\n")
			continue
		}
		t, ok := tables[m[1]]
		if !ok {
			return "", fmt.Errorf("page %s: pages/%s.md places the table %q, which the code does not make", name, name, m[1])
		}
		if used[m[1]] {
			return "", fmt.Errorf("page %s: pages/%s.md places the table %q twice", name, name, m[1])
		}
		used[m[1]] = true
		b.WriteString(t)
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("page %s: %w", name, err)
	}
	var missing []string
	for t := range tables {
		if !used[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("page %s: pages/%s.md does not place the tables %s (a line <!-- table NAME --> each)", name, name, strings.Join(missing, ", "))
	}
	return b.String(), nil
}

// table renders a markdown table; cells are markdown already.
func table(header []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// code is s as an inline code span.
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// codes is each of names as a code span, joined by ", ".
func codes(names []string) string {
	var out []string
	for _, n := range names {
		out = append(out, code(n))
	}
	return strings.Join(out, ", ")
}

var (
	// codeSpan is an inline code span of registry text.
	codeSpan = regexp.MustCompile("`[^`]*`")
	// docPage is a page of docs/ named in registry text.
	docPage = regexp.MustCompile(`\bdocs/([a-z-]+\.md)\b`)
	// flagWord is a command-line flag named in registry text, with its
	// value when that is a number or a dashed name.
	flagWord = regexp.MustCompile(`(^|[\s(])(--[a-z][a-z-]*[a-z](?:[ =](?:[0-9][0-9a-z.]*|[a-z0-9]+(?:-[a-z0-9]+)+))?)`)
)

// text turns registry text (a summary, a flag's usage) into markdown for
// a table cell: flags become code spans; '|', '<', '>', '*' and '_' outside
// code spans are escaped, so that "<time>" shows as written.
func text(s string) string {
	var b strings.Builder
	last := 0
	for _, loc := range codeSpan.FindAllStringIndex(s, -1) {
		b.WriteString(plainText(s[last:loc[0]]))
		b.WriteString(s[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(plainText(s[last:]))
	return b.String()
}

// plainText is text for a stretch with no code span.
func plainText(s string) string {
	var spans []string
	s = flagWord.ReplaceAllStringFunc(s, func(m string) string {
		sub := flagWord.FindStringSubmatch(m)
		spans = append(spans, "`"+sub[2]+"`")
		return sub[1] + "\x00"
	})
	s = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`).Replace(s)
	s = docPage.ReplaceAllString(s, "[$0]($1)")
	for _, sp := range spans {
		s = strings.Replace(s, "\x00", sp, 1)
	}
	return s
}

// wrap breaks a paragraph into lines of at most 75 characters.
func wrap(p string) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(p) {
		if line != "" && len(line)+1+len(w) > 75 {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// count is "1 thing" or "n things".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// The designs page.

func designsIntro() string {
	ds := workloads.Designs()
	tokens := 0
	for _, d := range ds {
		if d.Tokens {
			tokens++
		}
	}
	return fmt.Sprintf("A lock design (`--lock NAME`) is one way of taking a lock: the commands its client sends, "+
		"how it releases, and what it hands out as a fencing token. lockcheck has %s on %s "+
		"([services.md](services.md)); %d of them hand out fencing tokens. Each design registers itself "+
		"from its own file in `workloads/`, and `check list` prints one line for each: the table below "+
		"is made from the same registry, and the sections after it say how each family works. "+
		"What each design is expected to show under each fault, and what runs measured: [verdicts.md](verdicts.md).",
		count(len(ds), "lock design", "lock designs"), count(len(clusters.Services()), "lock service", "lock services"), tokens)
}

func designsTables() (map[string]string, error) {
	var rows [][]string
	for _, d := range workloads.Designs() {
		token := "none"
		if d.Tokens {
			token = "yes"
		}
		var wls []string
		for _, wl := range workloads.Workloads() {
			if d.Runs(wl) {
				wls = append(wls, wl.Name)
			}
		}
		rows = append(rows, []string{code(d.Name), code(d.Service), token, codes(wls), designTraits(d), text(d.Summary)})
	}
	designs := table([]string{"design", "service", "fencing token", "workloads", "traits", "what it does"}, rows)

	all := workloads.Designs()
	rows = nil
	for _, wl := range workloads.Workloads() {
		in := workloads.DesignsRunning(wl)
		who := codes(in)
		if len(in) == len(all) {
			who = "every design"
		} else if 2*len(in) > len(all) {
			var out []string
			for _, d := range all {
				if !d.Runs(wl) {
					out = append(out, d.Name)
				}
			}
			who = "every design but " + codes(out)
		}
		rows = append(rows, []string{code(wl.Name), text(wl.Summary), who})
	}
	return map[string]string{
		"designs":   designs,
		"workloads": table([]string{"workload", "the critical section", "designs"}, rows),
	}, nil
}

// designTraits names what sets a design apart, from its registry fields.
func designTraits(d workloads.Design) string {
	ts := named(
		flagName{d.NoLock, "no lock"},
		flagName{d.Renews, "renews its lease"},
		flagName{d.SessionHeld, "held by the database session"},
		flagName{d.Guarded, "guarded write"},
		flagName{d.StockOnLock, "stock on the lock service"},
		flagName{d.SessionTTL != nil, "whole-second lease"})
	if len(d.Worker) > 0 {
		lang := d.Worker[0]
		switch lang {
		case "python3":
			lang = "Python"
		case "java":
			lang = "Java"
		}
		ts = append(ts, lang+" worker")
	}
	return strings.Join(ts, ", ")
}

// flagName is a registry field that is set or not, and what a page calls it.
type flagName struct {
	on   bool
	name string
}

// named returns the names of the fields that are set, in order.
func named(fs ...flagName) []string {
	var out []string
	for _, f := range fs {
		if f.on {
			out = append(out, f.name)
		}
	}
	return out
}

// The nemeses page.

func nemesesIntro() string {
	ks := nemesis.Kinds()
	return fmt.Sprintf("The nemesis is the part of a run that injects faults (`--nemesis LIST`, comma-separated; "+
		"`none` for a control run). lockcheck has %s, each registered from its own file in `nemesis/`; "+
		"`check list` prints one line for each, and the table below is made from the same registry. "+
		"What each nemesis must hit to count, and what each design is expected to show under it: "+
		"[verdicts.md](verdicts.md).", count(len(ks), "nemesis", "nemeses"))
}

func nemesesTables() (map[string]string, error) {
	rows := [][]string{{code("none"), text(noneSummary), ""}}
	for _, k := range nemesis.Kinds() {
		also := named(
			flagName{k.ClockShim, "lock nodes under the clock shim"},
			flagName{k.ClientClocks, "a client clock file for every worker"},
			flagName{k.Replicated, "a topology with replicas to fail over to, for a single-master design"})
		rows = append(rows, []string{code(k.Name), text(k.Summary), strings.Join(also, "; ")})
	}
	nemeses := table([]string{"nemesis", "the fault", "what the run sets up for it"}, rows)
	rows = nil
	for _, f := range workloads.Failpoints() {
		rows = append(rows, []string{code(f.Name), code(f.Lock), text(f.Summary)})
	}
	return map[string]string{
		"nemeses":    nemeses,
		"failpoints": table([]string{"failpoint", "design", "where the worker stops"}, rows),
	}, nil
}

// The services page.

// serverNames names the servers of the first n registered services, by
// the name their stories give them, each once.
func serverNames(n int) string {
	var names []string
	for _, s := range clusters.Services() {
		name := cmp.Or(s.Server, s.Name)
		if !slices.Contains(names, name) && len(names) < n {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

func servicesIntro() string {
	return fmt.Sprintf("A lock service is the server software a design takes its lock from (%s ...); its topology is the set of server processes a run starts for it, with a "+
		"Toxiproxy proxy in front of every link a fault may cut. lockcheck has %s. Each lock design names "+
		"its service ([designs.md](designs.md)), and each service registers how its topology is built from "+
		"its own folder under `services/`; `check list` prints one line for each, with its Debian packages, and "+
		"the table below is made from the same registry.", serverNames(4), count(len(clusters.Services()), "lock service", "lock services"))
}

func servicesTables() (map[string]string, error) {
	var rows [][]string
	for _, s := range clusters.Services() {
		var names []string
		for _, d := range workloads.Designs() {
			if d.Service == s.Name || s.Fronts != "" && d.Service == s.Fronts {
				names = append(names, d.Name)
			}
		}
		docker := "no"
		if s.Container != nil {
			docker = "yes"
		}
		var versions []string
		for _, v := range s.Versions {
			versions = append(versions, v.Name)
		}
		version := "the installed server"
		if len(versions) > 0 {
			version = codes(versions)
		}
		rows = append(rows, []string{code(s.Name), text(s.Summary), codes(names), text(s.Packages), docker, version})
	}
	return map[string]string{
		"services": table([]string{"service", "what a run starts", "designs", "Debian packages", "`--cluster docker`", "`--service-version` ([versions.md](versions.md))"}, rows),
	}, nil
}

// The scenarios page.

func scenariosIntro() string {
	return fmt.Sprintf("A scenario is a named failure story: a set of `check run` flags with the verdict it "+
		"should end in. lockcheck has %s, each registered from its own file in `scenarios/` with its "+
		"expected verdict as data (`Want`, and `WantFenced` with `--fencing`), which `check matrix` and "+
		"`check repro` judge against. `check list` prints each with the flags it stands for; the tables "+
		"below are made from the same registry.", count(len(scenarios.All()), "scenario", "scenarios"))
}

func conditionsIntro() string {
	return fmt.Sprintf("A danger condition is a moment a lock can break in, named and decided from a run's history "+
		"alone. lockcheck knows %s, each a registered record (`checker.RegisterCondition`: a name, a one-line "+
		"definition and a detector); every run lists the ones it reached.", count(len(checker.Conditions()), "condition", "conditions"))
}

func conditionsTables() (map[string]string, error) {
	var rows [][]string
	for _, c := range checker.Conditions() {
		aim := "none"
		if c.Aim != "" {
			aim = code("@" + c.Aim)
		}
		rows = append(rows, []string{code(c.Name), text(c.Definition), aim})
	}
	return map[string]string{"conditions": table([]string{"condition", "reached when", "aimed at by (--until-covered)"}, rows)}, nil
}

// verdictWords are the scenarios' expected verdicts, by their letter.
var verdictWords = map[string]string{"U": "invalid", "L": "invalid (a stuck lock)", "S": "valid"}

func scenariosTables() (map[string]string, error) {
	var stories, flags [][]string
	for _, sc := range scenarios.All() {
		want, ok := verdictWords[sc.Want]
		if !ok {
			return nil, fmt.Errorf("scenario %s: Want %q: want U, L or S", sc.Name, sc.Want)
		}
		fenced := "`--fencing` refused"
		if sc.WantFenced != "" {
			if fenced, ok = verdictWords[sc.WantFenced]; !ok {
				return nil, fmt.Errorf("scenario %s: WantFenced %q: want U, L, S or nothing", sc.Name, sc.WantFenced)
			}
		}
		stories = append(stories, []string{code(sc.Name), text(sc.Summary), text(sc.Expect), want, fenced})
		flags = append(flags, []string{code(sc.Name), code(strings.Join(sc.Args, " "))})
	}
	return map[string]string{
		"scenarios": table([]string{"scenario", "story", "expect", "verdict", "with `--fencing`"}, stories),
		"flags":     table([]string{"scenario", "flags"}, flags),
	}, nil
}

// The command reference.

// usageCommand is a line of the usage that names a command.
var usageCommand = regexp.MustCompile(`(?m)^  [a-z]+ `)

// command is one `check` command as the reference shows it.
type command struct {
	name, summary string
	// noFlags marks a command that has no flag set.
	noFlags bool
}

// commands are the `check` commands, in the reference's order.
var commands = []command{
	{name: "run", summary: "run one test, or a named scenario, and print its verdict"},
	{name: "analyze", summary: "re-check a stored run offline"},
	{name: "list", summary: "list lock designs, scenarios, failpoints, lock services, workloads and nemeses, or print a page of these docs"},
	{name: "serve", summary: "browse stored runs and matrices in a browser"},
	{name: "matrix", summary: "run cells over seeds, judge each against its expected verdict"},
	{name: "repro", summary: "re-run a scenario or a stored run (its recorded fault schedule) and give its reproduction rate"},
	{name: "shrink", summary: "cut a failing run down to the smallest schedule, workers and time that still fail at a given rate"},
	{name: "replay", summary: "run a stored run's fault schedule again on fresh servers and say how often each of its anomalies recurs"},
	{name: "conformance", summary: "check a worker against the worker protocol"},
	{name: "learn", summary: "a course on distributed locks, one failure at a time: lessons with recorded runs, a step-through timeline and a quiz"},
	{name: "bench", summary: "measure the harness's overhead against a plain client loop"},
	{name: "worker", summary: "serve the worker protocol on stdin/stdout (started by `run`)", noFlags: true},
}

func cliIntro() string {
	return "`bin/check <command> [flags]` (`make build` builds `bin/check`; `go run ./cmd/check` works too). " +
		"`check --help` lists the commands, and `-h` or `--help` after any command prints its flags and exits 0. " +
		"A bad or unknown flag prints one line and a pointer to the command's `--help`, exit 3. " +
		"The flag tables below are made from the commands' own flag sets, the text `--help` prints."
}

// flagCollector is the standard error a command is given when the
// reference asks for its flag set: parseFlags hands it the flag set and
// says help, so the command returns before it does anything.
type flagCollector struct {
	fs *flag.FlagSet
}

func (*flagCollector) Write(p []byte) (int, error) { return len(p), nil }

// flagSet returns the flag set of the command name, from the command
// itself.
func flagSet(name string) (*flag.FlagSet, error) {
	c := &flagCollector{}
	if _, err := dispatch(&invocation{}, []string{name, "-h"}, io.Discard, c); err != nil {
		return nil, fmt.Errorf("check %s: %w", name, err)
	}
	if c.fs == nil {
		return nil, fmt.Errorf("check %s parsed no flag set", name)
	}
	return c.fs, nil
}

// argNames are the placeholders of string flags in the reference, by
// command and flag or by flag; other flags get one from their type.
var argNames = map[string]string{
	"lock": "NAME", "scenario": "NAME", "nemesis": "LIST", "cluster": "KIND", "failpoint": "NAME",
	"workload": "NAME", "store": "DIR", "worker-cmd": "CMD", "cells": "FILE", "seeds": "LIST", "junit": "FILE",
	"json": "FILE", "markdown": "FILE", "docker-host": "LIST", "cell-image": "IMAGE", "service-version": "VERSION", "addr": "ADDR", "dir": "DIR",
	"matrix.lock": "LIST", "list.markdown": "PAGE", "learn.html": "DIR", "repro.seed": "BASE", "shard": "I/N",
}

// flagLinks are the pages that say more of a flag's values, by command and
// flag or by flag.
var flagLinks = map[string]string{
	"run.lock": "designs.md", "run.nemesis": "nemeses.md", "run.scenario": "scenarios.md",
	"run.workload": "designs.md#workloads", "run.cluster": "docker.md", "run.failpoint": "nemeses.md#failpoints",
	"worker-cmd": "worker-protocol.md", "cells": "matrix.md#cells-files",
	"matrix.lock": "designs.md", "matrix.nemesis": "nemeses.md", "repro.scenario": "scenarios.md",
	"conformance.lock": "designs.md", "bench.lock": "designs.md", "learn.html": "learn.md#the-course-as-web-pages",
}

// byFlag looks a flag of command cmd up in m: "cmd.flag" first, then
// "flag".
func byFlag(m map[string]string, cmd, name string) (string, bool) {
	if v, ok := m[cmd+"."+name]; ok {
		return v, true
	}
	v, ok := m[name]
	return v, ok
}

var (
	// defaultIn is a usage's own "(default X)" or "(default: X)", for a
	// flag whose zero value stands for a default the code derives.
	defaultIn = regexp.MustCompile(`\s*\(default:? ([^;)]*)(?:; ([^)]*))?\)`)
	// zeroIn is a usage's "(0: off)": what the zero value means.
	zeroIn = regexp.MustCompile(`\s*\(0: ([^)]*)\)`)
)

// seeCheckList is what a usage says of the values `check list` names.
const seeCheckList = " (see check list)"

// defaultText is a flag's default as the reference shows it.
func defaultText(f *flag.Flag, boolFlag bool) string {
	switch {
	case boolFlag && f.DefValue == "false":
		return "off"
	case boolFlag && f.DefValue == "true":
		return "on"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		if d, ok := g.Get().(time.Duration); ok && d != 0 {
			switch {
			case d%time.Hour == 0:
				return code(fmt.Sprintf("%dh", d/time.Hour))
			case d%time.Minute == 0:
				return code(fmt.Sprintf("%dm", d/time.Minute))
			}
		}
	}
	return code(f.DefValue)
}

// flagTable is the reference's table of the flags of command cmd.
func flagTable(cmd string, fs *flag.FlagSet) string {
	var rows [][]string
	fs.VisitAll(func(f *flag.Flag) {
		name := "--" + f.Name
		boolFlag := false
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
			boolFlag = true
		} else if arg, ok := byFlag(argNames, cmd, f.Name); ok {
			name += " " + arg
		} else {
			switch fmt.Sprintf("%T", f.Value) {
			case "*flag.durationValue":
				name += " DUR"
			case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
				name += " N"
			default:
				name += " VALUE"
			}
		}
		usage, def := f.Usage, defaultText(f, boolFlag)
		if m := defaultIn.FindStringSubmatch(usage); m != nil {
			def = text(m[1])
			usage = strings.Replace(usage, m[0], "", 1)
			if m[2] != "" {
				usage += "; " + m[2]
			}
		} else if m := zeroIn.FindStringSubmatch(usage); m != nil {
			def = "0 (" + text(m[1]) + ")"
			usage = strings.Replace(usage, m[0], "", 1)
		}
		link, linked := byFlag(flagLinks, cmd, f.Name)
		seeList := strings.Contains(usage, seeCheckList)
		usage = strings.Replace(usage, seeCheckList, "", 1)
		meaning := text(usage)
		switch {
		case linked && seeList:
			meaning += " ([" + link + "](" + link + "), `check list`)"
		case linked:
			meaning += " ([" + link + "](" + link + "))"
		case seeList:
			meaning += " (`check list`)"
		}
		rows = append(rows, []string{code(name), def, meaning})
	})
	return table([]string{"flag", "default", "meaning"}, rows)
}

func cliTables() (map[string]string, error) {
	out := make(map[string]string)
	var rows [][]string
	for _, c := range commands {
		rows = append(rows, []string{"[`" + c.name + "`](#check-" + c.name + ")", text(c.summary)})
		if c.noFlags {
			continue
		}
		fs, err := flagSet(c.name)
		if err != nil {
			return nil, err
		}
		out["flags "+c.name] = flagTable(c.name, fs)
	}
	out["commands"] = table([]string{"command", "what it does"}, rows)
	for _, c := range commands {
		if !strings.Contains(usage, "\n  "+c.name+" ") {
			return nil, fmt.Errorf("the usage does not list the command %s", c.name)
		}
	}
	if n := len(usageCommand.FindAllString(usage, -1)); n != len(commands) {
		return nil, errors.New("the usage lists commands the reference does not: add them to commands in cmd/check/list.go")
	}
	return out, nil
}

// externalFaultTable is docs/your-lock.md's table of the faults a run
// against the user's own servers (--external) can inject, by what they
// strike, generated from the nemesis registry (runner.ExternalFaults).
func externalFaultTable() string {
	var workers, links, servers, sessions []string
	for _, f := range runner.ExternalFaults() {
		name := "`" + f.Name + "`"
		switch {
		case len(f.Needs) > 0 && f.Services != nil:
			servers = append(servers, name+" (its "+strings.Join(f.Needs, " and ")+" commands; on "+strings.Join(f.Services, ", ")+")")
		case len(f.Needs) > 0:
			servers = append(servers, name+" (its "+strings.Join(f.Needs, " and ")+" commands)")
		case f.Services != nil:
			sessions = append(sessions, name+" ("+strings.Join(f.Services, ", ")+")")
		case f.Class == history.ClassNetwork:
			links = append(links, name)
		default:
			workers = append(workers, name)
		}
	}
	return "| applies | nemeses |\n|---|---|\n" +
		"| the workers | " + strings.Join(workers, ", ") + " |\n" +
		"| the workers' links | " + strings.Join(links, ", ") + " |\n" +
		"| your servers, through the control commands of your topology file | " + strings.Join(servers, ", ") + " |\n" +
		"| your database's sessions, through the login of your topology file | " + strings.Join(sessions, ", ") + " |\n"
}
