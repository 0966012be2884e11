package redis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
	"github.com/redis/go-redis/v9"
)

var _ clusters.ReleaseObserver = (*Redis)(nil)

// The keyspace events a Redis observer asks for: keyevent channels (E) of
// generic commands (g: del, expire) and of expiries (x); redisNotifyWrites
// adds string writes ($: set, which SETNX and GETSET fire too), for a
// design whose locks change hands by being written over
// (clusters.ObserveConfig.TookOver).
const (
	redisNotify       = "Egx"
	redisNotifyWrites = "Eg$x"
)

// ObserveReleases implements clusters.ReleaseObserver for plain Redis lock nodes (one,
// or RedLock's five): keyspace notifications on each node, set with CONFIG
// SET notify-keyspace-events on the observer's own connection.
func (r *Redis) ObserveReleases(ctx context.Context, cfg clusters.ObserveConfig) (func(), error) {
	var nodes []clusters.Node
	for _, s := range r.lock {
		nodes = append(nodes, clusters.Node{Name: s.Name, Role: "lock", Addr: s.Addr()})
	}
	return observeRedisNodes(ctx, nodes, cfg)
}

// observeRedisNodes watches each node with a redisObserver.
func observeRedisNodes(ctx context.Context, nodes []clusters.Node, cfg clusters.ObserveConfig) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var obs []*redisObserver
	stop := func() {
		cancel()
		for _, o := range obs {
			o.close()
		}
		wg.Wait()
	}
	keys := clusters.KeySet(cfg.Keys)
	for _, n := range nodes {
		o, err := newRedisObserver(ctx, n, cfg, keys)
		if err != nil {
			stop()
			return nil, err
		}
		obs = append(obs, o)
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.run(ctx)
		}()
	}
	return stop, nil
}

// redisObserver watches one Redis node: a subscription to its keyevent
// channels, and a client of its own to read a key's owner and expiry when
// it is set or renewed, and to set probes.
type redisObserver struct {
	node string
	// deleted is the extra fields of every deletion this observer
	// reports, shared by all of them (a long run has one a grant): this
	// node, and how. Nothing changes them.
	deleted *history.Extra
	cfg     clusters.ObserveConfig
	keys    map[string]bool
	probe   string
	c       *redis.Client
	sub     *redis.PubSub
	// held is what the observer read of each lock key since its last
	// set or renewal: a key absent here was set again after the last read
	// whose mark came through, so its owner is not known.
	held map[string]redisHeld
	// mark is the channel the observer's reads publish their sequence
	// number to, in the transaction that reads: the mark arrives in order
	// with the keyspace events, which places each read among them.
	mark string
	seq  int64
	// reads are the reads whose mark has not come yet, by sequence
	// number; latest the sequence number of each key's latest read.
	reads  map[int64]pendingRead
	latest map[string]int64
	// unread are the lock keys set or renewed whose read waits for
	// lazyRead to pass (the history time it is due), so that a key its
	// holder deletes within it is never read.
	unread map[string]time.Duration
	// probeAt is the estimated expiry of the probe in flight (0: none).
	probeAt time.Duration
	probeST time.Time
	// probeTouches counts the touches of the probe since it was set.
	probeTouches int
}

// pendingRead is a read waiting for its mark.
type pendingRead struct {
	key string
	hd  redisHeld
	// over is, for a read after a write of a key that named a holder,
	// what the observer had read of it before, and wrote when it heard
	// of the write.
	over  *redisHeld
	wrote time.Duration
}

// redisHeld is a lock key as the observer last read it.
type redisHeld struct {
	owner string
	at    time.Duration // its expiry on the history's clock, 0 when none
	st    time.Time     // its expiry on the server's clock
	// touches counts the observer's touches of the key once its expiry
	// came (maxTouches: no more).
	touches int
}

// newRedisObserver connects to n, turns its keyspace notifications on and
// subscribes; it returns once the subscription is confirmed.
func newRedisObserver(ctx context.Context, n clusters.Node, cfg clusters.ObserveConfig, keys map[string]bool) (*redisObserver, error) {
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: 2,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second, PoolSize: 2})
	o := &redisObserver{node: n.Name, deleted: &history.Extra{Nodes: []string{n.Name}, Release: &history.Release{How: history.ReleaseDeleted}}, cfg: cfg, keys: keys, c: c, held: make(map[string]redisHeld),
		probe: "lockcheck:observer-probe:" + n.Name, mark: "lockcheck:observer-mark:" + n.Name,
		reads: make(map[int64]pendingRead), latest: make(map[string]int64), unread: make(map[string]time.Duration)}
	notify, channels := redisNotify, []string{"__keyevent@0__:expire", "__keyevent@0__:expired", "__keyevent@0__:del", o.mark}
	if cfg.TookOver != nil {
		notify, channels = redisNotifyWrites, append(channels, "__keyevent@0__:set")
	}
	if err := c.ConfigSet(ctx, "notify-keyspace-events", notify).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("observe %s: config set notify-keyspace-events: %w", n.Name, err)
	}
	o.sub = c.Subscribe(ctx, channels...)
	for range channels { // one confirmation per channel
		if _, err := o.sub.ReceiveTimeout(ctx, 5*time.Second); err != nil {
			o.close()
			return nil, fmt.Errorf("observe %s: subscribe to keyspace events: %w", n.Name, err)
		}
	}
	return o, nil
}

// close closes the subscription and the client.
func (o *redisObserver) close() {
	if o.sub != nil {
		o.sub.Close()
	}
	o.c.Close()
}

// run handles events until ctx ends, and sets a probe every cfg.Probe.
func (o *redisObserver) run(ctx context.Context) {
	ch := o.sub.Channel(redis.WithChannelSize(1000))
	tick, stopTick := o.cfg.Probes()
	defer stopTick()
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	for {
		o.arm(due)
		select {
		case <-ctx.Done():
			return
		case <-tick:
			if o.probeAt == 0 {
				o.setProbe(ctx)
			}
		case <-due.C:
			o.touchDue(ctx)
			o.readDue(ctx)
		case m, ok := <-ch:
			if !ok {
				return
			}
			if m.Channel == o.mark {
				o.marked(m.Payload)
				continue
			}
			o.event(ctx, m.Channel[strings.LastIndexByte(m.Channel, ':')+1:], m.Payload)
		}
	}
}

// dueKeys returns the keys (lock keys and the probe) whose expiry is due
// by at, and the earliest expiry still ahead of it (0 for none).
func (o *redisObserver) dueKeys(at time.Duration) (due []string, next time.Duration) {
	consider := func(key string, exp time.Duration) {
		switch {
		case exp <= 0:
		case exp <= at:
			due = append(due, key)
		case next == 0 || exp < next:
			next = exp
		}
	}
	for k, hd := range o.held {
		if hd.touches < maxTouches {
			consider(k, touchAt(hd.at, hd.touches))
		}
	}
	if o.probeTouches < maxTouches {
		consider(o.probe, touchAt(o.probeAt, o.probeTouches))
	}
	return due, next
}

// maxTouches bounds the touches of one key's expiry.
const maxTouches = 5

// touchAt is when to touch a key that expires at (history clock) for the
// n-th time: Redis counts a key expired once its millisecond clock is past
// the expiry time, so 1 ms after it, then every 2 ms (the server's clock
// and the observer's estimate of it differ by the read's half round
// trip); 0 for a key with no expiry.
func touchAt(at time.Duration, n int) time.Duration {
	if at <= 0 {
		return 0
	}
	return at + time.Millisecond + time.Duration(n)*2*time.Millisecond
}

// bump counts a touch: maxTouches when it found the key gone (no more
// touches), else one more.
func bump(n int, done bool) int {
	if done {
		return maxTouches
	}
	return n + 1
}

// lazyRead is how long a lock key set or renewed lives before the
// observer reads its owner and expiry. Most keys are deleted by their
// holder sooner (a critical section of a millisecond or two); a read of
// each would cost the lock node six commands a grant and the observer a
// round trip, and a deletion of a key never read is reported without an
// owner, as one the observer read too late always was. The loss: a key
// that another client deletes within lazyRead of its grant (a release
// that does not check the owner) is not named by the observer; the
// built-in designs that delete that way report the owner they deleted
// themselves (history.Extra.DeletedOwner). A key that expires was read
// long before: leases are hundreds of times longer.
const lazyRead = 5 * time.Millisecond

// arm sets due to fire at the next expiry the observer knows of, or the
// next read that is due, whichever comes first.
func (o *redisObserver) arm(due *time.Timer) {
	_, next := o.dueKeys(o.cfg.Now())
	for _, at := range o.unread {
		if next == 0 || at < next {
			next = at
		}
	}
	wait := time.Hour
	if next > 0 {
		wait = max(next-o.cfg.Now(), 0)
	}
	due.Reset(wait)
}

// touchDue touches each key whose expiry is due (EXISTS): Redis deletes an
// expired key it is asked about at once, with its expired event, instead
// of at its next active-expiry cycle (hz 10: up to 100 ms later). A key
// past its expiry is already gone for every command, so the touch changes
// no outcome, only when the observer hears of it.
func (o *redisObserver) touchDue(ctx context.Context) {
	due, _ := o.dueKeys(o.cfg.Now())
	for _, k := range due {
		n, err := o.c.Exists(ctx, k).Result()
		done := err != nil || n == 0 // gone (expired now, or deleted)
		if k == o.probe {
			o.probeTouches = bump(o.probeTouches, done)
			continue
		}
		hd := o.held[k]
		hd.touches = bump(hd.touches, done)
		o.held[k] = hd
	}
}

// readDue reads each key whose lazyRead has passed.
func (o *redisObserver) readDue(ctx context.Context) {
	now := o.cfg.Now()
	for key, at := range o.unread {
		if at <= now {
			delete(o.unread, key)
			o.readNow(ctx, key, pendingRead{key: key})
		}
	}
}

// readNow reads key, to be applied when its mark comes.
func (o *redisObserver) readNow(ctx context.Context, key string, pr pendingRead) {
	if hd, seq, err := o.read(ctx, key); err == nil {
		pr.hd = hd
		o.reads[seq] = pr
		o.latest[key] = seq
	}
}

// event handles one keyevent: ev is expire, expired, del or set (with
// TookOver), key the key.
func (o *redisObserver) event(ctx context.Context, ev, key string) {
	if key == o.probe {
		if ev == "expired" && o.probeAt > 0 {
			heard := o.cfg.Now()
			o.cfg.Report("", &history.Value{
				Extra: &history.Extra{Nodes: []string{o.node}, Release: &history.Release{How: history.ReleaseExpired,
					ServerTime: o.probeST, At: o.probeAt, Probe: true, Lag: max(heard-o.probeAt, 0)}},
			})
			o.probeAt = 0
		}
		return
	}
	if !o.keys[key] {
		return
	}
	switch ev {
	case "expire": // set with a TTL, or renewed: read its owner and expiry once it has lived lazyRead
		// A read already waiting keeps its time: it reads the key as it
		// is then, renewed or not, so that renewals faster than
		// lazyRead cannot put it off for ever.
		delete(o.held, key)
		if _, waiting := o.unread[key]; !waiting {
			o.unread[key] = o.cfg.Now() + lazyRead
		}
	case "set": // written over (SETNX, GETSET): read who it names now
		pr := pendingRead{key: key}
		if prev, had := o.held[key]; had && prev.owner != "" {
			pr.over, pr.wrote = &prev, o.cfg.Now()
		}
		delete(o.held, key)
		o.readNow(ctx, key, pr)
	case "expired", "del":
		delete(o.unread, key)
		// Known only when the key's latest read came between its last
		// set or renewal and this event; a read that came after it (the
		// observer lagged) read the next holder's key, or none.
		hd := o.held[key]
		delete(o.held, key)
		x := o.deleted
		if ev == "expired" {
			x = &history.Extra{Nodes: o.deleted.Nodes, Release: &history.Release{How: history.ReleaseExpired, ServerTime: hd.st, At: hd.at}}
		}
		o.cfg.Report(key, &history.Value{Owner: hd.owner, Extra: x})
	}
}

// marked applies the read whose mark payload (its sequence number) just
// came, unless a later read of the same key was issued since.
func (o *redisObserver) marked(payload string) {
	seq, err := strconv.ParseInt(payload, 10, 64)
	if err != nil {
		return
	}
	p, ok := o.reads[seq]
	if !ok {
		return
	}
	delete(o.reads, seq)
	if o.latest[p.key] == seq {
		if p.over != nil && o.cfg.TookOver != nil && o.cfg.TookOver(p.over.owner, p.hd.owner) {
			// The write took the lock from the holder the key named:
			// its release, when the observer heard of the write.
			o.cfg.Report(p.key, &history.Value{Owner: p.over.owner, Extra: &history.Extra{Nodes: []string{o.node},
				Release: &history.Release{How: history.ReleaseOverwritten, At: p.wrote}}})
		}
		o.held[p.key] = p.hd
		o.cfg.DidRead(p.key)
	}
}

// redisRead is the observer's read of a lock key, one script: its owner
// (a string's value, or a hash's one field, as Redisson-style locks keep
// it), its expiry (PEXPIRETIME) and the server's time, atomically, and the
// mark that places the read among the keyspace events. One command where
// a transaction took seven (MULTI, GET, HKEYS, PEXPIRETIME, TIME, PUBLISH,
// EXEC): the observer reads once a grant.
var redisRead = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1])['ok']
local owner = ''
if t == 'string' then
  owner = redis.call('GET', KEYS[1])
elseif t == 'hash' then
  local f = redis.call('HKEYS', KEYS[1])
  if #f == 1 then owner = f[1] end
end
local exp = redis.call('PEXPIRETIME', KEYS[1])
local now = redis.call('TIME')
redis.call('PUBLISH', ARGV[1], ARGV[2])
return {owner, exp, now[1], now[2]}
`)

// read returns key's owner and its expiry, placed on the history's clock
// by the server's time read in the same script.
func (o *redisObserver) read(ctx context.Context, key string) (redisHeld, int64, error) {
	o.seq++
	seq := o.seq
	before := o.cfg.Now()
	res, err := redisRead.Run(ctx, o.c, []string{key}, o.mark, strconv.FormatInt(seq, 10)).Slice()
	after := o.cfg.Now()
	if err != nil {
		return redisHeld{}, seq, fmt.Errorf("observe %s: read %s: %w", o.node, key, err)
	}
	bad := fmt.Errorf("observe %s: read %s: unexpected reply %v", o.node, key, res)
	if len(res) != 4 {
		return redisHeld{}, seq, bad
	}
	owner, ok1 := res[0].(string)
	ms, ok2 := res[1].(int64)
	sec, err1 := strconv.ParseInt(fmt.Sprint(res[2]), 10, 64)
	usec, err2 := strconv.ParseInt(fmt.Sprint(res[3]), 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return redisHeld{}, seq, bad
	}
	hd := redisHeld{owner: owner}
	hd.at, hd.st = onHistoryClock(ms, time.Unix(sec, usec*1000), before, after)
	return hd, seq, nil
}

// onHistoryClock places a server's expiry time (PEXPIRETIME, milliseconds
// since the epoch on the server's clock; negative when the key has none)
// on the history's clock, from the server's time now read between the
// history times before and after: the server read it at their midpoint.
// It returns 0 and the zero time for a key with no expiry.
func onHistoryClock(expMS int64, now time.Time, before, after time.Duration) (time.Duration, time.Time) {
	if expMS <= 0 {
		return 0, time.Time{}
	}
	st := time.UnixMilli(expMS)
	return max(before+(after-before)/2+st.Sub(now), 1), st
}

// setProbe sets the probe key with clusters.ProbeTTL and reads back its expiry.
func (o *redisObserver) setProbe(ctx context.Context) {
	if err := o.c.Set(ctx, o.probe, "1", clusters.ProbeTTL).Err(); err != nil {
		return
	}
	if hd, _, err := o.read(ctx, o.probe); err == nil && hd.at > 0 {
		o.probeAt, o.probeST, o.probeTouches = hd.at, hd.st, 0
	}
}
