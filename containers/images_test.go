package containers

import (
	"os"
	"path/filepath"
	"testing"
)

// TestImageList checks the one list of images against the Dockerfiles:
// every image but the debootstrapped base has docker/NAME/Dockerfile, and
// every Dockerfile there has its line in images.txt.
func TestImageList(t *testing.T) {
	if len(Images()) < 2 || Images()[0].Short != "base" {
		t.Fatalf("images %+v: want base first, then the services", Images())
	}
	listed := make(map[string]bool)
	for _, im := range Images() {
		listed[im.Short] = true
		if im.Short == "base" {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "docker", im.Short, "Dockerfile")); err != nil {
			t.Errorf("image %s: %v", im.Short, err)
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "docker", "*", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(filepath.Dir(f)); !listed[name] {
			t.Errorf("%s has no line in containers/images.txt", f)
		}
	}
	if im, ok := ImageOf("redis"); !ok || im.Env != "LOCKCHECK_REDIS_IMAGE" || im.Name != "redis:7.0" {
		t.Errorf("ImageOf(redis) = %+v, %v", im, ok)
	}
	if _, ok := ImageOf("nope"); ok {
		t.Error("ImageOf(nope) found one")
	}
}

// TestParseImages refuses a malformed line of the list.
func TestParseImages(t *testing.T) {
	got := parseImages("# comment\n\nredis redis:7.0\n")
	if len(got) != 1 || got[0] != (Image{Short: "redis", Env: "LOCKCHECK_REDIS_IMAGE", Name: "redis:7.0"}) {
		t.Errorf("parseImages: %+v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a line with three fields did not panic")
		}
	}()
	parseImages("redis redis 7.0\n")
}
