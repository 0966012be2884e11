package workloads

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/lockcheck/lockcheck/history"
)

// worker is the state of one worker process.
type worker struct {
	cfg  Config
	lock Lock
	res  *Resource
	// ignoreLoss is the planted bug PlantIgnoreLoss.
	ignoreLoss bool
	// dropLock is the planted bug PlantDropLock, for this process.
	dropLock bool
}

// Serve runs the worker side of the worker protocol: it reads one request a
// line from in and writes one reply a line to out, until a close request or
// the end of in. See docs/worker-protocol.md.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	var mu sync.Mutex // replies and events share stdout
	write := func(r Reply) error {
		mu.Lock()
		defer mu.Unlock()
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	events := func(detail string) {
		ev := "session"
		switch {
		case strings.HasPrefix(detail, FailpointPrefix):
			ev = EventFailpoint
		case strings.HasPrefix(detail, "watchdog "):
			ev = "watchdog"
		case history.MarkName(detail) != "":
			ev = history.MarkName(detail)
		}
		_ = write(Reply{Event: ev, Value: &history.Value{Extra: &history.Extra{Detail: detail}}})
	}
	var wk *worker
	defer func() {
		if wk != nil {
			wk.close()
		}
	}()
	for sc.Scan() {
		var req Request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("worker: malformed request %q: %w", sc.Text(), err)
		}
		reply := Reply{ID: req.ID}
		switch {
		case req.F == FOpen:
			if wk != nil {
				reply.Type, reply.Error = history.Fail, "already open"
				break
			}
			var err error
			if wk, err = open(req.Config, events); err != nil {
				reply.Type, reply.Error = history.Fail, err.Error()
			} else {
				reply.Type, reply.Protocol, reply.Then = history.OK, ProtocolVersion, []string{ThenCS, ThenCSRelease}
			}
		case req.F == FClose:
			reply.Type = history.OK
		case wk == nil:
			reply.Type, reply.Error = history.Fail, "not open: send open first"
		default:
			val, err := wk.invoke(ctx, req)
			reply = answer(req.ID, val, err)
		}
		if err := write(reply); err != nil {
			return fmt.Errorf("worker: write reply: %w", err)
		}
		if req.F == FClose {
			return nil
		}
		if cs, ok := wk.then(req, reply); ok {
			val, err := wk.invoke(ctx, cs)
			done := answer(cs.ID, val, err)
			// The reply is written before the release leaves: whatever
			// the release lets happen comes after it.
			if err := write(done); err != nil {
				return fmt.Errorf("worker: write reply: %w", err)
			}
			if req.Then == ThenCSRelease && done.Type != history.Info {
				rel := Request{ID: req.ID + 2, F: history.FRelease, Key: req.Key, Value: &history.Value{}}
				if g := reply.Value; g != nil {
					rel.Value.Owner, rel.Value.Token = g.Owner, g.Token
				}
				val, err := wk.invoke(ctx, rel)
				if err := write(answer(rel.ID, val, err)); err != nil {
					return fmt.Errorf("worker: write reply: %w", err)
				}
			}
		}
	}
	return sc.Err()
}

func open(cfg *Config, events func(string)) (*worker, error) {
	if cfg == nil {
		return nil, errors.New("open without config")
	}
	if cfg.Protocol != ProtocolVersion {
		return nil, fmt.Errorf("protocol %d not supported (this worker speaks %d)", cfg.Protocol, ProtocolVersion)
	}
	d, err := FindDesign(cfg.Lock)
	if err != nil {
		return nil, err
	}
	if d.New == nil {
		return nil, fmt.Errorf("%s runs in its own worker (%s), not in check worker", d.Name, strings.Join(d.Worker, " "))
	}
	w, err := findWorkload(cfg.Workload)
	if err != nil {
		return nil, err
	}
	if !d.Runs(w) {
		return nil, fmt.Errorf("%s does not run the %s workload", d.Name, w.Name)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Process)))
	l, err := d.New(*cfg, rng, events)
	if err != nil {
		return nil, err
	}
	res := NewResource(*cfg)
	if cfg.Reports(ReportWrite) {
		res.sent = func(key string, token int64) {
			events(fmt.Sprintf("%s%s (token %d)", history.EventWritePrefix, key, token))
		}
	}
	return &worker{cfg: *cfg, lock: l, res: res, ignoreLoss: plantedIgnoreLoss(), dropLock: plantedDropLock(cfg.Process)}, nil
}

// answer is the reply to request id whose operation returned val and err.
func answer(id int64, val *history.Value, err error) Reply {
	r := Reply{ID: id, Type: Classify(err), Value: val}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// then returns the critical section an acquire request asked to run once
// granted (Request.Then), with the id of its reply, and false when there is
// none: another request, or an acquire that was not granted.
func (w *worker) then(req Request, reply Reply) (Request, bool) {
	if w == nil || req.F != history.FAcquire || (req.Then != ThenCS && req.Then != ThenCSRelease) || reply.Type != history.OK {
		return Request{}, false
	}
	v := &history.Value{}
	if g := reply.Value; g != nil {
		v.Owner = g.Owner
		if w.cfg.Fencing {
			v.Token = g.Token
		}
	}
	return Request{ID: req.ID + 1, F: history.FCS, Key: req.Key, Value: v}, true
}

func (w *worker) invoke(ctx context.Context, req Request) (*history.Value, error) {
	var g Grant
	if req.Value != nil {
		g = Grant{Owner: req.Value.Owner, Token: req.Value.Token}
	}
	if w.dropLock && req.F == history.FRelease {
		return &history.Value{}, nil // let go at its grant
	}
	switch req.F {
	case history.FAcquire:
		g, err := w.lock.Acquire(ctx, req.Key)
		if err != nil {
			return nil, err
		}
		if w.dropLock {
			if _, err := w.lock.Release(ctx, req.Key, g); err != nil {
				return nil, err
			}
		}
		return &history.Value{Token: g.Token, Owner: g.Owner, Backend: g.Backend, Extra: &history.Extra{Detail: g.Detail, Nodes: g.Nodes}}, nil
	case history.FRelease:
		return w.lock.Release(ctx, req.Key, g)
	case history.FCS:
		var check func() error
		if v, ok := w.lock.(Validator); ok && !w.ignoreLoss {
			check = func() error { return v.Valid(req.Key) }
		}
		if sec, ok := w.lock.(Sectioner); ok {
			return sec.CriticalSection(ctx, req.Key, g.Token, check)
		}
		return w.res.CriticalSection(ctx, req.Key, g.Token, check)
	}
	return nil, Definite(fmt.Errorf("unknown operation %q", req.F))
}

func (w *worker) close() {
	_ = w.lock.Close()
	_ = w.res.Close()
}

// workload returns the workload cfg names; an unknown one (refused at
// open) is the register.
func (cfg Config) workload() Workload {
	w, err := findWorkload(cfg.Workload)
	if err != nil {
		return Workload{Name: WorkloadRegister}
	}
	return w
}
