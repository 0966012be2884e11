package history

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// TestRestartLoseHitRoundTrip: what a restart-lose hit (the node, the keys
// it lost, the nodes the holder's key was on) survives the JSON Lines form
// under its short names.
func TestRestartLoseHitRoundTrip(t *testing.T) {
	h := History{{Index: 0, Time: 1, Process: NemesisProcess, Type: Info, F: "restart-lose", Value: &Value{
		Extra: &Extra{Nodes: []string{"lock2"}, Hit: &Hit{Nemesis: "restart-lose", Holder: true, Key: "k0", Holders: 1, Lease: time.Second,
			Node: "lock2", Lost: []string{"k0", "k1"}, HeldOn: []string{"lock0", "lock2", "lock4"}}},
	}}}
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"node":"lock2"`, `"lost":["k0","k1"]`, `"held_on":["lock0","lock2","lock4"]`} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("encoded %s lacks %s", buf.String(), want)
		}
	}
	got, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("round trip changed the op:\n%+v\n%+v", got[0].Value.Ext().Hit, h[0].Value.Ext().Hit)
	}
}
