package history

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// TestHitRoundTrip: what a fault hit survives the JSON Lines form, and an
// op without one has none.
func TestHitRoundTrip(t *testing.T) {
	h := History{
		{Index: 0, Time: 1, Process: NemesisProcess, Type: Info, F: FPause, Value: &Value{
			Extra: &Extra{Targets: []int{3}, Hit: &Hit{Nemesis: "pause", Holder: true, Key: "k0", InCS: true, Lease: time.Second, Waited: 3 * time.Millisecond}},
		}},
		{Index: 1, Time: 2, Process: NemesisProcess, Type: Info, F: FResume, Value: &Value{
			Extra: &Extra{Targets: []int{3}, Hit: &Hit{Nemesis: "pause", Lease: time.Second, Lasted: 3 * time.Second, Outlasted: 2 * time.Second}},
		}},
		{Index: 2, Time: 3, Process: NemesisProcess, Type: Info, F: FFailover, Value: &Value{
			Extra: &Extra{Nodes: []string{"redis0"}, Hit: &Hit{Nemesis: "failover-kill", Holders: 2, Promoted: true, Unreplicated: true, Failpoint: "x"}},
		}},
		{Index: 3, Time: 4, Process: 0, Type: OK, F: FAcquire, Key: "k0", Value: &Value{Token: 1}},
	}
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("round trip changed the ops:\n%+v\n%+v", got, h)
	}
	if HitOf(&got[3]) != nil || HitOf(nil) != nil || HitOf(&got[0]).Key != "k0" {
		t.Error("HitOf")
	}
}
