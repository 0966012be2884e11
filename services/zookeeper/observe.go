package zookeeper

import (
	"context"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

var _ clusters.ReleaseObserver = (*Cluster)(nil)

// zkLockRoot is the parent of every ZooKeeper lock design's lock path
// (/lockcheck/<key>: the lock node itself, or the parent of its sequential
// nodes), and zkProbePath the observer's probe node, outside it.
const (
	zkLockRoot  = "/lockcheck"
	zkProbePath = "/lockcheck-observer-probe"
)

// zkObserveSession is the observer's own session timeout: long, since no
// fault of the run touches its connections.
const zkObserveSession = 10 * time.Second

// ObserveReleases implements ReleaseObserver for ZooKeeper: an observer
// session of its own, dialled straight to every server's client port, with
// watches on each lock path. A lock path that is an ephemeral node is the
// lock (zk-ephemeral); one that is a persistent node is the parent of the
// sequential nodes that queue for it, whose deletions the observer sees as
// changes of its children. A deleted lock node is a release, with its
// data (the designs' owner), its czxid (their token) and the session that
// owned it: history.ReleaseLease when a server's log says it expired that
// session (the node went with it), else history.ReleaseDeleted (its holder
// deleted it, or closed its session). ZooKeeper's watch events carry no
// time: a release is placed where it was heard, and the probe (a node
// created under a watch) bounds how late that is.
func (z *Cluster) ObserveReleases(ctx context.Context, cfg clusters.ObserveConfig) (func(), error) {
	var addrs []string
	for _, n := range z.Nodes() {
		if n.Role == "lock" {
			addrs = append(addrs, n.Addr)
		}
	}
	conn, events, err := zk.Connect(addrs, zkObserveSession, zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("observe zookeeper: %w", err)
	}
	if err := zkWaitSession(ctx, events); err != nil {
		conn.Close()
		return nil, fmt.Errorf("observe zookeeper: %w", err)
	}
	var logs []string
	for _, n := range z.nodes {
		logs = append(logs, n.LogPath)
	}
	expiries := newZKExpiries(logs)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, key := range cfg.Keys {
		o := &zkKeyObserver{conn: conn, cfg: cfg, key: key, path: path.Join(zkLockRoot, key), known: map[string]zkNodeSeen{}, expiries: expiries}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.run(ctx)
		}()
	}
	if cfg.Probe > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			zkProbe(ctx, conn, cfg)
		}()
	}
	go func() { // drain the session events
		for range events {
		}
	}()
	return func() {
		cancel()
		conn.Close()
		wg.Wait()
	}, nil
}

// zkWaitSession waits (at most 10 s) for the session to be established.
func zkWaitSession(ctx context.Context, events <-chan zk.Event) error {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return nil
			}
		case <-t.C:
			return fmt.Errorf("no session within 10 s")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// zkNodeSeen is a lock node as the observer read it.
type zkNodeSeen struct {
	owner   string
	czxid   int64
	session int64
}

// zkKeyObserver watches one lock path.
type zkKeyObserver struct {
	conn  *zk.Conn
	cfg   clusters.ObserveConfig
	key   string
	path  string
	known map[string]zkNodeSeen // lock node path -> what was read of it
	// expiries tells the sessions the servers expired.
	expiries *zkExpiries
}

// run watches the lock path until ctx ends: a bounded wait per round, so
// that a lost watch is re-armed.
func (o *zkKeyObserver) run(ctx context.Context) {
	for ctx.Err() == nil {
		ch, err := o.arm()
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		case <-time.After(5 * time.Second):
		}
	}
}

// arm reads the lock path, reports the lock nodes gone since the last
// read, and returns a watch that fires at its next change.
func (o *zkKeyObserver) arm() (<-chan zk.Event, error) {
	exists, st, ch, err := o.conn.ExistsW(o.path)
	if err != nil {
		return nil, err
	}
	now := map[string]bool{}
	if exists && st.EphemeralOwner != 0 {
		// The lock node itself (zk-ephemeral).
		data, st, gch, err := o.conn.GetW(o.path)
		if err == nil {
			now[o.path] = true
			o.see(o.path, data, st)
			ch = gch
		}
	} else if exists {
		// The parent of sequential lock nodes.
		children, _, cch, err := o.conn.ChildrenW(o.path)
		if err != nil {
			return nil, err
		}
		for _, c := range children {
			p := path.Join(o.path, c)
			now[p] = true
			if _, ok := o.known[p]; !ok {
				if data, st, err := o.conn.Get(p); err == nil {
					o.see(p, data, st)
				}
			}
		}
		ch = cch
	}
	for p, seen := range o.known {
		if !now[p] {
			delete(o.known, p)
			o.report(seen)
		}
	}
	return ch, nil
}

// see records what was read of lock node p; a node of the same path read
// before with another czxid was deleted in between, and is reported.
func (o *zkKeyObserver) see(p string, data []byte, st *zk.Stat) {
	old, ok := o.known[p]
	if ok && old.czxid == st.Czxid {
		return
	}
	if ok {
		o.report(old)
	}
	o.known[p] = zkNodeSeen{owner: string(data), czxid: st.Czxid, session: st.EphemeralOwner}
	o.cfg.DidRead(o.key)
}

// report reports the deletion of a lock node.
func (o *zkKeyObserver) report(seen zkNodeSeen) {
	v := &history.Value{Owner: seen.owner, Token: seen.czxid, Extra: &history.Extra{Release: &history.Release{How: history.ReleaseDeleted}}}
	if seen.session != 0 {
		v.Release.Lease = fmt.Sprintf("session 0x%x", seen.session)
		if o.expiries.has(seen.session) {
			v.Release.How = history.ReleaseLease
		}
	}
	o.cfg.Report(o.key, v)
}

// zkProbe creates and deletes the probe node every cfg.Probe under a
// watch, and reports how long after the create's invocation the watch
// fired: an upper bound of the observer's lag.
func zkProbe(ctx context.Context, conn *zk.Conn, cfg clusters.ObserveConfig) {
	t := time.NewTicker(cfg.Probe)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, _, ch, err := conn.ExistsW(zkProbePath)
		if err != nil {
			continue
		}
		sent := cfg.Now()
		if _, err := conn.Create(zkProbePath, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
			heard := cfg.Now()
			cfg.Report("", &history.Value{Extra: &history.Extra{Release: &history.Release{How: history.ReleaseDeleted, Probe: true, At: sent, Lag: heard - sent}}})
		case <-time.After(5 * time.Second):
		}
		_ = conn.Delete(zkProbePath, -1)
	}
}
