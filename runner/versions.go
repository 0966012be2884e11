package runner

import (
	"os/exec"
	"strings"
)

// redisVersion returns what `redis-server --version` prints, or "".
func redisVersion() string {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
