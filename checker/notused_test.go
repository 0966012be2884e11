package checker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestFencingNotUsed: the fencing checker of an unfenced run says fencing
// was not used, and results.json carries it; a fenced run's, another
// checker's, or an invalid unfenced one's (its grants' tokens out of
// order) does not.
func TestFencingNotUsed(t *testing.T) {
	ctx := context.Background()
	unfenced := NewFencing().Check(ctx, clean())
	if !strings.HasPrefix(unfenced.NotUsed, "not used") || unfenced.Valid != Valid {
		t.Errorf("unfenced: %v %q", unfenced.Valid, unfenced.NotUsed)
	}
	if b, err := json.Marshal(unfenced); err != nil || !strings.Contains(string(b), `"not_used":"not used: `) {
		t.Errorf("results.json: %s %v", b, err)
	}
	if got := NewFencing().Check(ctx, fencedPauseRejected()).NotUsed; got != "" {
		t.Errorf("fenced: %q", got)
	}
	if got := NewOverlap(Options{}).Check(ctx, clean()).NotUsed; got != "" {
		t.Errorf("overlap: %q", got)
	}
	b := (&builder{}).acquire(0, 0.1, 0.11, 2, "o0").cs(0, 0.12, 0.13, 0, 0).release(0, 0.14, 0.15, true, "o0")
	b.acquire(1, 0.2, 0.21, 1, "o1").cs(1, 0.22, 0.23, 1, 0).release(1, 0.24, 0.25, true, "o1")
	if r := NewFencing().Check(ctx, b.build()); r.Valid != Invalid || r.NotUsed != "" {
		t.Errorf("invalid: %v %q", r.Valid, r.NotUsed)
	}
	if r := Default(Options{}).Check(ctx, clean()); r.NotUsed != "" {
		t.Errorf("composed: %q", r.NotUsed)
	}
	var fencing Result
	for _, s := range Default(Options{}).Check(ctx, clean()).Results {
		if s.Checker == "fencing" {
			fencing = s
		}
	}
	if fencing.NotUsed != unfenced.NotUsed {
		t.Errorf("default's fencing sub-result: %q", fencing.NotUsed)
	}
}
