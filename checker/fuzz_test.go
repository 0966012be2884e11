package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// FuzzDefault checks that no decodable history makes a checker panic or
// produce a result that does not encode, and that Validity's JSON parser
// accepts only what it writes.
func FuzzDefault(f *testing.F) {
	for _, name := range []string{"no-grants", "token-order", "inventory-oversold"} {
		b, err := os.ReadFile(filepath.Join("testdata", "histories", name, "history.jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	var buf bytes.Buffer
	h := (&builder{}).acquire(3, 0.1, 0.2, 42, "o3").fault(history.FPause, 0.25, 1, 3).
		acquire(1, 0.5, 0.6, 43, "o1").cs(1, 0.61, 0.62, 0, 43).csRejected(3, 0.21, 1.1, 0, 42, 43).
		release(3, 1.2, 1.3, false, "o3").csInfo(1, 1.4, 1.5).crash(1, 1.6).build()
	if err := history.Encode(&buf, h); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"index":0,"time":1,"process":0,"type":"invoke","f":"cs","key":"k"}` + "\n" +
		`{"index":1,"time":2,"process":0,"type":"info","f":"cs","key":"k","value":{"read":3}}`))
	f.Add([]byte(`"unknown"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v Validity
		if err := json.Unmarshal(data, &v); err == nil {
			b, _ := json.Marshal(v)
			if !bytes.Equal(bytes.TrimSpace(data), b) {
				t.Fatalf("validity %s decoded from %q", b, data)
			}
		}
		h, err := history.Decode(bytes.NewReader(data))
		if err != nil || len(h) > 200 {
			return
		}
		start := time.Now()
		r := Default(Options{Timeout: 100 * time.Millisecond, StuckBound: time.Second}).Check(context.Background(), h)
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("check took %v", d)
		}
		for _, sub := range r.Results {
			if strings.Contains(sub.Error, "panicked") {
				t.Fatalf("%s: %s", sub.Checker, sub.Error)
			}
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("encode result: %v", err)
		}
	})
}
