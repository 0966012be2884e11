package nemesis

import (
	"context"
	"testing"

	"github.com/lockcheck/lockcheck/clusters"
)

// slotMasters is a cluster whose keys live on different masters, as Redis
// Cluster's do: the master of key k is "m-k", the cluster's own leader
// (the master of its first slots) "m0". Only the node choice is read.
type slotMasters struct{ clusters.Cluster }

func (slotMasters) Leader(context.Context) (string, error) { return "m0", nil }
func (slotMasters) KeyLeader(_ context.Context, key string) (string, error) {
	return "m-" + key, nil
}

// oneLeader is a cluster with one leader for every key (ZooKeeper, etcd,
// Sentinel).
type oneLeader struct{ clusters.Cluster }

func (oneLeader) Leader(context.Context) (string, error) { return "zk1", nil }

// TestLeaderOf: a fault on a lock node strikes the master of a held key
// where keys live on different masters (a clock jump of the master of
// slot 0 while k0 lives on another left the lock untouched), the aimed
// holder's key's master under an Aim, and the one leader elsewhere.
func TestLeaderOf(t *testing.T) {
	held := []Target{{Process: 1, Key: "k2"}}
	aimAt := func(t Target) context.Context {
		return WithAim(context.Background(), func() (Target, error) { return t, nil })
	}
	tests := []struct {
		name string
		ctx  context.Context
		c    clusters.Cluster
		hs   []Target
		want string
	}{
		{"the master of a held key", context.Background(), slotMasters{}, held, "m-k2"},
		{"the aimed holder's key, not the first holder's", aimAt(Target{Process: 4, Key: "k7"}), slotMasters{}, held, "m-k7"},
		{"an aimed worker that holds nothing", aimAt(Target{Process: 4}), slotMasters{}, held, "m-k2"},
		{"one leader for every key", aimAt(Target{Process: 4, Key: "k7"}), oneLeader{}, held, "zk1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := holdingEnv{c: tt.c, hs: tt.hs}
			got, err := leaderOf(tt.ctx, env, tt.c.(clusters.Primary))
			if err != nil || got != tt.want {
				t.Errorf("leaderOf = %q, %v; want %q", got, err, tt.want)
			}
			// The clock faults and starve-server pick their node so.
			if got, err := (&Clock{env: env}).pick(tt.ctx); err != nil || got != tt.want {
				t.Errorf("clock picks %q, %v; want %q", got, err, tt.want)
			}
			if got, err := pickNode(tt.ctx, env, nil); err != nil || got != tt.want {
				t.Errorf("pickNode = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
