package workloads

import (
	"context"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// keepAliveFeed is a lease API whose KeepAlive hands out a channel the
// test feeds (the rest of the API is not called).
type keepAliveFeed struct {
	clientv3.Lease
	ch chan *clientv3.LeaseKeepAliveResponse
}

func (k *keepAliveFeed) KeepAlive(context.Context, clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	return k.ch, nil
}

// TestRenewalReporter: each keepalive reply is reported as a renewal mark
// and passed on in order, and the channel closes when the client's does.
func TestRenewalReporter(t *testing.T) {
	feed := &keepAliveFeed{ch: make(chan *clientv3.LeaseKeepAliveResponse, 16)}
	var got []string
	r := &renewalReporter{Lease: feed, report: func(d string) { got = append(got, d) }}
	out, err := r.KeepAlive(context.Background(), 0x1f)
	if err != nil {
		t.Fatal(err)
	}
	for ttl := int64(3); ttl > 1; ttl-- {
		feed.ch <- &clientv3.LeaseKeepAliveResponse{ID: 0x1f, TTL: ttl}
	}
	close(feed.ch)
	var ttls []int64
	for resp := range out {
		ttls = append(ttls, resp.TTL)
	}
	if len(ttls) != 2 || ttls[0] != 3 || ttls[1] != 2 {
		t.Fatalf("passed on TTLs %v, want [3 2]", ttls)
	}
	want := []string{"renewal sent: lease 0x1f kept alive (TTL 3 s)", "renewal sent: lease 0x1f kept alive (TTL 2 s)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("reported %q, want %q", got, want)
	}
}
