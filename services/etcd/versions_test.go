package etcd

import (
	"testing"

	"github.com/lockcheck/lockcheck/clusters"
)

// TestEtcdVersionsRegistered: etcd's registration lists its versions, the
// Debian one first, every one able to find or build its server.
func TestEtcdVersionsRegistered(t *testing.T) {
	svc, err := clusters.FindService("etcd")
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Versions) < 2 || svc.Versions[0].Name != "3.4.23" {
		t.Fatalf("etcd versions %v: want the Debian 3.4.23 first and a built one", svc.Versions)
	}
	for _, v := range svc.Versions {
		if v.Server == nil || v.Reported == nil || v.Summary == "" {
			t.Errorf("etcd version %s: Server, Reported and Summary are required", v.Name)
		}
	}
}
