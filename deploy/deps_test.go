package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDepsNames runs scripts/deps.sh --name with a stand-in apt-cache that
// knows either Debian's package names or Ubuntu's: the script asks for
// postgresql-15 and chromium where the distribution has them, else for
// postgresql and chromium-browser, and leaves every other name alone.
func TestDepsNames(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, distro := range []struct {
		name  string
		knows string // the packages its apt-cache shows
		want  map[string]string
	}{
		{"debian", "postgresql-15 postgresql chromium", map[string]string{"postgresql-15": "postgresql-15", "chromium": "chromium", "etcd-server": "etcd-server"}},
		{"ubuntu", "postgresql chromium-browser", map[string]string{"postgresql-15": "postgresql", "chromium": "chromium-browser", "etcd-server": "etcd-server"}},
	} {
		t.Run(distro.name, func(t *testing.T) {
			bin := t.TempDir()
			fake := "#!/bin/sh\n# apt-cache show NAME: known or not\nfor p in " + distro.knows + "; do [ \"$2\" = \"$p\" ] && exit 0; done\nexit 100\n"
			if err := os.WriteFile(filepath.Join(bin, "apt-cache"), []byte(fake), 0o755); err != nil {
				t.Fatal(err)
			}
			for pkg, want := range distro.want {
				cmd := exec.Command("bash", script, "--name", pkg)
				cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("deps.sh --name %s: %v", pkg, err)
				}
				if got := strings.TrimSpace(string(out)); got != want {
					t.Errorf("deps.sh --name %s = %q, want %q", pkg, got, want)
				}
			}
		})
	}
}
