package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// Meta describes the test a report is about: what ran, with which seed, and
// the command line that runs it again.
type Meta struct {
	// Name is the test's name, e.g. "redis-set-px-pause".
	Name string
	// Lock is the lock design; Nemesis the comma-separated faults ("none"
	// for a control run).
	Lock, Nemesis string
	// Seed is the one seed all randomness of the run came from.
	Seed uint64
	// Fencing says the resource checked fencing tokens.
	Fencing bool
	// NoTokens says the lock design hands out no fencing token (RedLock), so
	// fencing cannot protect the resource whatever the run's settings.
	NoTokens bool
	// Workers is the number of worker slots; the timeline draws one lane
	// per slot (process % Workers). 0 draws one lane per process.
	Workers int
	// Duration is the configured test time.
	Duration time.Duration
	// Command is the exact command line that re-runs the test.
	Command string
	// Started is when the run started.
	Started time.Time
	// Lease is the lock's lease (or session timeout): the incident infers
	// when the server let a holder's lock go from it when no observer
	// saw the release. 0 when unknown.
	Lease time.Duration
	// Tokens says how the design's fencing tokens print (a ZooKeeper
	// zxid as epoch:counter).
	Tokens checker.TokenKind
}

// Input is everything Write needs: the test, its history and the checkers'
// verdict on it.
type Input struct {
	Meta    Meta
	History history.History
	Result  checker.Result
}

// maxParagraphs caps the anomaly stories on the page; the rest are counted
// and are all in results.json.
const maxParagraphs = 200

// Write renders in as one self-contained HTML file at path (normally
// report.html in the run directory). The page links, by relative URL, to
// history.jsonl and results.json, and to test.json and
// linearizability.html when they exist in path's directory. The file is
// written to a temporary name and renamed, so a reader never sees half a
// report.
func Write(path string, in Input) error {
	p := build(in, filepath.Dir(path))
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		_ = os.Remove(tmp) // no partial file left behind (a full disk)
		return fmt.Errorf("write report: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// page is what the template renders.
type page struct {
	Meta     Meta
	Verdict  string // valid, invalid or unknown: the CSS class
	Fencing  string
	Duration string
	Started  string
	Error    string
	Checkers []checkerRow
	Summary  string
	Groups   []anomalyGroup
	More     int
	Timeline timelineOut
	Incident *incidentOut
	// FaultCSS colours each fault kind of the run; FaultKinds are their
	// legend entries.
	FaultCSS   template.CSS
	FaultKinds []faultKind
	// ShowFlight says the acquires in flight are drawn by default (five
	// workers or fewer).
	ShowFlight  bool
	Latency     template.HTML
	Throughput  template.HTML
	PlotNote    string
	Stats       statsView
	Links       []link
	HistoryNote string

	// NotExercised is why the run's faults could not have produced the
	// anomaly it looks for (checker.Result.NotExercised).
	NotExercised string
	// Reached is the line of danger conditions the run reached
	// (checker.ReachedLine), "" for a result checked before there were any.
	Reached string
}

// checkerRow is one sub-result in the checkers table.
type checkerRow struct {
	Name, Verdict, Error, Stats string
	Advisory                    bool
	// NotUsed says why the checker had nothing of its own to judge
	// (checker.Result.NotUsed).
	NotUsed string
}

// anomalyGroup is the paragraphs of one anomaly kind.
type anomalyGroup struct {
	Kind  string
	Count int // all anomalies of the kind, shown or not
	Items []anomalyView
}

// anomalyView is one anomaly paragraph.
type anomalyView struct {
	ID, Kind, Key, Processes, Start, End string
	T0, T1                               string // milliseconds, for the zoom link
	Fenced                               bool
	Explanation                          string
	// Linearizability links linearizability.html from a nonlinearizable
	// anomaly, when the file is there.
	Linearizability bool
}

// link is one file the report links to.
type link struct{ Href, Text, Note string }

// build turns in into the page model; dir is where the report will live.
func build(in Input, dir string) page {
	res := in.Result
	p := page{Meta: in.Meta, Verdict: res.Valid.String(), Error: res.Error, Fencing: "fencing: not used"}
	p.NotExercised = res.NotExercised
	for _, sub := range res.Results {
		if sub.Checker == checker.ConditionsName {
			p.Reached = checker.ReachedLine(res.Reached)
		}
	}
	if in.Meta.Duration > 0 {
		p.Duration = in.Meta.Duration.String()
	}
	if in.Meta.Fencing {
		p.Fencing = "fencing: on"
	}
	for _, r := range res.Results {
		if r.Checker == "fencing" && r.NotUsed != "" {
			p.Fencing = "fencing: not used" // asked for, but the resource took no tokens
		}
	}
	if in.Meta.Nemesis == "" {
		p.Meta.Nemesis = "none"
	}
	if !in.Meta.Started.IsZero() {
		p.Started = in.Meta.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	for _, r := range res.Results {
		row := checkerRow{Name: r.Checker, Verdict: r.Valid.String(), Error: r.Error, Advisory: r.Advisory, NotUsed: r.NotUsed}
		if len(r.Stats) > 0 {
			if b, err := json.Marshal(r.Stats); err == nil {
				row.Stats = string(b)
			}
		}
		p.Checkers = append(p.Checkers, row)
	}

	lin := exists(filepath.Join(dir, "linearizability.html"))
	order := sortedOrder(res.Anomalies)
	anomalies := make([]checker.Anomaly, len(order))
	for i, j := range order {
		anomalies[i] = res.Anomalies[j]
	}
	ids := make(map[int]string, len(anomalies)) // position in anomalies -> paragraph id
	pos := make(map[int]int, len(order))        // index in res.Anomalies -> position in anomalies
	for i, j := range order {
		pos[j] = i
	}
	idOf := func(j int) string {
		if id, ok := ids[pos[j]]; ok {
			return id
		}
		return "anomalies"
	}
	p.Summary = anomalySummary(anomalies)
	for i, a := range anomalies {
		if len(p.Groups) == 0 || p.Groups[len(p.Groups)-1].Kind != a.Kind {
			p.Groups = append(p.Groups, anomalyGroup{Kind: a.Kind})
		}
		g := &p.Groups[len(p.Groups)-1]
		g.Count++
		if i >= maxParagraphs {
			p.More++
			continue
		}
		id := fmt.Sprintf("a%d", i+1)
		ids[i] = id
		g.Items = append(g.Items, anomalyView{ID: id, Kind: a.Kind, Key: a.Key, Fenced: a.Fenced,
			Processes: joinInts(a.Processes, ", "), Start: secs(a.Start), End: secs(a.End),
			T0: msNum(a.Start), T1: msNum(a.End), Explanation: a.Explanation,
			Linearizability: a.Kind == "nonlinearizable" && lin})
	}

	if in.Meta.Lease == 0 {
		// A caller that did not say: the lease the run's test.json
		// beside the report records.
		in.Meta.Lease = leaseOf(filepath.Join(dir, "test.json"))
	}
	pairs, err := in.History.Pairs()
	if err != nil {
		p.HistoryNote = fmt.Sprintf("The history is malformed (%v): no timeline or plots.", err)
		p.Incident = buildIncident(in, nil, nil, nil, 0, idOf, false, nil, nil)
	} else {
		end := historyEnd(in.History)
		faults := in.History.Faults()
		var events []history.Op
		for _, op := range in.History {
			if op.F == history.FEvent && op.Type == history.Info && !op.IsNemesis() {
				events = append(events, op)
			}
		}
		hs := holds(pairs, end)
		// The lock nodes' lanes (RedLock's) and the releases they draw:
		// a design that takes its lock on one node has neither.
		nodes := lockNodes(pairs)
		var rels []nodeRelease
		if len(nodes) > 0 {
			rels = serverReleases(in.History)
		}
		wins := lostWindows(res)
		// The drawings read the history and write their own parts of the
		// page: each on a goroutine (a long run's timeline alone is a
		// second of work).
		var wg sync.WaitGroup
		for _, draw := range []func(){
			func() { p.Incident = buildIncident(in, pairs, hs, faults, end, idOf, lin, nodes, rels) },
			func() {
				p.Timeline = renderTimeline(in.Meta.Workers, pairs, hs, events, faults, end, anomalies, ids, wins, in.Meta.Tokens, nodes, rels)
			},
			func() { p.Latency = renderLatency(pairs, faults, end) },
			func() { p.Throughput = renderThroughput(pairs, faults, end) },
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				draw()
			}()
		}
		wg.Wait()
		p.FaultCSS, p.FaultKinds = faultStyles(faults)
		p.ShowFlight = in.Meta.Workers <= maxFlightWorkers
	}
	p.Stats = statsOf(res, in.History)

	p.Links = []link{{Href: "history.jsonl", Text: "history.jsonl", Note: fmt.Sprintf("%d ops", len(in.History))},
		{Href: "results.json", Text: "results.json", Note: "every anomaly and each checker's result"}}
	if exists(filepath.Join(dir, "test.json")) {
		p.Links = append(p.Links, link{Href: "test.json", Text: "test.json", Note: "the test map"})
	}
	if exists(filepath.Join(dir, "linearizability.html")) {
		p.Links = append(p.Links, link{Href: "linearizability.html", Text: "linearizability.html",
			Note: "Porcupine's view of the part that could not be linearized"})
	}
	return p
}

// leaseOf returns the lease a test.json records, 0 when it cannot say.
func leaseOf(path string) time.Duration {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var t struct {
		Lease time.Duration `json:"lease"`
	}
	if json.Unmarshal(b, &t) != nil {
		return 0
	}
	return t.Lease
}

// exists reports whether path names an existing file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// kindOrder is the order of anomaly kinds on the page, as in the CLI
// (cmd/check): what the inventory lost (oversold items, lost decrements),
// who held the lock twice and what was lost first, then the evidence.
var kindOrder = []string{"oversold", "lost-decrement", "stock-mismatch", "double-holder", "lost-update", "stale-write", "foreign-release",
	"token-order", "no-grants", "stuck-lock", "stale-write-rejected", "nonlinearizable"}

// kindRank returns the position of kind in kindOrder; unknown kinds last.
func kindRank(kind string) int {
	for i, k := range kindOrder {
		if k == kind {
			return i
		}
	}
	return len(kindOrder)
}

// sortedAnomalies returns a copy of as grouped by kind in kindOrder (unknown
// kinds by name), keeping the checkers' order within a kind.
func sortedAnomalies(as []checker.Anomaly) []checker.Anomaly {
	out := make([]checker.Anomaly, 0, len(as))
	for _, i := range sortedOrder(as) {
		out = append(out, as[i])
	}
	return out
}

// sortedOrder returns the indices of as in page order (sortedAnomalies).
func sortedOrder(as []checker.Anomaly) []int {
	out := make([]int, len(as))
	for i := range out {
		out[i] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := as[out[i]], as[out[j]]
		ri, rj := kindRank(a.Kind), kindRank(b.Kind)
		if ri != rj {
			return ri < rj
		}
		return ri == len(kindOrder) && a.Kind < b.Kind
	})
	return out
}

// anomalySummary counts anomalies by kind in page order, e.g.
// "2 double-holder, 2 lost-update (1 fenced)".
func anomalySummary(as []checker.Anomaly) string {
	if len(as) == 0 {
		return "no anomalies"
	}
	var parts []string
	for i := 0; i < len(as); {
		j, fenced := i, 0
		for ; j < len(as) && as[j].Kind == as[i].Kind; j++ {
			if as[j].Fenced {
				fenced++
			}
		}
		s := fmt.Sprintf("%d %s", j-i, as[i].Kind)
		if fenced > 0 {
			s += fmt.Sprintf(" (%d fenced)", fenced)
		}
		parts = append(parts, s)
		i = j
	}
	return strings.Join(parts, ", ")
}

// historyEnd returns the time of the last op, at least 1 ms.
func historyEnd(h history.History) time.Duration {
	end := time.Millisecond
	for _, op := range h {
		end = max(end, op.Time)
	}
	return end
}

// secs renders d as seconds with millisecond precision, e.g. "2.857 s".
func secs(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

// span renders a length of time for people: "0.667 ms", "3.008 s".
func span(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.3f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

// joinInts joins xs with sep.
func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, sep)
}
