package kit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Protocol is the worker protocol version the kit speaks.
const Protocol = 2

// Config is the open request's config: what a worker needs to build its
// lock client (docs/worker-protocol.md lists every field).
type Config struct {
	Protocol         int               `json:"protocol"`
	Lock             string            `json:"lock"`
	Process          int               `json:"process"`
	Seed             uint64            `json:"seed"`
	LockAddrs        []string          `json:"lock_addrs"`
	StorageAddr      string            `json:"storage_addr"`
	LeaseMS          int64             `json:"lease_ms"`
	AcquireTimeoutMS int64             `json:"acquire_timeout_ms"`
	RetryMS          int64             `json:"retry_ms"`
	ThinkMS          int64             `json:"think_ms"`
	OpTimeoutMS      int64             `json:"op_timeout_ms"`
	Fencing          bool              `json:"fencing"`
	DiscoveryAddrs   []string          `json:"discovery_addrs,omitempty"`
	MasterName       string            `json:"master_name,omitempty"`
	AddrMap          map[string]string `json:"addr_map,omitempty"`
	Workload         string            `json:"workload,omitempty"`
	User             string            `json:"user,omitempty"`
	Password         string            `json:"password,omitempty"`
	Database         string            `json:"database,omitempty"`
	Pooled           bool              `json:"pooled,omitempty"`
	SessionName      string            `json:"session_name,omitempty"`
}

// Lease returns the lease (for a session lock, the session timeout).
func (c Config) Lease() time.Duration { return time.Duration(c.LeaseMS) * time.Millisecond }

// OpTimeout returns the bound of one command to the lock service.
func (c Config) OpTimeout() time.Duration { return time.Duration(c.OpTimeoutMS) * time.Millisecond }

// Retry returns the mean pause between two acquire attempts.
func (c Config) Retry() time.Duration { return time.Duration(c.RetryMS) * time.Millisecond }

// Grant is what an acquire got: a value unique to this grant, stored as
// the lock's owner, and the fencing token (0 for a lock with none).
type Grant struct {
	Owner string `json:"owner"`
	Token int64  `json:"token,omitempty"`
}

// Lock is your lock client, one per worker process.
type Lock interface {
	// Acquire takes the lock on key, retrying until ctx ends (the
	// controller's acquire timeout). Return ErrNotAcquired when it was
	// held by others all along, an error wrapped by Definite when the
	// request certainly had no effect, any other error when it may have
	// (a timeout: the kit replies info).
	Acquire(ctx context.Context, key string) (Grant, error)
	// Release gives the lock back; released says whether it still held it
	// (false: the lock had been lost). ctx ends at the command's bound.
	Release(ctx context.Context, key string, g Grant) (released bool, err error)
}

// Checker is a Lock that can tell, before each access of the critical
// section, that its lock may be lost (a library's "still held" check):
// an error ends the critical section with no write (fail).
type Checker interface {
	Check(ctx context.Context, key string, g Grant) error
}

// Closer is a Lock with something to close when the worker ends.
type Closer interface {
	Close() error
}

// ErrNotAcquired is the acquire error for a lock held by others for the
// whole acquire timeout: certainly not granted (fail).
var ErrNotAcquired = errors.New("lock not acquired: held by another client until the acquire timeout")

// definite marks an error whose operation certainly had no effect.
type definite struct{ err error }

func (d definite) Error() string { return d.err.Error() }
func (d definite) Unwrap() error { return d.err }

// Definite marks err as certain: the operation had no effect, and the kit
// replies fail (a refused connection, an error reply from the server).
func Definite(err error) error {
	if err == nil {
		return nil
	}
	return definite{err}
}

// IsDefinite reports whether err says its operation had no effect.
func IsDefinite(err error) bool {
	var d definite
	return errors.As(err, &d) || errors.Is(err, ErrNotAcquired) || errors.Is(err, errRejected)
}

// Open builds the lock client from the open request's config; its error
// refuses the open (fail).
type Open func(ctx context.Context, cfg Config) (Lock, error)

// Main serves the protocol on stdin and stdout with open, and exits: 0
// when stdin ends or close is asked, 3 on a broken pipe or request.
func Main(open Open) {
	if err := Serve(context.Background(), os.Stdin, os.Stdout, open); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// request is one request line.
type request struct {
	ID     int64           `json:"id"`
	F      string          `json:"f"`
	Key    string          `json:"key,omitempty"`
	Value  *Grant          `json:"value,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`
}

// reply is one reply line.
type reply struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`
	Value    any    `json:"value,omitempty"`
	Error    string `json:"error,omitempty"`
	Protocol int    `json:"protocol,omitempty"`
}

// worker is the state of one served worker.
type worker struct {
	cfg  Config
	lock Lock
	res  *resource
}

// Serve reads requests from r and writes one reply a line to w, in order,
// until close or the end of r. Nothing else is written to w: say anything
// else on stderr.
func Serve(ctx context.Context, r io.Reader, w io.Writer, open Open) error {
	var wmu sync.Mutex
	write := func(rep reply) error {
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		wmu.Lock()
		defer wmu.Unlock()
		_, err = w.Write(append(b, '\n'))
		return err
	}
	var wk *worker
	defer func() {
		if wk != nil {
			wk.close()
		}
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("request %q: %w", sc.Text(), err)
		}
		rep := reply{ID: req.ID, Type: "ok"}
		var val any
		var err error
		switch {
		case req.F == "open":
			if wk != nil {
				wk.close()
			}
			wk, err = openWorker(ctx, req.Config, open)
			rep.Protocol = Protocol
		case req.F == "close":
			if err := write(rep); err != nil {
				return err
			}
			return nil
		case wk == nil:
			err = Definite(errors.New("not open"))
		case req.F == "acquire":
			val, err = wk.acquire(ctx, req.Key)
		case req.F == "cs":
			val, err = wk.cs(ctx, req.Key, grantOf(req.Value))
		case req.F == "release":
			val, err = wk.release(ctx, req.Key, grantOf(req.Value))
		default:
			err = Definite(fmt.Errorf("unknown request %q", req.F))
		}
		rep.Value = val
		if err != nil {
			rep.Type, rep.Error, rep.Protocol = "info", err.Error(), 0
			if IsDefinite(err) {
				rep.Type = "fail"
			}
		}
		if err := write(rep); err != nil {
			return err
		}
	}
	return sc.Err()
}

// grantOf returns the request's grant, zero for none.
func grantOf(g *Grant) Grant {
	if g == nil {
		return Grant{}
	}
	return *g
}

// openWorker checks the config and builds the lock client and the
// resource; every refusal is Definite.
func openWorker(ctx context.Context, raw json.RawMessage, open Open) (*worker, error) {
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, Definite(fmt.Errorf("open: config: %w", err))
	}
	if cfg.Protocol != Protocol {
		return nil, Definite(fmt.Errorf("protocol %d not supported (this worker speaks %d)", cfg.Protocol, Protocol))
	}
	if cfg.Workload != "" && cfg.Workload != "register" {
		return nil, Definite(fmt.Errorf("workload %s: the kit runs the register workload only", cfg.Workload))
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lock, err := open(octx, cfg)
	if err != nil {
		return nil, Definite(fmt.Errorf("open %s: %w", cfg.Lock, err))
	}
	return &worker{cfg: cfg, lock: lock, res: newResource(cfg)}, nil
}

// acquire calls the lock's Acquire with the acquire timeout.
func (wk *worker) acquire(ctx context.Context, key string) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(wk.cfg.AcquireTimeoutMS)*time.Millisecond)
	defer cancel()
	g, err := wk.lock.Acquire(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("acquire %s: %w", key, err)
	}
	if g.Owner == "" {
		return nil, fmt.Errorf("acquire %s: the lock client returned no owner", key)
	}
	return g, nil
}

// release calls the lock's Release with the command bound.
func (wk *worker) release(ctx context.Context, key string, g Grant) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, wk.cfg.OpTimeout())
	defer cancel()
	released, err := wk.lock.Release(ctx, key, g)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", key, err)
	}
	return map[string]bool{"released": released}, nil
}

// cs runs the critical section on the resource, asking the lock's Check
// (when it has one) before each access.
func (wk *worker) cs(ctx context.Context, key string, g Grant) (any, error) {
	var check func() error
	if c, ok := wk.lock.(Checker); ok {
		check = func() error {
			cctx, cancel := context.WithTimeout(ctx, wk.cfg.OpTimeout())
			defer cancel()
			if err := c.Check(cctx, key, g); err != nil {
				return Definite(fmt.Errorf("the lock may be lost: %w", err))
			}
			return nil
		}
	}
	v, err := wk.res.criticalSection(ctx, key, g.Token, check)
	return v, err
}

// close closes the lock client and the resource's connection.
func (wk *worker) close() {
	if c, ok := wk.lock.(Closer); ok {
		_ = c.Close()
	}
	wk.res.close()
}
