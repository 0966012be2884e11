package history

import (
	"bytes"
	"reflect"
	"testing"
)

// TestHitShapeRoundTrip: a partition between servers keeps its shape, its
// cuts and restores in order, and who reached whom through the JSON Lines
// form.
func TestHitShapeRoundTrip(t *testing.T) {
	h := History{
		{Index: 0, Time: 1, Process: NemesisProcess, Type: Info, F: "partition-servers", Value: &Value{
			Extra: &Extra{Nodes: []string{"zk1", "zk2", "zk3"}, Hit: &Hit{Nemesis: "partition-bridge", Holders: 1, Shape: "bridge", Cuts: [][2]string{{"zk1", "zk3"}},
				Reach: map[string][]string{"zk1": {"zk2"}, "zk2": {"zk1", "zk3"}, "zk3": {"zk2"}}}},
		}},
		{Index: 1, Time: 2, Process: NemesisProcess, Type: Info, F: "partition-servers", Value: &Value{
			Extra: &Extra{Hit: &Hit{Nemesis: "swizzle", Shape: "swizzle", Cuts: [][2]string{{"a", "b"}, {"b", "c"}}, Restores: [][2]string{{"b", "c"}, {"a", "b"}}}},
		}},
	}
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"cuts":[["zk1","zk3"]]`)) || !bytes.Contains(buf.Bytes(), []byte(`"reach":{"zk1":["zk2"]`)) {
		t.Errorf("JSON form %s", buf.Bytes())
	}
	got, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("round trip changed the ops:\n%+v\n%+v", got, h)
	}
}
