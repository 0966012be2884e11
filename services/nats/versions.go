package nats

import (
	"context"
	"io"
	"os/exec"

	"github.com/lockcheck/lockcheck/clusters"
)

// natsModule is nats-server's module; its root package is the server's
// main.
const natsModule = "github.com/nats-io/nats-server/v2"

// Versions are the nats-servers a run can ask for: Debian's
// nats-server (the default) and a release built from the server's module
// on first use, one that has the fix of nats-io/nats-server#4320 (2.9.21)
// and per-key TTLs (2.11).
var Versions = []clusters.ServerVersion{
	{
		Name: "2.9.10", Aliases: []string{"debian"},
		Summary:  "Debian's nats-server package (the default)",
		Server:   func(context.Context, io.Writer) (string, error) { return Look() },
		Reported: versionOf,
	},
	natsBuilt("2.15.2"),
}

// natsBuilt is the nats-server release v built from its module.
func natsBuilt(v string) clusters.ServerVersion {
	g := clusters.GoModuleServer{Module: natsModule, Version: "v" + v, Binary: "nats-server"}
	return clusters.ServerVersion{Name: v, Summary: "built from " + natsModule + " v" + v + " on first use",
		Server: g.Server, Reported: versionOf}
}

// versionOf returns the version the nats-server at path reports
// ("2.9.10"), "" when it cannot tell.
func versionOf(path string) string {
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return ""
	}
	return parseVersion(string(out))
}
