package workloads

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

func TestParseLockValue(t *testing.T) {
	for _, tc := range []struct {
		in        string
		exp, over int64
		wantErr   bool
	}{
		{"1795286078421:p3.7:0", 1795286078421, 0, false},
		{"1795286078421:p3.7:1795286077000", 1795286078421, 1795286077000, false},
		{"1795286078421", 1795286078421, 0, false},
		{"p3:1", 0, 0, true},
		{"", 0, 0, true},
	} {
		v, err := parseLockValue(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && (v.expiry != tc.exp || v.over != tc.over || v.owner != tc.in)) {
			t.Errorf("parseLockValue(%q) = %+v, %v", tc.in, v, err)
		}
	}
}

func FuzzParseLockValue(f *testing.F) {
	f.Add("1795286078421:p3.7:0")
	f.Add("12")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseLockValue(s)
		if err == nil && v.owner != s {
			t.Fatalf("owner %q of %q", v.owner, s)
		}
	})
}

// TestSetNXGetSetClientClock shows M5: a client whose clock runs ahead by
// more than the lease judges a live lock expired and takes it over, while a
// client with the real clock does not; and a server that forgets nothing
// keeps the key (it has no TTL).
func TestSetNXGetSetClientClock(t *testing.T) {
	r := startRedis(t)
	ctx := context.Background()
	a := newClient(t, testConfig(r, "redis-setnx-getset", 0))
	honest := newClient(t, testConfig(r, "redis-setnx-getset", 1))
	fastCfg := testConfig(r, "redis-setnx-getset", 1)
	fastCfg.ClockFile = filepath.Join(t.TempDir(), "w1")
	if err := WriteClockSetting(fastCfg.ClockFile, ClockSetting{Offset: time.Second}); err != nil {
		t.Fatal(err)
	}
	fast := newClient(t, fastCfg)
	g, err := a.Acquire(ctx, "m5")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := honest.Acquire(ctx, "m5"); err == nil {
		t.Fatal("a client with the real clock took a live lock")
	}
	g2, err := fast.Acquire(ctx, "m5")
	if err != nil {
		t.Fatalf("a client 1 s ahead (lease 300 ms) did not take the lock: %v", err)
	}
	if g2.Token != g.Token+1 {
		t.Errorf("tokens %d then %d", g.Token, g2.Token)
	}
	v, err := a.Release(ctx, "m5", g)
	if err != nil || *v.Released || v.Ext().DeletedOwner != g2.Owner {
		t.Errorf("stale release: %+v %v, want the successor's key deleted", v, err)
	}
}
