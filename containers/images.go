package containers

import (
	_ "embed"
	"fmt"
	"os"
	"strings"
)

// ImagePrefixEnv names the environment variable holding the repository
// prefix of lockcheck's images ("lockcheck" when unset), as `make images`
// names them.
const ImagePrefixEnv = "LOCKCHECK_IMAGE_PREFIX"

// ImageLabel is the label scripts/images.sh puts on every image it builds.
const ImageLabel = "org.lockcheck.image=1"

// Image is one of lockcheck's images: its short name, its per-image
// environment variable, which names the whole image (an official one,
// say), and its default name under the prefix.
type Image struct {
	// Short is the image's short name, its folder under docker/ ("redis").
	Short string
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

// imageList is images.txt: the one list of lockcheck's images, which
// scripts/images.sh reads too.
//
//go:embed images.txt
var imageList string

// images is imageList parsed, in build order.
var images = parseImages(imageList)

// parseImages reads the image list: "short name:tag" a line, # comments.
func parseImages(text string) []Image {
	var out []Image
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 2 {
			panic(fmt.Sprintf("containers/images.txt: %q: want a short name and a name:tag", line))
		}
		out = append(out, Image{Short: f[0], Env: "LOCKCHECK_" + strings.ToUpper(f[0]) + "_IMAGE", Name: f[1]})
	}
	return out
}

// Images returns lockcheck's images, in build order.
func Images() []Image { return append([]Image(nil), images...) }

// ImageOf returns the image called short ("redis").
func ImageOf(short string) (Image, bool) {
	for _, im := range images {
		if im.Short == short {
			return im, true
		}
	}
	return Image{}, false
}

// MustImage is ImageOf for the images this package runs.
func MustImage(short string) Image {
	im, ok := ImageOf(short)
	if !ok {
		panic("containers/images.txt has no image " + short)
	}
	return im
}
