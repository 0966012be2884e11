package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/workloads"
)

// fencedRaise is how far above the grant's token the check raises the
// resource's highest token, as a later holder's grant would.
const fencedRaise = 1000

// fenced checks the fenced resource's contract (docs/worker-protocol.md),
// for a design with fencing tokens: a worker opened with fencing acquires
// k7, and its critical section with the grant's token must succeed; then
// the resource is made to have seen a higher token (the storage's
// resource:k7:max-token raised, as a later holder's fenced write raises
// it), and the same critical section must be refused: fail, with
// value.rejected naming the refused access and value.max_token the
// highest token seen. A worker that writes all the same claims fencing and
// keeps none.
func (c *checkRun) fenced(ctx context.Context) error {
	if !c.design.Tokens {
		return nil
	}
	cfg := c.cfg
	cfg.Fencing = true
	p, problem, err := c.openWith(cfg)
	if err != nil {
		return err
	}
	if problem != "" {
		c.rep.breaks(RuleOpen, "with fencing: %s", problem)
		return nil
	}
	defer p.kill()
	c.rep.checked(RuleFenced)
	const key = "k7"
	acq, ok := c.op(p, history.FAcquire, key, nil)
	if !ok {
		return nil
	}
	g := acq.Value
	if g == nil || g.Token <= 0 {
		c.rep.breaks(RuleFenced, "acquire %s's ok reply has no value.token, and %s has fencing tokens", key, c.design.Name)
		return nil
	}
	grant := &history.Value{Owner: g.Owner, Token: g.Token}
	if r, ok := c.op(p, history.FCS, key, grant); !ok {
		return nil
	} else if r.Value == nil || r.Value.Token != g.Token {
		c.rep.breaks(RuleFenced, "cs %s with token %d replied token %v: report the token sent to the resource", key, g.Token, tokenOf(r.Value))
	}
	higher := g.Token + fencedRaise
	if err := raiseMaxToken(ctx, c.cfg.StorageAddr, key, higher); err != nil {
		return fmt.Errorf("raise the resource's highest token: %w", err)
	}
	r, _, err := p.call(workloads.Request{F: history.FCS, Key: key, Value: grant}, c.o.ReplyTimeout)
	switch {
	case err != nil:
		c.rep.breaks(RuleFenced, "cs %s with token %d after the resource had seen token %d: %v (want a fail reply)", key, g.Token, higher, err)
	case r.Type != history.Fail:
		c.rep.breaks(RuleFenced, "cs %s with token %d after the resource had seen token %d replied %s, want fail: "+
			"a fenced read and write must be refused, atomically at the resource, when the token is below %s's max-token",
			key, g.Token, higher, r.Type, workloads.RegisterKey(key))
	case r.Value == nil || (r.Value.Ext().Rejected != "read" && r.Value.Ext().Rejected != "write"):
		c.rep.breaks(RuleFenced, "cs %s refused with no value.rejected (want \"read\" or \"write\", the access refused)", key)
	case r.Value.Ext().MaxToken < higher:
		c.rep.breaks(RuleFenced, "cs %s refused with value.max_token %d, want the highest token the resource had seen (%d)", key, r.Value.Ext().MaxToken, higher)
	}
	c.op(p, history.FRelease, key, grant)
	return nil
}

// tokenOf returns v's token for a message, nil for no value.
func tokenOf(v *history.Value) any {
	if v == nil {
		return nil
	}
	return v.Token
}

// raiseMaxToken sets the storage's highest token seen for key's register.
func raiseMaxToken(ctx context.Context, addr, key string, token int64) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second})
	defer c.Close()
	return c.Set(ctx, workloads.RegisterKey(key)+":max-token", token, 0).Err()
}
