package learn

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Timeline is what the step-through player draws of one lock key of a
// history: per client, when the lock server held the lock for it and when
// it believed it held it; per lock node of a design with several (RedLock),
// whose key it held; the faults; and, in red, the times when two clients
// believed they held the lock, or when the server held it for a client
// that was dead. Times are seconds since the history began.
type Timeline struct {
	Key string `json:"key"`
	// End is the time of the history's last op.
	End float64 `json:"end"`
	// Lease is the lock's lease (or session timeout), in seconds.
	Lease float64 `json:"lease"`
	// Observed says the history has the server's own releases
	// (server-release ops); without them every server band is inferred.
	Observed bool       `json:"observed"`
	Clients  []Client   `json:"clients"`
	Nodes    []NodeLane `json:"nodes,omitempty"`
	Faults   []Span     `json:"faults"`
	Red      []Span     `json:"red"`
}

// Client is one worker process's two bands and its marks.
type Client struct {
	Process int `json:"process"`
	// Server are the spans when the lock service held the lock for it.
	Server []Span `json:"server"`
	// Believe are the spans from a grant's return to the invocation of
	// its release (or the process's death, or the end of the history).
	Believe []Span `json:"believe"`
	Marks   []Mark `json:"marks"`
}

// NodeLane is one lock node of a design that takes the lock on several.
type NodeLane struct {
	Node string `json:"node"`
	Held []Span `json:"held"`
}

// Span is an interval of a band.
type Span struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
	// Label says what the span is, for its tooltip and the status line.
	Label string `json:"label"`
	// Inferred marks a server span whose end was not observed but
	// inferred from the lease or the release.
	Inferred bool `json:"inferred,omitempty"`
	// Kind is, for a red span, "overlap" or "stuck"; for a fault, its op.
	Kind string `json:"kind,omitempty"`
	// Processes are the clients a red span or a fault concerns.
	Processes []int `json:"processes,omitempty"`
	// Nodes are the lock nodes a fault struck.
	Nodes []string `json:"nodes,omitempty"`
}

// Mark is an instant on a client's lane: a grant, a failed acquire, a
// write, a refused write, a report of its lock client, a crash.
type Mark struct {
	At    float64 `json:"at"`
	Kind  string  `json:"kind"`
	Label string  `json:"label"`
}

// grant is one acquire that returned ok, while it is being followed.
type grant struct {
	proc     int
	at       time.Duration
	owner    string
	token    int64
	nodes    []string
	believed time.Duration // release invoked, death, or -1 while open
	released time.Duration // release ok that found the key ours, or -1
	nodeEnd  map[string]time.Duration
	dead     time.Duration // when its process was retired, or -1
	noTTL    bool          // the key was set with no TTL
}

func secs(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// NewTimeline builds the timeline of h's first lock key; lease is the
// lock's lease, from which a server band is inferred where the history has
// no server-release op for the grant.
func NewTimeline(h history.History, lease time.Duration) Timeline {
	keys := h.Keys()
	tl := Timeline{Lease: secs(lease), Faults: []Span{}, Red: []Span{}}
	if len(keys) > 0 {
		tl.Key = keys[0]
	}
	var end time.Duration
	for _, op := range h {
		end = max(end, op.Time)
	}
	tl.End = secs(end)

	var grants []*grant
	open := make(map[int]*grant)           // by process: its grant not yet released
	inDoubt := make(map[int]time.Duration) // by process: invocation of its acquire in flight
	marks := make(map[int][]Mark)
	procs := make(map[int]bool)
	nodeSet := make(map[string]bool)
	for i := range h {
		op := &h[i]
		if op.F == history.FServerRelease {
			if op.Value != nil && op.Value.Ext().Release != nil && !op.Value.Ext().Release.Probe {
				tl.Observed = true
			}
		}
		if op.IsNemesis() || (op.Key != "" && op.Key != tl.Key) {
			if op.F == history.FServerRelease && op.Key == tl.Key {
				observe(grants, op)
			}
			continue
		}
		p := op.Process
		procs[p] = true
		v := op.Value
		switch {
		case op.F == history.FAcquire && op.Type == history.Invoke:
			inDoubt[p] = op.Time
		case op.F == history.FAcquire && op.Type == history.OK && v != nil:
			delete(inDoubt, p)
			g := &grant{proc: p, at: op.Time, owner: v.Owner, token: v.Token, nodes: v.Ext().Nodes, believed: -1, released: -1, dead: -1,
				nodeEnd: make(map[string]time.Duration)}
			for _, n := range v.Ext().Nodes {
				nodeSet[n] = true
			}
			grants = append(grants, g)
			open[p] = g
			label := "granted"
			if v.Token != 0 {
				label += fmt.Sprintf(", token %d", v.Token)
			}
			if len(v.Ext().Nodes) > 1 {
				label += " on " + strings.Join(v.Ext().Nodes, ", ")
			}
			marks[p] = append(marks[p], Mark{At: secs(op.Time), Kind: "grant", Label: label})
		case op.F == history.FAcquire && op.Type == history.Info:
			// An acquire in doubt: a key it set may be there for no one.
			for _, e := range h[:i] {
				if e.Process == p && e.F == history.FEvent && e.Time >= inDoubt[p] && e.Value != nil && strings.Contains(e.Value.Ext().Detail, "no TTL") {
					g := &grant{proc: p, at: e.Time, believed: e.Time, released: -1, dead: -1, noTTL: true, nodeEnd: make(map[string]time.Duration)}
					grants = append(grants, g)
				}
			}
			delete(inDoubt, p)
			label := "its acquire got no answer: in doubt"
			if op.Error != "" {
				label += " (" + op.Error + ")"
			}
			marks[p] = append(marks[p], Mark{At: secs(op.Time), Kind: "doubt", Label: label})
		case op.F == history.FAcquire && op.Type == history.Fail:
			delete(inDoubt, p)
			label := "its acquire failed"
			if op.Error != "" {
				label += ": " + op.Error
			}
			marks[p] = append(marks[p], Mark{At: secs(op.Time), Kind: "denied", Label: label})
		case op.F == history.FAcquire:
			delete(inDoubt, p)
		case op.F == history.FRelease && op.Type == history.Invoke:
			if g := open[p]; g != nil {
				g.believed = op.Time
			}
		case op.F == history.FRelease && op.Type == history.OK:
			if g := open[p]; g != nil {
				if v != nil && v.Released != nil && *v.Released {
					g.released = op.Time
				} else {
					marks[p] = append(marks[p], Mark{At: secs(op.Time), Kind: "lost", Label: "its release found the lock gone"})
				}
				delete(open, p)
			}
		case op.F == history.FRelease:
			delete(open, p)
		case op.F == history.FCrash && op.Type == history.Invoke:
			for _, g := range grants {
				if g.proc == p && g.dead < 0 {
					g.dead = op.Time
					if g.believed < 0 {
						g.believed = op.Time
					}
				}
			}
			delete(open, p)
			marks[p] = append(marks[p], Mark{At: secs(op.Time), Kind: "crash", Label: "killed: process retired"})
		case op.F == history.FCS && op.Type == history.OK && v != nil && v.Wrote != nil:
			marks[p] = append(marks[p], Mark{At: secs(op.Time), Kind: "write", Label: fmt.Sprintf("wrote %d", *v.Wrote)})
		case op.F == history.FCS && op.Type == history.Fail && v != nil && v.Ext().Rejected != "":
			marks[p] = append(marks[p], Mark{At: secs(op.Time), Kind: "refused",
				Label: fmt.Sprintf("the storage refused its %s: it had seen token %d", v.Ext().Rejected, v.Ext().MaxToken)})
		case op.F == history.FEvent && v != nil && v.Ext().Detail != "":
			marks[p] = append(marks[p], Mark{At: secs(op.Time), Kind: "event", Label: "its client reported: " + v.Ext().Detail})
		}
	}

	var nodes []string
	for n := range nodeSet {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	clients := make(map[int]*Client)
	var ps []int
	for p := range procs {
		if p >= 0 {
			ps = append(ps, p)
		}
	}
	sort.Ints(ps)
	for _, p := range ps {
		clients[p] = &Client{Process: p, Server: []Span{}, Believe: []Span{}, Marks: append([]Mark{}, marks[p]...)}
	}
	nodeHeld := make(map[string][]Span)
	for _, g := range grants {
		c := clients[g.proc]
		if c == nil {
			continue
		}
		if !g.noTTL {
			to := g.believed
			label := "you believe you hold it"
			if to < 0 {
				to, label = end, "you believe you hold it (to the end of the run)"
			}
			if g.token != 0 {
				label += fmt.Sprintf(" (token %d)", g.token)
			}
			c.Believe = append(c.Believe, Span{From: secs(g.at), To: secs(to), Label: label})
		}
		s := serverSpan(g, lease, end, len(nodes))
		c.Server = append(c.Server, s)
		if g.dead >= 0 && s.To > secs(g.dead) {
			tl.Red = append(tl.Red, Span{From: max(secs(g.dead), s.From), To: s.To, Kind: "stuck", Processes: []int{g.proc},
				Label: fmt.Sprintf("the server holds the lock for process %d, which is dead: nobody else can take it", g.proc)})
		}
		if len(nodes) > 1 {
			for _, n := range g.nodes {
				to, inferred := g.nodeEnd[n], false
				if to == 0 {
					to, inferred = g.at+lease, true
					if g.released >= 0 && g.released < to {
						to, inferred = g.released, false
					}
				}
				nodeHeld[n] = append(nodeHeld[n], Span{From: secs(g.at), To: secs(max(to, g.at)), Inferred: inferred, Processes: []int{g.proc},
					Label: fmt.Sprintf("%s holds the key of process %d", n, g.proc)})
			}
		}
	}
	for _, p := range ps {
		tl.Clients = append(tl.Clients, *clients[p])
	}
	if len(nodes) > 1 {
		for _, n := range nodes {
			tl.Nodes = append(tl.Nodes, NodeLane{Node: n, Held: append([]Span{}, nodeHeld[n]...)})
		}
	}
	if !tl.Observed {
		// No observer recorded this service's releases: every server band
		// is an inference, whatever it was inferred from.
		for i := range tl.Clients {
			for j := range tl.Clients[i].Server {
				s := &tl.Clients[i].Server[j]
				if !s.Inferred {
					s.Inferred = true
					s.Label += " (inferred: no observer records this service's releases)"
				}
			}
		}
	}
	tl.Red = append(overlaps(tl.Clients, tl.Key), tl.Red...)
	sort.SliceStable(tl.Red, func(i, j int) bool { return tl.Red[i].From < tl.Red[j].From })
	for _, f := range h.Faults() {
		label := f.F
		if f.Detail != "" {
			label += ": " + f.Detail
		}
		tl.Faults = append(tl.Faults, Span{From: secs(f.Start), To: secs(f.End), Kind: f.F, Label: label, Processes: f.Targets, Nodes: f.Nodes})
	}
	return tl
}

// observe records a server's release of a grant it names by owner.
func observe(grants []*grant, op *history.Op) {
	v := op.Value
	if v == nil || v.Owner == "" {
		return
	}
	at, _ := op.ReleaseAt()
	// The controller cannot hear of a release before it happened: an
	// instant read off a server clock that a fault moved may be later.
	at = min(at, op.Time)
	for i := len(grants) - 1; i >= 0; i-- {
		g := grants[i]
		if g.owner != v.Owner || g.at > op.Time {
			continue
		}
		nodes := v.Ext().Nodes
		if len(nodes) == 0 {
			nodes = []string{""}
		}
		for _, n := range nodes {
			if _, done := g.nodeEnd[n]; !done {
				g.nodeEnd[n] = max(at, g.at)
			}
		}
		return
	}
}

// serverSpan is when the lock service held g's lock for its holder: until
// the observed release (on a majority of the nodes, for a lock on several),
// else until a release that found the key still the holder's, else the
// lease after the grant, inferred; a key set with no TTL, to the end.
func serverSpan(g *grant, lease, end time.Duration, nodes int) Span {
	s := Span{From: secs(g.at), Label: "the server holds it for you"}
	var to time.Duration
	switch {
	case g.noTTL:
		s.Label, s.Inferred = "the server holds it for you: the key was set with no TTL", true
		to = end
	case nodes > 1 && len(g.nodeEnd) > 0:
		// Held while a majority of the nodes held the key.
		var ends []time.Duration
		for _, n := range g.nodes {
			e, ok := g.nodeEnd[n]
			if !ok {
				e = g.at + lease
				if g.released >= 0 && g.released < e {
					e = g.released
				}
			}
			ends = append(ends, e)
		}
		sort.Slice(ends, func(i, j int) bool { return ends[i] > ends[j] })
		if maj := nodes/2 + 1; len(ends) >= maj {
			to = ends[maj-1]
		} else {
			to = g.at
		}
		s.Label = "a majority of the servers holds it for you"
	case len(g.nodeEnd) > 0:
		for _, e := range g.nodeEnd {
			to = e
		}
	case g.released >= 0 && g.released <= g.at+lease:
		to = g.released
	default:
		s.Label, s.Inferred = "the server holds it for you (inferred from the lease: no observed release)", true
		to = g.at + lease
		if g.released >= 0 {
			to = min(to, g.released)
		}
	}
	s.To = secs(min(max(to, g.at), end))
	return s
}

// overlaps returns the times when two or more clients believed they held
// the lock.
func overlaps(clients []Client, key string) []Span {
	type edge struct {
		at    float64
		delta int
		proc  int
	}
	var es []edge
	for _, c := range clients {
		for _, b := range c.Believe {
			if b.To > b.From {
				es = append(es, edge{b.From, 1, c.Process}, edge{b.To, -1, c.Process})
			}
		}
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].at != es[j].at {
			return es[i].at < es[j].at
		}
		return es[i].delta < es[j].delta // an end before a start at the same instant
	})
	out := []Span{}
	holders := make(map[int]int)
	var cur *Span
	for _, e := range es {
		holders[e.proc] += e.delta
		if holders[e.proc] == 0 {
			delete(holders, e.proc)
		}
		n := len(holders)
		switch {
		case n >= 2 && cur == nil:
			cur = &Span{From: e.at, Kind: "overlap"}
			for p := range holders {
				cur.Processes = append(cur.Processes, p)
			}
		case n >= 2:
			for p := range holders {
				if !containsInt(cur.Processes, p) {
					cur.Processes = append(cur.Processes, p)
				}
			}
		case n < 2 && cur != nil:
			cur.To = e.at
			sort.Ints(cur.Processes)
			var names []string
			for _, p := range cur.Processes {
				names = append(names, fmt.Sprint(p))
			}
			cur.Label = fmt.Sprintf("clients %s both believe they hold %s", strings.Join(names, " and "), key)
			if cur.To > cur.From {
				out = append(out, *cur)
			}
			cur = nil
		}
	}
	return out
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
