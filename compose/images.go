package compose

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// ImageLabel is the label scripts/images.sh puts on every image it builds.
const ImageLabel = "org.lockcheck.image=1"

// Images lists the images scripts/images.sh builds, by short name, with
// their default names; Image applies the environment's overrides.
var images = []struct{ name, def string }{
	{"base", "base:bookworm"},
	{"redis", "redis:7.0"},
	{"zookeeper", "zookeeper:3.8"},
	{"postgres", "postgres:15"},
	{"mariadb", "mariadb:10.11"},
	{"etcd", "etcd:3.4"},
}

// ImageNames returns the short names Image knows, in build order.
func ImageNames() []string {
	names := make([]string, len(images))
	for i, im := range images {
		names[i] = im.name
	}
	return names
}

// ImageVar returns the environment variable that names a service's image,
// LOCKCHECK_<NAME>_IMAGE, read by scripts/images.sh and docker-compose.yml.
func ImageVar(name string) string {
	return "LOCKCHECK_" + strings.ToUpper(name) + "_IMAGE"
}

// Image returns the image of a service by short name ("redis",
// "zookeeper", ...): $LOCKCHECK_<NAME>_IMAGE, else
// $LOCKCHECK_IMAGE_PREFIX/<default> with the prefix "lockcheck" by default
// (the same rule as scripts/images.sh). An unknown name returns "".
func Image(name string) string {
	if v := os.Getenv(ImageVar(name)); v != "" {
		return v
	}
	prefix := os.Getenv("LOCKCHECK_IMAGE_PREFIX")
	if prefix == "" {
		prefix = "lockcheck"
	}
	for _, im := range images {
		if im.name == name {
			return prefix + "/" + im.def
		}
	}
	return ""
}

// MissingImages returns those of the named services whose image the engine
// does not have.
func MissingImages(ctx context.Context, names ...string) []string {
	var missing []string
	for _, n := range names {
		img := Image(n)
		if img == "" || exec.CommandContext(ctx, "docker", "image", "inspect", img).Run() != nil {
			missing = append(missing, img)
		}
	}
	return missing
}
