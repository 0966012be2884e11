package sqldb

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

var _ clusters.ReleaseObserver = (*DB)(nil)

// sqlSampleEvery is how often a database observer asks the server which
// sessions hold the run's locks: often enough that a release is placed
// within a few tens of milliseconds, and one query at a time, so a slow
// server is never asked twice at once.
const sqlSampleEvery = 20 * time.Millisecond

// sqlSampleTimeout bounds one sample: a server that does not answer in
// time (paused, restarting) is asked again on a new connection.
const sqlSampleTimeout = 2 * time.Second

// sqlSession is one database session as the observer sees it.
type sqlSession struct {
	id int64 // pg_backend_pid(), CONNECTION_ID()
	// start tells a PostgreSQL pid reused by a later session apart
	// (backend_start); zero on MariaDB, whose ids are never reused.
	start time.Time
	app   string // its application name (clusters.SessionName), "" when none
}

// same reports whether s and o are the same session.
func (s sqlSession) same(o sqlSession) bool { return s.id == o.id && s.start.Equal(o.start) }

// sqlSnapshot is one sample: the live sessions, and which session holds
// each lock the observer watches (a lock key, or the probe's).
type sqlSnapshot struct {
	live map[int64]time.Time
	held map[string]sqlSession
	// ended is the server's count of the sessions it ended itself (and
	// of those whose client vanished without closing them); a server
	// that restarted starts it again from 0.
	ended int64
	// rows are the lock rows of the run's keys (lockcheck_rows, the
	// unique-row designs' locks), by key.
	rows map[string]lockRow
}

// lockRow is a unique-row design's lock as the server holds it: a row of
// lockcheck_rows. Its id is the grant's token and names the row for as
// long as it lives (a re-entry changes its owner, not its id).
type lockRow struct {
	id    int64
	owner string
}

// alive reports whether s is still among the live sessions.
func (sn sqlSnapshot) alive(s sqlSession) bool {
	st, ok := sn.live[s.id]
	return ok && st.Equal(s.start)
}

// sqlSampler asks one database server which sessions hold locks.
type sqlSampler interface {
	// sample returns the live sessions and the holders of keys and of
	// the probe (named probeKey in held).
	sample(ctx context.Context) (sqlSnapshot, error)
	// probe opens a session of its own, takes the probe's lock on it and
	// returns the function that ends that session.
	probe(ctx context.Context) (end func(), err error)
	close()
}

// probeKey names the observer's probe lock in a sqlSnapshot's held.
const probeKey = "\x00probe"

// sqlObservable is a dbEngine whose server an observer can sample: it
// returns a sampler on a connection of its own to the server at addr.
type sqlObservable interface {
	sampler(ctx context.Context, addr string, keys []string) (sqlSampler, error)
}

// ObserveReleases implements ReleaseObserver for the database lock
// services: a session of the observer's own, straight to the server,
// samples every sqlSampleEvery which sessions hold the run's locks
// (observePostgres, observeMariaDB say how). A lock whose holding session
// stopped holding it is a release: history.ReleaseSessionEnded when the session is
// gone, history.ReleaseDeleted when it lives and let go (a holder's own
// release, a commit). The release names the session (Value.Backend: the
// designs record the same id on their grants) but not the grant's owner,
// which the server never sees. A unique-row design's lock is a row of
// lockcheck_rows, which names its owner: a row that is gone, or whose key
// another row holds now, is a release of that owner
// (history.ReleaseDeleted: its own release, or a takeover of an expired
// row).
func (c *DB) ObserveReleases(ctx context.Context, cfg clusters.ObserveConfig) (func(), error) {
	addr := c.Addr()
	var eng dbEngine = c.engine
	if b, ok := eng.(*pgbouncerEngine); ok {
		// Behind the pooler, the sessions that hold locks are the
		// pooler's sessions on its PostgreSQL server: watch that.
		eng, addr = &b.pg, b.pgAddr()
	}
	o, ok := eng.(sqlObservable)
	if !ok {
		return nil, fmt.Errorf("observe %s: %w", c.node, clusters.ErrUnsupported)
	}
	s, err := o.sampler(ctx, addr, cfg.Keys)
	if err != nil {
		return nil, fmt.Errorf("observe %s: %w", c.node, err)
	}
	w := &sqlWatcher{node: c.node, cfg: cfg, s: s, reconnect: func(ctx context.Context) (sqlSampler, error) {
		return o.sampler(ctx, addr, cfg.Keys)
	}}
	ctx, cancel := context.WithCancel(ctx)
	if w.last, err = w.sampleOnce(ctx); err != nil {
		cancel()
		s.close()
		return nil, fmt.Errorf("observe %s: %w", c.node, err)
	}
	w.lastStart = w.start
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.run(ctx)
	}()
	return func() {
		cancel()
		wg.Wait()
		w.closeAll()
	}, nil
}

// sqlWatcher compares each sample with the one before.
type sqlWatcher struct {
	node      string
	cfg       clusters.ObserveConfig
	s         sqlSampler
	reconnect func(ctx context.Context) (sqlSampler, error)
	// last is the latest sample that succeeded, which started at
	// lastStart; start is when the latest sample started and done when
	// it returned (on the history's clock).
	last                   sqlSnapshot
	lastStart, start, done time.Duration
	// ending are the locks whose session was found gone, not reported
	// yet.
	ending []sqlEnd
	// probeEnd ends the probe session in flight (nil: none), started at
	// probeStart; probeHeld says the sampler has seen it hold the probe
	// lock, probeDue fires when to end its session, probeAt is when it
	// was ended (0: not yet); probes counts the probes.
	probeEnd   func()
	probeStart time.Duration
	probeHeld  bool
	probeDue   *time.Timer
	probeAt    time.Duration
	probes     int
}

// sampleOnce takes one sample, reconnecting once when the session is gone
// (the server restarted, or the connection broke).
func (w *sqlWatcher) sampleOnce(ctx context.Context) (sqlSnapshot, error) {
	sctx, cancel := context.WithTimeout(ctx, sqlSampleTimeout)
	defer cancel()
	w.start = w.cfg.Now()
	sn, err := w.s.sample(sctx)
	if err != nil && ctx.Err() == nil {
		w.s.close()
		s, rerr := w.reconnect(sctx)
		if rerr != nil {
			// Keep a closed sampler: the next sample tries again.
			return sqlSnapshot{}, errors.Join(err, rerr)
		}
		w.s = s
		w.start = w.cfg.Now()
		sn, err = w.s.sample(sctx)
	}
	w.done = w.cfg.Now()
	return sn, err
}

// run samples until ctx ends.
func (w *sqlWatcher) run(ctx context.Context) {
	t := time.NewTicker(sqlSampleEvery)
	defer t.Stop()
	probeT, stopProbes := w.cfg.Probes()
	defer stopProbes()
	for {
		select {
		case <-ctx.Done():
			return
		case <-probeT:
			w.startProbe(ctx)
		case <-w.due():
			w.probeAt = w.cfg.Now()
			w.probeEnd()
			w.probeDue = nil
		case <-t.C:
			sn, err := w.sampleOnce(ctx)
			if err != nil {
				continue // the server is away: compare with the next sample
			}
			w.compare(sn)
			w.last, w.lastStart = sn, w.start
		}
	}
}

// compare reports the locks that sn shows released since the last sample,
// and ends or reports the probe.
func (w *sqlWatcher) compare(sn sqlSnapshot) {
	for key, was := range w.last.held {
		if now, ok := sn.held[key]; ok && now.same(was) {
			continue
		}
		if key == probeKey {
			if w.probeAt > 0 {
				heard := w.cfg.Now()
				w.cfg.Report("", &history.Value{
					Backend: was.id,
					Extra:   &history.Extra{Nodes: []string{w.node}, Release: &history.Release{How: history.ReleaseSessionEnded, At: w.probeAt, Probe: true, Lag: max(heard-w.probeAt, 0)}},
				})
			}
			w.dropProbe()
			continue
		}
		_, regranted := sn.held[key]
		end := sqlEnd{key: key, was: was, at: releasedAt(w.lastStart, w.start, regranted), base: w.last.ended}
		if was.id == 0 || sn.alive(was) {
			// It let go (0: a prepared transaction's, committed or
			// rolled back).
			w.report(end, history.ReleaseDeleted, "")
			continue
		}
		w.ending = append(w.ending, end)
	}
	w.settle(sn)
	if _, ok := sn.held[probeKey]; ok && w.probeEnd != nil && !w.probeHeld {
		// Seen holding it: end its session soon, at a phase of the
		// sampling that moves from probe to probe (1, 8, 15, 2, ... ms
		// after this sample), so that the lags measured spread over the
		// sample period as a release's would.
		w.probeHeld = true
		w.probeDue = time.NewTimer(probePhase(w.probes))
	}
	for key, now := range sn.held {
		if was, ok := w.last.held[key]; key != probeKey && (!ok || !was.same(now)) {
			w.cfg.DidRead(key) // a new holder seen
		}
	}
	w.compareRows(sn)
}

// compareRows reports the lock rows that sn shows gone since the last
// sample: deleted by their holder, or by a client that found them expired
// and took the key over (then another row holds it already). A row went
// before this sample returned, after the sample before read it; it is
// placed when this one returned, the latest it can have gone. A release
// names its row's owner and token, so it is never taken for the next
// grant's; placed any earlier, even at this sample's start (its read of
// the rows may come after other queries), a holder's own release could
// seem to come before the holder asked for it.
func (w *sqlWatcher) compareRows(sn sqlSnapshot) {
	for key, was := range w.last.rows {
		now, held := sn.rows[key]
		if held && now.id == was.id {
			continue
		}
		detail := fmt.Sprintf("row id %d deleted", was.id)
		if held {
			detail = fmt.Sprintf("row id %d deleted; row id %d holds the key now", was.id, now.id)
		}
		w.cfg.Report(key, &history.Value{Owner: was.owner, Token: was.id, Extra: &history.Extra{Nodes: []string{w.node}, Detail: detail,
			Release: &history.Release{How: history.ReleaseDeleted, At: max(w.done, 1)}}})
	}
	for key, now := range sn.rows {
		if was, ok := w.last.rows[key]; !ok || was.id != now.id {
			w.cfg.DidRead(key) // a new holder seen
		}
	}
}

// sqlEnd is a lock whose session was found gone, waiting to learn whether
// the server ended that session or its client closed it.
type sqlEnd struct {
	key  string
	was  sqlSession
	at   time.Duration
	base int64 // the server's count of the sessions it ended, before
	// waited counts the samples since it was found.
	waited int
}

// endWait is how many samples after a session was found gone the observer
// waits for the server's count of the sessions it ended to show it
// (PostgreSQL counts a session when its process exits, which may come a
// little after the session left pg_stat_activity).
const endWait = 2

// settle reports each lock whose session was found gone: history.ReleaseSessionEnded
// once the server's count of the sessions it ended (terminated, timed out,
// lost their client; not a client's own close) has changed since the
// sample before (grown, or started again from 0 when the server
// restarted); else, after endWait samples, deleted:
// its client closed the session, as a worker does when it stops, having
// let go of the lock or not. A server that ends one session while a
// client closes another in the same sample period makes both
// session-ended.
func (w *sqlWatcher) settle(sn sqlSnapshot) {
	keep := w.ending[:0]
	for _, e := range w.ending {
		switch {
		case sn.ended != e.base:
			w.report(e, history.ReleaseSessionEnded, "")
		case e.waited >= endWait:
			w.report(e, history.ReleaseDeleted, ": closed by its client")
		default:
			e.waited++
			keep = append(keep, e)
		}
	}
	w.ending = keep
}

// report records e's release.
func (w *sqlWatcher) report(e sqlEnd, how, detail string) {
	rel := &history.Release{How: how, At: e.at}
	if e.was.id != 0 {
		rel.Lease = "session " + strconv.FormatInt(e.was.id, 10)
	}
	w.cfg.Report(e.key, &history.Value{Backend: e.was.id, Extra: &history.Extra{Nodes: []string{w.node}, Detail: sessionWords(e.was) + detail, Release: rel}})
}

// releasedAt places a release that the sample started at start found,
// when the sample before it, which saw the lock held, started at prev.
// When no session holds the lock now, at start: the lock was gone when the
// server read it, at most one sample period after it went. When another
// session holds it already, at prev: the release came after the earlier
// sample's read, so the next grant did too, and the history, which
// records a grant once its worker heard of it, places it after prev;
// placed so, the release is at most two sample periods early, and it is
// never taken for the next grant's.
func releasedAt(prev, start time.Duration, regranted bool) time.Duration {
	if regranted && prev > 0 && prev < start {
		return prev
	}
	return max(start, 1)
}

// sessionWords names a session for a release's Detail: "session 4711
// (lockcheck-p3)".
func sessionWords(s sqlSession) string {
	if s.id == 0 {
		return "a prepared transaction"
	}
	out := "session " + strconv.FormatInt(s.id, 10)
	if s.app != "" {
		out += " (" + s.app + ")"
	}
	return out
}

// startProbe opens a probe session that takes the probe lock, unless one
// is in flight; compare ends it once a sample saw it hold the lock.
func (w *sqlWatcher) startProbe(ctx context.Context) {
	if w.probeEnd != nil {
		if w.cfg.Now()-w.probeStart < probeGiveUp {
			return
		}
		// Never seen held, or never seen gone (the server went away
		// meanwhile): end it, and start again.
		w.probeEnd()
		w.dropProbe()
	}
	pctx, cancel := context.WithTimeout(ctx, sqlSampleTimeout)
	defer cancel()
	end, err := w.s.probe(pctx)
	if err != nil {
		return
	}
	w.probeEnd, w.probeStart, w.probeHeld, w.probeAt = end, w.cfg.Now(), false, 0
	w.probes++
}

// probeGiveUp is how long a probe may stay in flight before the observer
// gives up on it.
const probeGiveUp = 10 * time.Second

// probePhase is how long after the sample that saw probe n hold its lock
// the observer ends the probe's session.
func probePhase(n int) time.Duration {
	step := sqlSampleEvery / 20 * 7
	return time.Millisecond + time.Duration(n)*step%sqlSampleEvery
}

// due returns the channel of the timer that ends the probe's session, nil
// when none is armed.
func (w *sqlWatcher) due() <-chan time.Time {
	if w.probeDue == nil {
		return nil
	}
	return w.probeDue.C
}

// dropProbe forgets the probe in flight.
func (w *sqlWatcher) dropProbe() {
	if w.probeDue != nil {
		w.probeDue.Stop()
	}
	w.probeEnd, w.probeHeld, w.probeDue, w.probeAt = nil, false, nil, 0
}

// closeAll ends the probe session and closes the sampler.
func (w *sqlWatcher) closeAll() {
	if w.probeEnd != nil {
		w.probeEnd()
	}
	w.s.close()
}

// sqlLockID is the PostgreSQL advisory lock id of a lock key, as the
// PostgreSQL designs take it (workloads' lockID: FNV-1a of the key, shifted
// into a positive bigint).
func sqlLockID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int64(h.Sum64() >> 1)
}
