package matrix

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Plan is everything a matrix was asked to run, whichever part of it one
// machine ran: the cells and the seeds, and, for a shard, which part. A
// shard stores its plan in its matrix.json so that `check matrix merge`
// knows which runs to expect from all the shards together.
type Plan struct {
	Cells []Cell `json:"cells"`
	// Seeds is the seed list, as --seeds takes it.
	Seeds string `json:"seeds"`
	// Shard is the part of the plan this matrix ran; the zero Shard is
	// all of it.
	Shard Shard `json:"shard"`
}

// Item is one run of a plan: a cell and a seed.
type Item struct {
	// N numbers the item in the whole plan (from 0, cell by cell, seed by
	// seed), the same in every shard: run directories are named by it.
	N    int
	Cell int // index in Plan.Cells
	Run  int // index of the seed in the plan's seeds
	Seed uint64
}

// Items expands the plan into its runs: every cell x every seed, in cell
// order, then seed order. This is the one place where a matrix's axes are
// multiplied out; a new axis (a service version, say) is one more loop
// here and one more word in the run's name and sort key.
func (p Plan) Items(seeds []uint64) []Item {
	items := make([]Item, 0, len(p.Cells)*len(seeds))
	for i := range p.Cells {
		for j, s := range seeds {
			items = append(items, Item{N: len(items), Cell: i, Run: j, Seed: s})
		}
	}
	return items
}

// Key is an item's place in the order shards are dealt from: the cell's
// name, then the seed. It depends on nothing but the cells and seeds, so
// every machine deals the same shards.
func (p Plan) Key(it Item) string {
	return fmt.Sprintf("%s\x00%s\x00%020d", p.Cells[it.Cell].Row, p.Cells[it.Cell].Column, it.Seed)
}

// Deal returns the shard (1 to n) of each item: the items are sorted by
// cell name and seed and dealt round-robin, the k-th (from 0) to shard
// k mod n + 1, so the n shards of a plan cover every item exactly once.
func (p Plan) Deal(items []Item, n int) []int {
	order := make([]int, len(items))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool { return p.Key(items[order[a]]) < p.Key(items[order[b]]) })
	shard := make([]int, len(items))
	for k, i := range order {
		shard[i] = k%max(n, 1) + 1
	}
	return shard
}

// Pick returns the items of the plan's shard (Deal), in plan order.
func (p Plan) Pick(items []Item) []Item {
	if p.Shard.All() {
		return items
	}
	var out []Item
	for k, s := range p.Deal(items, p.Shard.N) {
		if s == p.Shard.I {
			out = append(out, items[k])
		}
	}
	return out
}

// RunName is the name of an item's run directory below the matrix's
// runs/: <number>-<row>-<column>-s<seed>, the number from 1.
func (p Plan) RunName(it Item) string {
	c := p.Cells[it.Cell]
	return fmt.Sprintf("%03d-%s-%s-s%d", it.N+1, slug(c.Row), slug(c.Column), it.Seed)
}

// Shard is the I-th of N parts of a plan (1 <= I <= N). The zero Shard is
// the whole plan.
type Shard struct {
	I int `json:"i,omitempty"`
	N int `json:"n,omitempty"`
}

// MaxShards bounds N in --shard I/N.
const MaxShards = 10000

// ParseShard reads "I/N", as in --shard 2/3.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("--shard %q: want I/N, as in 2/3 (the 2nd of 3 parts)", s)
	}
	if n < 1 || n > MaxShards || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want 1 <= I <= N <= %d", s, MaxShards)
	}
	return Shard{I: i, N: n}, nil
}

// All reports whether the shard is the whole plan.
func (s Shard) All() bool { return s.N <= 1 }

// String is "I/N", or "" for the whole plan.
func (s Shard) String() string {
	if s.All() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// PlanKey identifies what a plan asks for, not which shard of it: two
// shards of one matrix have the same key.
func (p Plan) PlanKey() string {
	keys := make([]string, len(p.Cells))
	for i, c := range p.Cells {
		keys[i] = c.Key()
	}
	return strings.Join(keys, "\x01") + "\x02" + p.Seeds
}
