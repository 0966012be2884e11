// Package cachedir names the folder where lockcheck keeps what it writes
// or builds once and reuses (bundled workers, server versions built from
// Go modules). It imports only the standard library.
package cachedir

import (
	"os"
	"path/filepath"
)

// Dir is $LOCKCHECK_CACHE, else the user's cache directory's lockcheck/,
// else the temporary directory's lockcheck-cache/.
func Dir() string {
	if d := os.Getenv("LOCKCHECK_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "lockcheck")
	}
	return filepath.Join(os.TempDir(), "lockcheck-cache")
}
