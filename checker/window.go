package checker

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The classes of a lost-lock window (Window.Class).
const (
	// ClassToldThenWrote: the holder's client had been told the lock was
	// gone and it still started an access: a library or application bug.
	ClassToldThenWrote = "wrote after it was told"
	// ClassBeforeKnown: it accessed the resource in the window, but no
	// signal had reached it before it started to: a design that needs
	// fencing.
	ClassBeforeKnown = "wrote before it could know"
	// ClassStopped: it made no access in the window.
	ClassStopped = "stopped in time"
)

// NewWindows returns the lost-lock window checker. It joins the server's
// side of a grant (the lock service released it: a history.FServerRelease
// op that an observer recorded) with the client's (its holder's ops), for
// every grant the server released while its holder still believed it held
// it (before the holder invoked its release or was retired). For each such
// grant it finds when the holder learned of the loss (the first of its
// lock client's events that says so, or the completion of its release that
// failed or found the lock gone, after the server's release; never, when
// it let go or was retired without being told), the resource accesses it
// made in between, and a class: ClassToldThenWrote, ClassBeforeKnown or
// ClassStopped. Its Stats give the windows (Window) and their distribution
// (count, median, p99, max), the class counts, and the observer's lag
// measured by its probes. It decides nothing: the result is always Valid
// (Unknown for a malformed history, which every other checker calls
// Unknown too).
func NewWindows() Checker { return windows{} }

// windows implements NewWindows.
type windows struct{}

// Name returns "windows".
func (windows) Name() string { return "windows" }

// Check checks h.
func (c windows) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// Window is one grant's lost-lock window, as results.json lists it; times
// are in seconds since the history began.
type Window struct {
	// Key, Process, Owner and Token name the grant.
	Key     string `json:"key"`
	Process int    `json:"process"`
	Owner   string `json:"owner,omitempty"`
	Token   int64  `json:"token,omitempty"`
	// Nodes are the lock nodes whose release ended the grant.
	Nodes []string `json:"nodes,omitempty"`
	// How the server released it (history.ReleaseExpired, ...), and the
	// lease or session the key went with, when it had one.
	How   string `json:"how"`
	Lease string `json:"lease,omitempty"`
	// Backend is the database session the lock went with, when the
	// observer named it (history.Value.Backend).
	Backend int64 `json:"backend,omitempty"`
	// Released is when the server released it; Heard when the observer
	// heard of that.
	Released float64 `json:"released_s"`
	Heard    float64 `json:"heard_s"`
	// Learned is when the holder learned of the loss, nil when it never
	// did; LearnedBy says how ("its release found the lock gone").
	Learned   *float64 `json:"learned_s,omitempty"`
	LearnedBy string   `json:"learned_by"`
	// Length is the window: from the release to Learned, or to the
	// holder's release or retirement when it never learned.
	Length float64 `json:"window_s"`
	// Accesses are the critical sections that could have touched the
	// resource in the window, Refused those the fenced resource refused,
	// After those started after the holder was told.
	Accesses int `json:"accesses"`
	Refused  int `json:"refused,omitempty"`
	After    int `json:"after_told,omitempty"`
	// Class is ClassToldThenWrote, ClassBeforeKnown or ClassStopped.
	Class string `json:"class"`
	// Ops are the history indices of the acquire, the server release and
	// the op the holder learned by.
	Ops []int `json:"ops"`
}

// lostWindow is a Window on the history's clock.
type lostWindow struct {
	hold     hold
	nodes    []string
	how      string
	lease    string
	backend  int64
	released time.Duration
	heard    time.Duration
	learned  time.Duration // -1: never told
	by       string
	end      time.Duration // learned, or the hold's end
	accesses int
	refused  int
	after    int
	class    string
	ops      []int
}

// serverRelease is one observed release of a lock key.
type serverRelease struct {
	op   *history.Op
	node string
	at   time.Duration
}

// The release's lock key, and what the observer knew of its grant: the
// owner, the token and the database session. They are read from the op:
// a long run observes hundreds of thousands of releases, and a copy of
// each field in each would be most of what the windows allocate.
func (r serverRelease) key() string    { return r.op.Key }
func (r serverRelease) owner() string  { return r.op.Value.Owner }
func (r serverRelease) token() int64   { return r.op.Value.Token }
func (r serverRelease) backend() int64 { return r.op.Value.Backend }

// checkAnalysis implements analyzer.
func (c windows) checkAnalysis(_ context.Context, a *analysis) Result {
	r := newResult(c.Name())
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	ws, lags, observed := lostWindows(a)
	r.Stats["server_releases"] = observed
	r.Stats["probes"] = len(lags)
	if len(lags) > 0 {
		r.Stats["observer_lag"] = distribution(lags)
	}
	if observed == 0 && len(lags) == 0 {
		return r
	}
	list := make([]Window, 0, len(ws))
	lengths := make([]time.Duration, 0, len(ws))
	classes := map[string]int{ClassToldThenWrote: 0, ClassBeforeKnown: 0, ClassStopped: 0}
	for _, w := range ws {
		list = append(list, w.export())
		lengths = append(lengths, w.end-w.released)
		classes[w.class]++
	}
	r.Stats["windows"] = list
	r.Stats["window"] = distribution(lengths)
	r.Stats["classes"] = classes
	return r
}

// export renders w for results.json.
func (w lostWindow) export() Window {
	out := Window{Key: w.hold.key, Process: w.hold.proc, Owner: w.hold.owner, Token: w.hold.token, Nodes: w.nodes, How: w.how, Lease: w.lease, Backend: w.backend,
		Released: seconds(w.released), Heard: seconds(w.heard), LearnedBy: w.by, Length: seconds(w.end - w.released),
		Accesses: w.accesses, Refused: w.refused, After: w.after, Class: w.class, Ops: w.ops}
	if w.learned >= 0 {
		l := seconds(w.learned)
		out.Learned = &l
	}
	return out
}

// seconds renders d in seconds, to the microsecond.
func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1e6) / 1e6 }

// distribution returns count, median, p99 and max of ds, in seconds
// (nearest rank).
func distribution(ds []time.Duration) map[string]any {
	s := slices.Clone(ds)
	slices.Sort(s)
	out := map[string]any{"count": len(s)}
	if len(s) == 0 {
		return out
	}
	rank := func(p float64) time.Duration { return s[int(math.Ceil(p*float64(len(s))))-1] }
	out["median_s"] = seconds(rank(0.5))
	out["p99_s"] = seconds(rank(0.99))
	out["max_s"] = seconds(s[len(s)-1])
	return out
}

// lostWindows returns the windows of the grants the server released while
// their holders held them, in order of release; the probes' lags; and how
// many releases of lock keys were observed. They are found once per
// analysis: the windows checker and the double holders' stories share
// them.
func lostWindows(a *analysis) ([]lostWindow, []time.Duration, int) {
	a.windowsOnce.Do(func() { a.windows, a.lags, a.observed = findWindows(a) })
	return a.windows, a.lags, a.observed
}

// findWindows implements lostWindows.
func findWindows(a *analysis) ([]lostWindow, []time.Duration, int) {
	n := 0
	for i := range a.h {
		if a.h[i].F == history.FServerRelease {
			n++
		}
	}
	rels := make([]serverRelease, 0, n)
	var lags []time.Duration
	observed := 0
	sessions := false // a release names a database session
	nodes := map[string]bool{}
	for i := range a.h {
		op := &a.h[i]
		at, ok := op.ReleaseAt()
		if !ok {
			continue
		}
		v, x := op.Value, op.Value.Ext()
		node := ""
		if len(x.Nodes) > 0 {
			node = x.Nodes[0]
			nodes[node] = true
		}
		if x.Release.Probe {
			lags = append(lags, x.Release.Lag)
			continue
		}
		if op.Key == "" {
			continue
		}
		observed++
		if v.Owner == "" && v.Token == 0 && x.Release.How == history.ReleaseDeleted {
			// A deletion of a key the observer never read: a quick
			// grant's own release, most likely, but it names no grant,
			// and placed by time it might fall in the next one's.
			continue
		}
		rels = append(rels, serverRelease{op: op, node: node, at: at})
		sessions = sessions || v.Backend != 0
	}
	if len(rels) == 0 {
		return nil, lags, observed
	}
	holds := a.getHolds()
	// A client may use one owner for several grants (an etcd session's
	// lock key names its lease, not the grant): the owner narrows the
	// holds, the token or the time picks one.
	// The maps are keyed by structs, not joined strings: a long run has
	// hundreds of thousands of holds, and a joined key is an allocation.
	byOwner := newHoldsBy[ownerKey](len(holds))
	byKey := map[string][]int{}
	byToken := newHoldsBy[tokenKey](len(holds))
	for i, hd := range holds {
		if hd.owner != "" {
			byOwner.add(ownerKey{hd.key, hd.owner}, i)
		}
		byKey[hd.key] = append(byKey[hd.key], i)
		if hd.token != 0 {
			byToken.add(tokenKey{hd.key, hd.token}, i)
		}
	}
	// A database release names the session that held the lock, not the
	// grant's owner, which the server never sees; the session-lock
	// designs record the session on their grants.
	var bySession map[sessionKey][]int
	var keyed map[string]bool // keys whose grants name their session
	if sessions {
		bySession, keyed = map[sessionKey][]int{}, map[string]bool{}
		for i, hd := range holds {
			if b := acquireBackend(a, hd); b != 0 {
				k := sessionKey{hd.key, b}
				bySession[k] = append(bySession[k], i)
				keyed[hd.key] = true
			}
		}
	}
	// Each hold's releases, by node: the first one each node made.
	got := map[int]map[string]serverRelease{}
	var ownerBuf, tokenBuf [1]int
	for _, rel := range rels {
		// A release of an owner no grant had is of no grant: RedLock's
		// cleanup after a failed acquire, a waiter's node or key.
		idx := byKey[rel.key()]
		var i int
		var ok bool
		switch {
		case rel.owner() != "":
			idx = byOwner.get(ownerKey{rel.key(), rel.owner()}, &ownerBuf)
			i, ok = grantAt(holds, idx, byToken.get(tokenKey{rel.key(), rel.token()}, &tokenBuf), rel)
		case rel.backend() != 0 && keyed[rel.key()]:
			i, ok = sessionGrant(holds, bySession[sessionKey{rel.key(), rel.backend()}], &rel)
		default:
			i, ok = grantAt(holds, idx, byToken.get(tokenKey{rel.key(), rel.token()}, &tokenBuf), rel)
		}
		if !ok {
			continue
		}
		if rel.at >= holds[i].end {
			// At or after the holder let go (its own release, mostly):
			// no window. lostAt takes the need-th earliest release of a
			// hold, and a window is one released before the hold ended,
			// so a release this late can neither open one nor move one
			// that earlier releases open.
			continue
		}
		if got[i] == nil {
			got[i] = map[string]serverRelease{}
		}
		if old, ok := got[i][rel.node]; !ok || rel.at < old.at {
			got[i][rel.node] = rel
		}
	}
	if len(got) == 0 {
		return nil, lags, observed
	}
	quorum := len(nodes)/2 + 1
	type lost struct {
		i   int
		rel serverRelease
	}
	var found []lost
	procs := map[int]bool{} // the holders of the windows
	for i, per := range got {
		hd := holds[i]
		rel, ok := lostAt(hd, per, quorum)
		if !ok || rel.at >= hd.end {
			continue
		}
		found = append(found, lost{i, rel})
		procs[hd.proc] = true
	}
	// The holders' ops and critical sections only: a long run has
	// millions of ops and a few windows.
	byProc := opsByProcess(a.h, procs)
	sections := map[int][]pair{} // each holder's critical sections
	for _, pr := range a.pairs {
		if pr.Invoke.F == history.FCS && procs[pr.Invoke.Process] {
			sections[pr.Invoke.Process] = append(sections[pr.Invoke.Process], pr)
		}
	}
	byInvoke := func(x, y pair) int { return cmp.Compare(x.Invoke.Time, y.Invoke.Time) }
	for _, ss := range sections {
		if !slices.IsSortedFunc(ss, byInvoke) { // a history written by hand
			slices.SortStableFunc(ss, byInvoke)
		}
	}
	var out []lostWindow
	for _, f := range found {
		hd, rel, per := holds[f.i], f.rel, got[f.i]
		seen := rel.op.Value.Ext().Release
		w := lostWindow{hold: hd, how: seen.How, lease: seen.Lease, backend: rel.backend(),
			released: rel.at, heard: rel.op.Time, learned: -1, ops: []int{hd.acquire, rel.op.Index}}
		for _, r := range per {
			if r.at <= rel.at && r.node != "" {
				w.nodes = append(w.nodes, r.node)
			}
		}
		slices.Sort(w.nodes)
		w.learn(byProc[hd.proc])
		w.access(sections[hd.proc])
		out = append(out, w)
	}
	slices.SortFunc(out, func(x, y lostWindow) int {
		return cmp.Or(cmp.Compare(x.released, y.released), cmp.Compare(x.hold.acquire, y.hold.acquire))
	})
	return out, lags, observed
}

// holdsBy indexes holds by a key of theirs: each key's holds, in order.
// Most keys (an owner, a token) name one hold, so a key's first hold is
// an int in a map and only a key with more has a list: a long run has
// hundreds of thousands of holds, and a list each is an allocation each.
type holdsBy[K comparable] struct {
	first map[K]int
	more  map[K][]int
}

// newHoldsBy returns an empty index sized for n holds.
func newHoldsBy[K comparable](n int) holdsBy[K] {
	return holdsBy[K]{first: make(map[K]int, n), more: map[K][]int{}}
}

// add appends hold i to k's holds.
func (m holdsBy[K]) add(k K, i int) {
	j, ok := m.first[k]
	if !ok {
		m.first[k] = i
		return
	}
	s, ok := m.more[k]
	if !ok {
		s = []int{j}
	}
	m.more[k] = append(s, i)
}

// get returns k's holds, in buf when there is one.
func (m holdsBy[K]) get(k K, buf *[1]int) []int {
	if s, ok := m.more[k]; ok {
		return s
	}
	if j, ok := m.first[k]; ok {
		buf[0] = j
		return buf[:]
	}
	return nil
}

// tokenKey keys the holds of a key with a token.
type tokenKey struct {
	key   string
	token int64
}

// ownerKey keys the holds of a key with an owner.
type ownerKey struct{ key, owner string }

// sessionKey keys the holds of a key granted to a database session.
type sessionKey struct {
	key     string
	session int64
}

// sessionGrant returns the hold among idx (the holds of rel's key granted
// to rel's database session, in order of grant) that rel ended: the one
// granted last before the observer heard of the release. A session holds
// one grant of a key at a time, and a session the server ended is granted
// nothing after. A sampling observer may place the release a little
// before the grant's ok reached the history (it saw the lock held before
// the holder heard it had it); such a release is moved to the grant, as
// the server cannot have let go before it granted.
func sessionGrant(holds []hold, idx []int, rel *serverRelease) (int, bool) {
	heard := max(rel.at, rel.op.Time)
	p := sort.Search(len(idx), func(p int) bool { return holds[idx[p]].start > heard })
	if p == 0 {
		return 0, false
	}
	i := idx[p-1]
	rel.at = max(rel.at, holds[i].start)
	return i, true
}

// grantAt returns the hold among idx (rel's key's or its owner's, in order
// of grant) that rel ended: the one with rel's token when the observer
// knew it (withToken are the key's holds with that token, in order of
// grant), else the one granted last at or before the release on the node
// it was observed on. A token no hold has falls back to the time only
// among an owner's holds. The holds of idx start in order, so the search
// by time is a binary one: a long run has hundreds of thousands.
func grantAt(holds []hold, idx, withToken []int, rel serverRelease) (int, bool) {
	if rel.token() != 0 {
		for _, i := range withToken {
			if rel.owner() == "" || holds[i].owner == rel.owner() {
				return i, true
			}
		}
		if rel.owner() == "" {
			return 0, false
		}
	}
	after := sort.Search(len(idx), func(p int) bool { return holds[idx[p]].start > rel.at })
	for p := after - 1; p >= 0; p-- {
		hd := holds[idx[p]]
		if len(hd.nodes) == 0 || rel.node == "" || containsString(hd.nodes, rel.node) {
			return idx[p], true
		}
	}
	return 0, false
}

// containsString reports whether ss holds s.
func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// lostAt returns the release that ended hd's grant: on a grant of one
// node (or of nodes the design did not name), the first release; on a
// grant of several nodes (RedLock's majority), the release after which
// fewer than quorum of them still held it.
func lostAt(hd hold, per map[string]serverRelease, quorum int) (serverRelease, bool) {
	var rs []serverRelease
	for _, r := range per {
		if len(hd.nodes) < 2 || containsString(hd.nodes, r.node) {
			rs = append(rs, r)
		}
	}
	// By time, and by node at one instant: per is a map, and the release
	// chosen must not depend on its order.
	slices.SortFunc(rs, func(x, y serverRelease) int { return cmp.Or(cmp.Compare(x.at, y.at), strings.Compare(x.node, y.node)) })
	need := 1
	if len(hd.nodes) >= 2 {
		need = len(hd.nodes) - quorum + 1
	}
	if need < 1 || len(rs) < need {
		return serverRelease{}, false
	}
	return rs[need-1], true
}

// opsByProcess returns the ops of each worker process of procs, in
// history order, each list allocated once at its size.
func opsByProcess(h history.History, procs map[int]bool) map[int][]*history.Op {
	n := map[int]int{}
	for i := range h {
		if op := &h[i]; procs[op.Process] && !op.IsNemesis() {
			n[op.Process]++
		}
	}
	out := make(map[int][]*history.Op, len(n))
	for p, c := range n {
		out[p] = make([]*history.Op, 0, c)
	}
	for i := range h {
		if op := &h[i]; procs[op.Process] && !op.IsNemesis() {
			out[op.Process] = append(out[op.Process], op)
		}
	}
	return out
}

// lossWords are the words of a lock client's event that say the lock, its
// session or its lease is gone or in doubt.
var lossWords = []string{"expired", "lost", "refused", "failed", "disconnected", "suspended", "ended", "ran out", "validity"}

// isLossEvent reports whether a lock client's event says the lock may be
// gone; a failpoint's event and a mark do not.
func isLossEvent(detail string) bool {
	if strings.HasPrefix(detail, history.EventFailpointPrefix) || history.MarkName(detail) != "" {
		return false // a failpoint's stop, a mark (history.Op.IsMark)
	}
	d := strings.ToLower(detail)
	for _, w := range lossWords {
		if strings.Contains(d, w) {
			return true
		}
	}
	return false
}

// learn sets when the holder learned of the loss: the first of its ops
// since the grant that told it (tells), up to the completion of the op
// that ended its hold. Without one, the window ends with the hold. A
// holder told before the server released the lock has an empty window.
func (w *lostWindow) learn(ops []*history.Op) {
	hd := w.hold
	w.end = hd.end
	w.by = "never told: " + untilWords(hd)
	// ops are in history order: start at the grant's acquire.
	from := sort.Search(len(ops), func(i int) bool { return ops[i].Index >= hd.acquire })
	for _, op := range ops[from:] {
		if by := tells(op, hd.key); by != "" {
			// Told before the server let go, it knew in time: the
			// window is empty.
			w.learned, w.end, w.by = op.Time, max(op.Time, w.released), by
			w.ops = append(w.ops, op.Index)
			return
		}
		// The process's first op after the release or crash that ended
		// the hold, but for its lock client's events, is that op's
		// completion (one op at a time, history.Pairs).
		if hd.endKind != endHistory && op.Index > hd.endOp && !op.IsLone() {
			return // the op that ended the hold completed and told nothing
		}
	}
}

// tells says how op told its process that its lock on key was gone or in
// doubt, "" when it did not: an event of its lock client that says so, a
// critical section its lock client refused for a lost lock (a validity
// check; a refusal of the fenced resource is an access, not a signal), or
// the completion of its release of key that failed, ended in doubt or
// found the lock gone.
func tells(op *history.Op, key string) string {
	if op.F == history.FEvent {
		if op.Value != nil && isLossEvent(op.Value.Ext().Detail) {
			return fmt.Sprintf("its lock client reported %q", op.Value.Ext().Detail)
		}
		return ""
	}
	if op.Key != key {
		return ""
	}
	if op.F == history.FCS {
		if op.Type == history.Fail && isLossEvent(op.Error) && (op.Value == nil || op.Value.Ext().Rejected == "") {
			return fmt.Sprintf("its lock client refused its critical section (%q)", op.Error)
		}
		return ""
	}
	if op.F != history.FRelease {
		return ""
	}
	if op.Type == history.Fail {
		return "its release failed"
	}
	if op.Type == history.Info {
		return "its release ended in doubt"
	}
	if op.Type == history.OK && op.Value != nil && op.Value.Released != nil && !*op.Value.Released {
		return "its release found the lock gone"
	}
	return ""
}

// untilWords says how a hold ended, for a holder that was never told.
func untilWords(hd hold) string {
	switch hd.endKind {
	case endRelease:
		return "it released at " + secs(hd.end)
	case endCrash:
		return "it was retired at " + secs(hd.end)
	}
	return "it held the lock to the end of the history at " + secs(hd.end)
}

// access counts, among sections (the holder's own critical sections), the
// ones on the key that could have
// touched the resource in the window (started before it was told and
// before its hold ended, and not finished before the release), those the
// fenced resource refused, and those it started after it was told, while
// it still believed it held the lock; and sets the class.
func (w *lostWindow) access(pairs []pair) {
	hd := w.hold
	// pairs are sorted by invocation time: start at the hold's.
	from := sort.Search(len(pairs), func(i int) bool { return pairs[i].Invoke.Time >= hd.start })
	for _, pr := range pairs[from:] {
		inv := pr.Invoke
		if inv.F != history.FCS || inv.Process != hd.proc || inv.Key != hd.key || inv.Time < hd.start || inv.Time >= hd.end {
			continue
		}
		refused := pr.Type() == history.Fail && pr.Complete.Value != nil && pr.Complete.Value.Ext().Rejected != ""
		if pr.Type() == history.Fail && !refused {
			continue // it certainly did not touch the resource
		}
		if pr.Complete != nil && pr.Type() != history.Info && pr.Complete.Time <= w.released {
			continue // done before the server let go
		}
		if w.learned >= 0 && inv.Time >= w.learned {
			w.after++
		}
		w.accesses++
		if refused {
			w.refused++
		}
	}
	w.class = ClassStopped
	if w.after > 0 {
		w.class = ClassToldThenWrote
	} else if w.accesses > 0 {
		w.class = ClassBeforeKnown
	}
}

// windowStories returns, by the history index of a grant's acquire, the
// sentence that tells its lost-lock window, for the stories of double
// holders: nil when the history has no observed release.
func windowStories(a *analysis) map[int]string {
	ws, _, _ := lostWindows(a)
	if len(ws) == 0 {
		return nil
	}
	out := make(map[int]string, len(ws))
	for _, w := range ws {
		out[w.hold.acquire] = w.sentence()
	}
	return out
}

// sentence tells w: "The server's side: lock0 expired key k0 at 5.62 s
// (heard at 5.63 s); process 2 learned of it at 7.69 s, when its release
// found the lock gone, and accessed the resource once in between, before
// it could know."
func (w lostWindow) sentence() string {
	s := "The server's side: " + w.releaseWords() + " at " + secs(w.released)
	if secs(w.heard) != secs(w.released) {
		s += fmt.Sprintf(" (the observer heard it at %s)", secs(w.heard))
	}
	p := w.hold.proc
	if w.learned < 0 {
		s += fmt.Sprintf("; process %d was never told (%s, %s later)", p, strings.TrimPrefix(w.by, "never told: "), secs(w.end-w.released))
	} else if w.learned < w.released {
		s += fmt.Sprintf("; process %d had been told at %s, when %s, before the server let go", p, secs(w.learned), w.by)
	} else {
		s += fmt.Sprintf("; process %d learned of it at %s, when %s, %s later", p, secs(w.learned), w.by, secs(w.end-w.released))
	}
	switch w.class {
	case ClassStopped:
		s += ", and made no access in between"
	case ClassToldThenWrote:
		s += fmt.Sprintf(", and accessed the resource %s in between, %d after it was told", times(w.accesses), w.after)
	default:
		s += fmt.Sprintf(", and accessed the resource %s in between, before it could know", times(w.accesses))
	}
	if w.refused > 0 {
		s += fmt.Sprintf(" (the fenced resource refused %d)", w.refused)
	}
	return s + "."
}

// releaseWords says what the server did, without the time: "lock0
// expired key k0", "the server deleted key k0 with its ended lease
// 0x69", "pg0 ended session 7363 and its lock on key k0", "the promoted
// replica redis1 did not have key k0".
func (w lostWindow) releaseWords() string {
	server := "the server"
	if len(w.nodes) > 0 {
		server = joinAnd(w.nodes)
	}
	key := w.hold.key
	switch w.how {
	case history.ReleaseSessionEnded:
		session := w.lease
		if session == "" && w.backend != 0 {
			session = fmt.Sprintf("session %d", w.backend)
		}
		if session == "" {
			return fmt.Sprintf("%s ended the session that held key %s", server, key)
		}
		return fmt.Sprintf("%s ended %s and its lock on key %s", server, session, key)
	case history.ReleaseFailoverLost:
		replica := "the promoted replica"
		if len(w.nodes) > 0 {
			replica += " " + joinAnd(w.nodes)
		}
		return fmt.Sprintf("%s did not have key %s", replica, key)
	}
	verb := map[string]string{history.ReleaseExpired: "expired", history.ReleaseDeleted: "deleted",
		history.ReleaseLease: "deleted", history.ReleaseOverwritten: "let another client write over"}[w.how]
	if verb == "" {
		verb = "released"
	}
	with := ""
	if w.how == history.ReleaseLease {
		with = " with its ended lease"
		if w.lease != "" {
			with = " with its ended " + w.lease
		}
	} else if w.lease != "" {
		with = " (" + w.lease + ")"
	}
	return fmt.Sprintf("%s %s key %s%s", server, verb, key, with)
}

// times renders a count of times: "once", "twice", "3 times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}
