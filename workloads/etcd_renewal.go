package workloads

import (
	"context"
	"fmt"

	"github.com/lockcheck/lockcheck/history"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// renewalReporter is an etcd client's lease API that reports each
// keepalive reply of KeepAlive (the renewal mark, Config.Report): the
// concurrency package's session keeps its lease alive through the client's
// KeepAlive, so every renewal of a session passes here.
type renewalReporter struct {
	clientv3.Lease
	report func(string)
}

// reportRenewals makes c report the renewals of its leases to report.
func reportRenewals(c *clientv3.Client, report func(string)) {
	c.Lease = &renewalReporter{Lease: c.Lease, report: report}
}

// KeepAlive is the client's KeepAlive, each reply reported as it is
// passed on; the channel it returns closes when the client's does.
func (r *renewalReporter) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	in, err := r.Lease.KeepAlive(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make(chan *clientv3.LeaseKeepAliveResponse, cap(in))
	go func() {
		defer close(out)
		for resp := range in {
			r.report(fmt.Sprintf("%slease 0x%x kept alive (TTL %d s)", history.EventRenewalPrefix, int64(resp.ID), resp.TTL))
			out <- resp
		}
	}()
	return out, nil
}
