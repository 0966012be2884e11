package checker

import (
	"context"
	"strings"
	"testing"
)

// TestFencingNotUsed: an unfenced run's fencing result says fencing was
// not used; a fenced run's, another checker's, or an invalid one's does
// not.
func TestFencingNotUsed(t *testing.T) {
	ctx := context.Background()
	unfenced := NewFencing().Check(ctx, clean())
	if got := unfenced.NotUsed(); !strings.HasPrefix(got, "not used") {
		t.Errorf("unfenced: %q", got)
	}
	if got := NewFencing().Check(ctx, fencedPauseRejected()).NotUsed(); got != "" {
		t.Errorf("fenced: %q", got)
	}
	if got := NewOverlap(Options{}).Check(ctx, clean()).NotUsed(); got != "" {
		t.Errorf("overlap: %q", got)
	}
	unfenced.Valid = Invalid
	if got := unfenced.NotUsed(); got != "" {
		t.Errorf("invalid: %q", got)
	}
	unfenced.Valid, unfenced.Stats = Valid, map[string]any{}
	if got := unfenced.NotUsed(); got != "" {
		t.Errorf("no fenced stat: %q", got)
	}
}
