package report

import (
	"fmt"
	"slices"

	"github.com/lockcheck/lockcheck/history"
)

// A design that takes its lock on several nodes (RedLock's majority of
// lock0..lock4, redis-zk's Redis and ZooKeeper halves) gets one timeline
// lane per lock node under the workers' lanes, as in Kleppmann's diagram:
// on each, a bar for every grant from the acquire to the holder's release,
// cut short where the node itself released the key (an observed server
// release), the node's releases as ticks, and the faults that struck that
// node.

// lockNodes returns the lock nodes the grants of pairs name, sorted, when
// some grant names two or more (nil otherwise: one lane per node would
// only repeat the workers').
func lockNodes(pairs []history.Pair) []string {
	var out []string
	several := false
	for _, pr := range pairs {
		if pr.Invoke.F != history.FAcquire || pr.Type() != history.OK {
			continue
		}
		v := pr.Value()
		if v == nil {
			continue
		}
		several = several || len(v.Ext().Nodes) >= 2
		for _, n := range v.Ext().Nodes {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	if !several {
		return nil
	}
	slices.Sort(out)
	return out
}

// nodeRelease is one release a lock node made itself.
type nodeRelease struct {
	op    *history.Op
	node  string
	owner string
}

// serverReleases returns the observed releases of lock keys, by node.
func serverReleases(h history.History) []nodeRelease {
	n := 0
	for i := range h {
		if h[i].F == history.FServerRelease {
			n++
		}
	}
	out := make([]nodeRelease, 0, n)
	for i := range h {
		op := &h[i]
		if _, ok := op.ReleaseAt(); !ok || op.Key == "" || op.Value.Ext().Release.Probe || len(op.Value.Ext().Nodes) == 0 {
			continue
		}
		out = append(out, nodeRelease{op: op, node: op.Value.Ext().Nodes[0], owner: op.Value.Owner})
	}
	return out
}

// releasesOf returns the releases of rels by owner, for the owners of
// the holds of each only: a long run observes hundreds of thousands of
// releases, and draws the node lanes of a few of its holds.
func releasesOf(rels []nodeRelease, each func(yield func(holdIv) bool)) map[string][]nodeRelease {
	out := map[string][]nodeRelease{}
	for h := range each {
		out[h.owner] = nil
	}
	for _, r := range rels {
		if rs, ok := out[r.owner]; ok {
			out[r.owner] = append(rs, r)
		}
	}
	return out
}

// renderNodeLanes draws the lock nodes' lanes, the first at lane index
// first: the grants each node made (holds hs that name it, drawn is
// whether a hold is drawn at all), cut at the node's own release of the
// same owner's key, and the releases as ticks.
func renderNodeLanes(b *svgBuf, nodes []string, first int, hs []holdIv, drawn func(holdIv) bool, rels []nodeRelease) {
	if len(nodes) == 0 {
		return
	}
	lane := func(n string) int { return first + slices.Index(nodes, n) }
	relAt := releasesOf(rels, func(yield func(holdIv) bool) {
		for _, h := range hs {
			if len(h.nodes) > 0 && drawn(h) && !yield(h) {
				return
			}
		}
	})
	var path relPath
	b.f(`<g class="nodes">`)
	for _, h := range hs {
		if len(h.nodes) == 0 || !drawn(h) {
			continue
		}
		for _, n := range h.nodes {
			if !slices.Contains(nodes, n) {
				continue
			}
			end := h.end
			for _, r := range relAt[h.owner] {
				if at, _ := r.op.ReleaseAt(); r.node == n && at >= h.start && at < end {
					end = at
				}
			}
			path.move(ms(h.start), laneTop(lane(n))+14)
			path.hline(max(ms(end-h.start), 0.01))
		}
	}
	if path.Len() > 0 {
		b.f(`<path class="hp nd" d="%s"/>`, path.String())
	}
	for _, r := range rels {
		if !slices.Contains(nodes, r.node) {
			continue
		}
		at, _ := r.op.ReleaseAt()
		b.f(`<path class="nr" d="M%s %sv24">`, msNum(at), num(laneTop(lane(r.node))+2))
		b.title(fmt.Sprintf("%s %s key %s of %s at %s [op %d]", r.node, r.op.Value.Ext().Release.How, r.op.Key, r.owner, secs(at), r.op.Index))
		b.f(`</path>`)
	}
	b.f(`</g>`)
}

// nodeLanes returns the lanes of the lock nodes a fault struck, nil when
// it struck none of them.
func nodeLanes(nodes []string, first int, struck []string) []int {
	var out []int
	for _, n := range struck {
		if i := slices.Index(nodes, n); i >= 0 {
			out = append(out, first+i)
		}
	}
	return out
}
