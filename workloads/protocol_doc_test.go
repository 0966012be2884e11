package workloads

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestOpenConfigDocumented: every field of the open request's config is
// documented on the worker protocol page, so that a worker written from the
// page alone knows all it is sent.
func TestOpenConfigDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "worker-protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	ty := reflect.TypeOf(Config{})
	for i := range ty.NumField() {
		name, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if !strings.Contains(page, "`"+name+"`") {
			t.Errorf("config field %s (json %q) is not on docs/worker-protocol.md", ty.Field(i).Name, name)
		}
	}
}
