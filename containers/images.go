package containers

import "os"

// ImagePrefixEnv names the environment variable holding the repository
// prefix of lockcheck's images ("lockcheck" when unset), as `make images`
// names them.
const ImagePrefixEnv = "LOCKCHECK_IMAGE_PREFIX"

// Image is one service image: its per-image environment variable, which
// names the whole image (an official one, say), and its default name under
// the prefix.
type Image struct {
	// Env overrides the image, e.g. LOCKCHECK_REDIS_IMAGE=redis:7.0.
	Env string
	// Name is the image's name and tag under the prefix, e.g. "redis:7.0".
	Name string
}

// Ref returns the image reference to run: $Env if set, else
// $LOCKCHECK_IMAGE_PREFIX/Name.
func (i Image) Ref() string {
	if v := os.Getenv(i.Env); v != "" {
		return v
	}
	prefix := os.Getenv(ImagePrefixEnv)
	if prefix == "" {
		prefix = "lockcheck"
	}
	return prefix + "/" + i.Name
}

// The images the container topologies run.
var (
	// redisImage has redis-server 7.0 and the clock shim at
	// /usr/local/lib/libclockshim.so.
	redisImage = Image{Env: "LOCKCHECK_REDIS_IMAGE", Name: "redis:7.0"}
	// zookeeperImage has ZooKeeper 3.8, the clock shim and an entrypoint
	// that writes zoo.cfg and myid from ZOO_* variables.
	zookeeperImage = Image{Env: "LOCKCHECK_ZOOKEEPER_IMAGE", Name: "zookeeper:3.8"}
)
