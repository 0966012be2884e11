package etcd

import (
	"context"
	"io"

	"github.com/lockcheck/lockcheck/clusters"
)

// etcdModule is etcd's server module; its root package is etcd's main.
const etcdModule = "go.etcd.io/etcd/server/v3"

// Versions are the etcd servers a run can ask for: Debian's
// etcd-server (the default) and releases built from etcd's server module
// on first use. Each built one was started here with the members' flags
// (startMember) and passed the etcd-mutex control run.
var Versions = []clusters.ServerVersion{
	{
		Name: "3.4.23", Aliases: []string{"debian"},
		Summary:  "Debian's etcd-server package (the default)",
		Server:   func(context.Context, io.Writer) (string, error) { return Look() },
		Reported: versionOf,
	},
	etcdBuilt("3.6.16"),
	etcdBuilt("3.7.3"),
}

// etcdBuilt is the etcd release v built from etcd's server module.
func etcdBuilt(v string) clusters.ServerVersion {
	g := clusters.GoModuleServer{Module: etcdModule, Version: "v" + v, Binary: "etcd"}
	return clusters.ServerVersion{Name: v, Summary: "built from " + etcdModule + " v" + v + " on first use",
		Server: g.Server, Reported: versionOf}
}
