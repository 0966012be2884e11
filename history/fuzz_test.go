package history

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// FuzzDecode checks that no input makes Decode panic, that errors are one
// line naming a line number, and that whatever decodes re-encodes and decodes
// to the same ops.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k"}` + "\n"))
	f.Add([]byte(`{"index":1,"time":2,"process":0,"type":"ok","f":"acquire","key":"k","value":{"token":3,"owner":"a"}}`))
	f.Add([]byte(`{"index":2,"time":3,"process":-1,"type":"info","f":"pause","value":{"targets":[1],"duration":5}}`))
	f.Add([]byte(`{"index":3,"time":4,"process":-1,"type":"info","f":"pause","value":{"targets":[1],"hit":{"nemesis":"pause","holder":true,"in_cs":true,"lease":1000}}}`))
	f.Add([]byte("{\n}\n\n{oops"))
	f.Add([]byte(`{"index":0,"time":1,"process":0,"type":"invoke","f":"acquire","key":"k"}` + "\n" + `{"index":1,"ti`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Decode(bytes.NewReader(data))
		ht, torn, terr := DecodeTorn(bytes.NewReader(data))
		switch {
		case terr != nil && (err == nil || err.Error() != terr.Error()):
			t.Fatalf("DecodeTorn error %v, Decode error %v", terr, err)
		case torn != nil && (len(data) == 0 || data[len(data)-1] == '\n'):
			t.Fatalf("torn line %d reported in input ending with a newline", torn.Line)
		case torn != nil && (err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("line %d: ", torn.Line))):
			t.Fatalf("torn line %d, but Decode says %v", torn.Line, err)
		case terr == nil && torn == nil && err != nil:
			t.Fatalf("DecodeTorn accepted what Decode refused: %v", err)
		case terr == nil && len(ht) != len(h) && err == nil:
			t.Fatalf("DecodeTorn gave %d ops, Decode %d", len(ht), len(h))
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line starting with its line number", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, h); err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := Decode(&buf)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if len(again) != len(h) {
			t.Fatalf("re-decoded %d ops, want %d", len(again), len(h))
		}
		for i := range h {
			if again[i].String() != h[i].String() {
				t.Fatalf("op %d changed: %q -> %q", i, h[i], again[i])
			}
		}
		_, _ = h.Pairs()
		_ = h.Faults()
	})
}
