package etcd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
)

var _ clusters.Wiper = (*Cluster)(nil)

// etcdReplaceWait bounds the member replacement of RestartEmpty: the
// remaining members must elect a leader (the killed member may have led)
// before they take a membership change.
const etcdReplaceWait = 30 * time.Second

// RestartEmpty SIGKILLs an etcd member, deletes its data dir, and brings
// it back empty the way etcd allows: a member whose data is gone cannot
// rejoin under its old identity (etcd refuses to start it: "member ... has
// already been bootstrapped"), so, as etcd's runbook for a lost disk says,
// the other members remove it from the cluster and add it back at the same
// peer URL, and it starts with --initial-cluster-state existing and
// receives the whole store from the leader.
func (e *Cluster) RestartEmpty(ctx context.Context, node string) error {
	return e.NodeSet.RestartEmpty(ctx, node, func(i int) error {
		m := e.members[i]
		if err := clusters.RemoveData(m.Dir, "data"); err != nil {
			return err
		}
		if err := e.replaceMember(ctx, m); err != nil {
			return err
		}
		m.existing = true
		return nil
	})
}

// replaceMember removes member m (down) from the cluster and adds it back
// at its peer URL, through another running member.
func (e *Cluster) replaceMember(ctx context.Context, m *etcdMember) error {
	e.Mu.Lock()
	var old uint64
	for id, name := range e.ids {
		if name == m.Name {
			old = id
		}
	}
	e.Mu.Unlock()
	if old == 0 {
		return fmt.Errorf("replace %s: its member id is unknown", m.Name)
	}
	peerURL := "http://" + m.front.Addr().String()
	removed := false
	return clusters.Poll(ctx, etcdReplaceWait, func() error {
		var errs []error
		for _, o := range e.members {
			if o == m || !o.Running() {
				continue
			}
			addr := o.ClientAddr()
			if !removed {
				members, err := etcdMembers(ctx, addr)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if _, ok := members[old]; ok {
					if err := etcdCall(ctx, addr, "remove", map[string]any{"ID": strconv.FormatUint(old, 10)}, nil); err != nil {
						errs = append(errs, err)
						continue
					}
				}
				removed = true
			}
			members, err := etcdMembers(ctx, addr)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, urls := range members {
				for _, u := range urls {
					if u == peerURL {
						return nil // added (an earlier try's reply may have been lost)
					}
				}
			}
			if err := etcdCall(ctx, addr, "add", map[string]any{"peerURLs": []string{peerURL}}, nil); err != nil {
				errs = append(errs, err)
				continue
			}
			return nil
		}
		if len(errs) == 0 {
			return errors.New("no other member runs")
		}
		return errors.Join(errs...)
	}, "replace "+m.Name)
}

// etcdMembers lists the cluster's members as the member at addr knows
// them: id -> peer URLs.
func etcdMembers(ctx context.Context, addr string) (map[uint64][]string, error) {
	var body struct {
		Members []struct {
			ID       json.Number `json:"ID"`
			PeerURLs []string    `json:"peerURLs"`
		} `json:"members"`
	}
	if err := etcdCall(ctx, addr, "list", map[string]any{}, &body); err != nil {
		return nil, err
	}
	out := make(map[uint64][]string)
	for _, mb := range body.Members {
		id, err := strconv.ParseUint(string(mb.ID), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("member list of %s: id %q: %w", addr, mb.ID, err)
		}
		out[id] = mb.PeerURLs
	}
	return out, nil
}

// etcdCall posts req to the member at addr's /v3/cluster/member/<op>
// (etcd's JSON gateway) and decodes the reply into out, when not nil.
func etcdCall(ctx context.Context, addr, op string, req any, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v3/cluster/member/"+op, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return fmt.Errorf("member %s at %s: %w", op, addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("member %s at %s: %s %s", op, addr, resp.Status, e.Error)
	}
	if out == nil {
		return nil
	}
	d := json.NewDecoder(resp.Body)
	d.UseNumber()
	return d.Decode(out)
}
