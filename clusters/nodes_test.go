package clusters

import (
	"slices"
	"testing"
)

// TestHeldCuts: a link two faults cut comes back only when both let go;
// dropping what a fault does not hold frees nothing.
func TestHeldCuts(t *testing.T) {
	h := make(HeldCuts)
	if got := h.Hold("a", []string{"x", "y", "x"}); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("first hold cuts %v, want x, y", got)
	}
	if got := h.Hold("b", []string{"y", "z"}); !slices.Equal(got, []string{"z"}) {
		t.Fatalf("second hold cuts %v, want z", got)
	}
	if got := h.Drop("c", nil); len(got) != 0 {
		t.Fatalf("a fault that holds nothing frees %v", got)
	}
	if got := h.Drop("a", []string{"y"}); len(got) != 0 {
		t.Fatalf("dropping a's hold on y, which b holds too, frees %v", got)
	}
	if got := h.Drop("a", nil); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("dropping a frees %v, want x", got)
	}
	if got := h.Drop("b", nil); !slices.Equal(got, []string{"y", "z"}) {
		t.Fatalf("dropping b frees %v, want y, z", got)
	}
	if len(h) != 0 {
		t.Fatalf("left %v", h)
	}
}
