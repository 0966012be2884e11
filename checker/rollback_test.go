package checker

import (
	"context"
	"strings"
	"testing"
)

// TestLostUpdatesGroupedByRollback plants a stale write that sets the
// register back: values 0, 1 and 2 are each read twice, which must be one
// lost-update anomaly counting three lost updates, while a lone duplicate
// read elsewhere stays an anomaly of its own.
func TestLostUpdatesGroupedByRollback(t *testing.T) {
	b := &builder{}
	// Process 0 reads 0 at 1.0 s and writes 1 at 9.0 s, after 1 has
	// written 1, 2 and 3: the register goes back to 1.
	b.cs(0, 1.0, 9.0, 0, 0)
	b.cs(1, 2.0, 2.1, 0, 0).cs(1, 3.0, 3.1, 1, 0).cs(1, 4.0, 4.1, 2, 0)
	// After the rollback, 2 reads 1, 2 and 3 again.
	b.cs(2, 10.0, 10.1, 1, 0).cs(2, 11.0, 11.1, 2, 0).cs(2, 12.0, 12.1, 3, 0)
	// A separate, lone duplicate read of 10 (an unrelated lost update).
	b.cs(3, 20.0, 20.1, 4, 0)
	for v := int64(5); v < 10; v++ {
		b.cs(3, 20.0+float64(v), 20.1+float64(v), v, 0)
	}
	b.cs(4, 30.0, 31.0, 10, 0).cs(5, 30.2, 30.3, 10, 0)
	res := NewResource(Options{}).Check(context.Background(), b.build())
	if res.Valid != Invalid {
		t.Fatalf("verdict %v, want invalid", res.Valid)
	}
	var lost []Anomaly
	for _, a := range res.Anomalies {
		if a.Kind == "lost-update" {
			lost = append(lost, a)
		}
	}
	if len(lost) != 2 {
		for _, a := range lost {
			t.Log(a.Explanation)
		}
		t.Fatalf("got %d lost-update anomalies, want 2 (the rollback over 0..2, the lone 10)", len(lost))
	}
	rb := 0
	for _, a := range lost {
		if strings.Contains(a.Explanation, "set back") {
			rb++
			if !strings.Contains(a.Explanation, "from 0 to 2") || !strings.Contains(a.Explanation, "3 updates were lost") || a.Lost != 3 {
				t.Errorf("rollback story (lost %d): %s", a.Lost, a.Explanation)
			}
		} else if a.Lost != 1 {
			t.Errorf("lone lost update: lost %d, want 1: %s", a.Lost, a.Explanation)
		}
	}
	if rb != 1 {
		t.Errorf("%d rollback stories, want 1", rb)
	}
}
