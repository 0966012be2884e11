package checker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// asZxids rewrites every token t of h as the zxid 1:(796+t), as a
// ZooKeeper ensemble in its first epoch hands them out.
func asZxids(h history.History) history.History {
	out := make(history.History, len(h))
	for i, op := range h {
		if op.Value != nil {
			v, x := *op.Value, op.Value.Ext()
			for _, t := range []*int64{&v.Token, &x.MaxToken} {
				if *t != 0 {
					*t = 1<<32 | (796 + *t)
				}
			}
			if v.Extra != nil {
				v.Extra = &x // a copy: the original keeps its own
			}
			op.Value = &v
		}
		out[i] = op
	}
	return out
}

func TestTokenKind(t *testing.T) {
	for _, tt := range []struct {
		k     TokenKind
		token int64
		want  string
	}{
		{NumberTokens, 41, "token 41"},
		{NumberTokens, 4294968093, "token 4294968093"},
		{ZxidTokens, 4294968093, "zxid 1:797"},
		{ZxidTokens, 0x2_ffffffff, "zxid 2:4294967295"},
		{ZxidTokens, 797, "zxid 0:797"},
	} {
		if got := tt.k.Token(tt.token); got != tt.want {
			t.Errorf("%v.Token(%d) = %q, want %q", tt.k, tt.token, got, tt.want)
		}
	}
	if got := ZxidTokens.with(4294968093); got != " (zxid 1:797)" {
		t.Errorf("with: %q", got)
	}
	if got := ZxidTokens.with(0); got != "" {
		t.Errorf("with no token: %q", got)
	}
	if got := withToken(41); got != " (token 41)" {
		t.Errorf("withToken: %q", got)
	}
}

// TestFencingZxidStories: with Options.Tokens ZxidTokens every fencing
// story prints the tokens as zxids, and none as a raw number.
func TestFencingZxidStories(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		h    history.History
		want []string
	}{
		{"late in-doubt write", fencedLateWrite(true), []string{"Process 5's write with zxid 1:798, left in doubt",
			"accepted process 2's write with zxid 1:800"}},
		{"stale write accepted", fencedPauseAccepted(), []string{"zxid 1:838", "zxid 1:839"}},
		{"refused", fencedPauseRejected(), []string{"with zxid 1:838 at 5.41 s because it had already seen zxid 1:839"}},
		{"token order", tokenOrderHistory(), []string{"zxid 1:"}},
		{"read from", staleReadsNewerWrite(), []string{"zxid 1:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewFencingFor(Options{Tokens: ZxidTokens}).Check(ctx, asZxids(tt.h))
			if len(r.Anomalies) == 0 {
				t.Fatalf("no anomalies: %v %s", r.Valid, r.Error)
			}
			text := ""
			for _, a := range r.Anomalies {
				text += a.Explanation + "\n"
			}
			assertTells(t, text, tt.want)
			if strings.Contains(text, "token 4294") {
				t.Errorf("a raw zxid:\n%s", text)
			}
			plain := NewFencing().Check(ctx, asZxids(tt.h))
			if plain.Valid != r.Valid || len(plain.Anomalies) != len(r.Anomalies) || strings.Contains(plain.Anomalies[0].Explanation, "zxid") {
				t.Errorf("plain numbers: %v, want %v and no zxid\n%s", plain.Valid, r.Valid, dump(plain.Anomalies))
			}
		})
	}
}

// TestZxidStoriesEverywhere: with Options.Tokens ZxidTokens the double
// holder's story (its grants and the range of those that followed), the
// nonlinearizable window's and the watch's stale write print zxids as
// epoch:counter, and no story prints one as a raw number; with the zero
// value they stay plain tokens.
func TestZxidStoriesEverywhere(t *testing.T) {
	ctx := context.Background()
	more := (&builder{}).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 3, 0, 0).
		acquire(1, 1.5, 1.51, 2, "b").release(1, 1.6, 1.61, true, "b").
		acquire(2, 1.7, 1.71, 3, "c").release(2, 1.8, 1.81, true, "c").
		release(0, 3.1, 3.11, true, "a").build()
	twoMore := (&builder{}).acquire(0, 1, 1.01, 1, "a").cs(0, 1.02, 3, 0, 0).
		acquire(1, 1.5, 1.51, 2, "b").release(1, 1.6, 1.61, true, "b").
		acquire(2, 1.7, 1.71, 3, "c").release(2, 1.8, 1.81, true, "c").
		acquire(3, 1.9, 1.91, 4, "d").release(3, 2.0, 2.01, true, "d").
		release(0, 3.1, 3.11, true, "a").build()
	for _, tt := range []struct {
		name string
		h    history.History
		want []string
	}{
		{"double holder", doubleHolderPause(), []string{"(zxid 1:"}},
		{"a grant that followed", more, []string{"(zxid 1:797)", "(zxid 1:798)", "(to process 2; zxid 1:799)"}},
		{"grants that followed", twoMore, []string{"(to processes 2 and 3; zxids 1:799 to 1:800)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Default(Options{Tokens: ZxidTokens, Timeout: 30 * time.Second}).Check(ctx, asZxids(tt.h))
			text := ""
			for _, a := range r.Anomalies {
				text += a.Kind + ": " + a.Explanation + "\n"
			}
			for _, s := range tt.want {
				if !strings.Contains(text, s) {
					t.Errorf("stories lack %q:\n%s", s, text)
				}
			}
			if strings.Contains(text, "token") {
				t.Errorf("a zxid printed as a token:\n%s", text)
			}
			plain := Default(Options{Timeout: 30 * time.Second}).Check(ctx, asZxids(tt.h))
			for _, a := range plain.Anomalies {
				if strings.Contains(a.Explanation, "zxid") {
					t.Errorf("plain tokens printed as zxids: %s", a.Explanation)
				}
			}
		})
	}
	w := NewWatch(Options{Fenced: true, Tokens: ZxidTokens})
	var found Anomaly
	for _, op := range asZxids(fencedPauseAccepted()) {
		if a, ok := w.Observe(op); ok {
			found = a
			break
		}
	}
	if !strings.Contains(found.Explanation, "with zxid 1:") || strings.Contains(found.Explanation, "token") {
		t.Errorf("the watch's stale write: %q", found.Explanation)
	}
}
