package checker

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// NewInventory returns the inventory checker. It judges histories of the
// inventory workload (those with seed ops, history.FSeed; Compose leaves it
// out of others): per lock key, the controller's seed op set an initial
// stock S, every accepted (ok) critical section either read a stock s > 0
// and wrote s-1 (a sale) or read 0 and wrote nothing (sold out), and the
// controller's final op read the stock F after every worker had stopped.
// With one holder at a time every sale takes one item from the stock, so
//
//   - sales never exceed S; the excess is "oversold" (Invalid);
//   - F = S - sales - k, where k counts the critical sections that ended in
//     info and did sell after all (0 <= k <= their number). A final stock
//     above S - sales means decrements were lost, two holders selling from
//     the same read ("lost-decrement", Invalid); below the lower end, the
//     stock fell by more than the recorded sales ("stock-mismatch",
//     Invalid);
//   - no two accepted sales read the same stock: the stock only goes down,
//     so a stock read twice was set back by a stale write. This scan is
//     sound on its own and names who sold from the same read; where the
//     two sales did not overlap and only a critical section left in doubt
//     can have set the stock back in between (findLateSale), the story
//     names that one as the cause, with the read that proves it landed,
//     and counts its sale among those sold (Stats["sales_landed_in_doubt"]).
//
// One anomaly per key tells the story: oversold when sales exceed the
// stock (every oversold item is a lost decrement once the stock has run
// out), else lost-decrement. A key whose seed op is missing, or whose final
// stock was not read, with nothing else found, is Unknown. Failed critical
// sections (refused by fencing, or certainly not applied) sold nothing.
func NewInventory() Checker { return inventory{} }

// inventory implements NewInventory.
type inventory struct{}

// Name returns "inventory".
func (inventory) Name() string { return "inventory" }

// Check checks h.
func (c inventory) Check(ctx context.Context, h history.History) Result {
	return c.checkAnalysis(ctx, newAnalysis(h))
}

// appliesTo implements applier: only inventory histories.
func (inventory) appliesTo(a *analysis) bool { return a.isInventory() }

// stock is what the history says about one key's stock.
type stock struct {
	key     string
	seeded  bool
	initial int64
	seedOp  int
	// final is the stock read after the run, when finalOK.
	final   int64
	finalOK bool
	finalOp int
	finalAt time.Duration
	// sales are the accepted critical sections that sold an item.
	sales []*csOp
	// maybe counts the critical sections whose outcome is unknown and
	// that may have sold an item; soldOut the accepted sold-out reads.
	maybe, soldOut int
	// doubt are those critical sections: rMaybe when it is known what
	// they read, rCredit when not, rIncr for an ok one that did not say.
	doubt []*csOp
	// odd are sales that read no item or wrote something other than
	// read-1.
	odd []*csOp
	// first is the invocation of the first critical section.
	first time.Duration
	cs    int
}

// checkAnalysis implements analyzer.
func (c inventory) checkAnalysis(_ context.Context, a *analysis) Result {
	if a.err != nil {
		return malformed(c.Name(), a.err)
	}
	r := newResult(c.Name())
	byKey := make(map[string]*stock)
	var keys []string
	get := func(k string) *stock {
		s := byKey[k]
		if s == nil {
			s = &stock{key: k, seedOp: -1, finalOp: -1, first: forever}
			byKey[k] = s
			keys = append(keys, k)
		}
		return s
	}
	for _, pr := range a.pairs {
		inv := pr.Invoke
		v := pr.Value()
		switch inv.F {
		case history.FSeed:
			if pr.Type() == history.OK && v != nil && v.Wrote != nil {
				s := get(inv.Key)
				s.seeded, s.initial, s.seedOp = true, *v.Wrote, pr.Complete.Index
			}
		case history.FFinal:
			s := get(inv.Key)
			if pr.Type() == history.OK && v != nil && v.Read != nil {
				s.final, s.finalOK, s.finalOp, s.finalAt = *v.Read, true, pr.Complete.Index, pr.Complete.Time
			}
		case history.FCS:
			s := get(inv.Key)
			s.cs++
			s.first = min(s.first, inv.Time)
			if pr.Type() == history.Fail {
				continue
			}
			if v == nil {
				v = &history.Value{}
			}
			// A sold-out read wrote nothing: an accepted one that read and
			// did not write, or one of any outcome that read no item. A
			// critical section in doubt (info) that read an item and did
			// not say it wrote may have sold it: its write (an EXEC that
			// timed out, say) was sent with an unknown outcome.
			soldOut := v.Read != nil && v.Wrote == nil && (pr.Type() == history.OK || *v.Read <= 0)
			switch {
			case pr.Type() == history.OK && soldOut:
				s.soldOut++
			case pr.Type() == history.OK && v.Read != nil:
				op := &csOp{kind: rRMW, key: inv.Key, proc: inv.Process, read: *v.Read, wrote: *v.Wrote,
					token: v.Token, inv: inv.Index, done: pr.Complete.Index, call: inv.Time, ret: pr.Complete.Time}
				s.sales = append(s.sales, op)
				if op.read <= 0 || op.wrote != op.read-1 {
					s.odd = append(s.odd, op)
				}
			case !soldOut:
				// Info, or an ok that did not say what it read: it may
				// have sold an item.
				s.maybe++
				op := &csOp{kind: rCredit, key: inv.Key, proc: inv.Process, token: v.Token, inv: inv.Index, done: -1,
					call: inv.Time, ret: pr.End(), returned: pr.Returned()}
				if pr.Complete != nil {
					op.done = pr.Complete.Index
				}
				switch {
				case pr.Type() == history.OK:
					op.kind = rIncr
				case v.Read != nil:
					op.kind, op.read, op.wrote = rMaybe, *v.Read, *v.Read-1
				}
				s.doubt = append(s.doubt, op)
			}
		}
	}
	sort.Strings(keys)
	faults, retired := a.getFaults(), retirements(a)
	var initial, sales, maybe, soldOut, oversold, lost, final, landed int64
	finalKnown := true
	var unknown []string
	for _, k := range keys {
		s := byKey[k]
		initial += s.initial
		sales += int64(len(s.sales))
		maybe += int64(s.maybe)
		soldOut += int64(s.soldOut)
		if s.finalOK {
			final += s.final
		} else {
			finalKnown = false
		}
		if !s.seeded {
			if s.cs > 0 {
				unknown = append(unknown, fmt.Sprintf("no seed op for lock %s: its initial stock is unknown", k))
			}
			continue
		}
		j := judgeStock(s, faults, retired)
		oversold += j.oversold
		lost += j.lost
		landed += j.landed
		r.Anomalies = append(r.Anomalies, j.anomalies...)
		if len(j.anomalies) == 0 && !s.finalOK && s.cs > 0 {
			unknown = append(unknown, fmt.Sprintf("the final stock of lock %s was not read: lost decrements could only be looked for among the sales", k))
		}
	}
	r.Stats["keys"] = len(keys)
	r.Stats["initial_stock"] = initial
	r.Stats["sales"] = sales
	r.Stats["sales_indeterminate"] = maybe
	r.Stats["sales_landed_in_doubt"] = landed
	r.Stats["sold_out_reads"] = soldOut
	if finalKnown && len(keys) > 0 {
		r.Stats["final_stock"] = final
	}
	r.Stats["oversold"] = oversold
	r.Stats["lost_decrements"] = lost
	switch {
	case len(r.Anomalies) > 0:
		r.Valid = Invalid
	case len(unknown) > 0:
		r.Valid = Unknown
		r.Error = strings.Join(unknown, "; ")
	}
	return r
}

// judgement is the verdict on one key's stock.
type judgement struct {
	oversold, lost int64
	// landed counts the sales left in doubt that the reads prove landed.
	landed    int64
	anomalies []Anomaly
}

// maxStories bounds the same-read stories one anomaly quotes.
const maxStories = 3

// judgeStock compares one key's sales with its initial and final stock and
// tells the story. A sale left in doubt that the reads prove landed (see
// findLateSale) counts as sold, and its story replaces that of the two
// holders who sold from the same read.
func judgeStock(s *stock, faults []history.Fault, retired map[int]*history.Op) judgement {
	var j judgement
	if s.first == forever { // no critical section: the story starts at 0
		s.first = 0
	}
	acked := int64(len(s.sales))
	groups := sameReads(s.sales, true)
	byReads := int64(0)
	for _, g := range groups {
		byReads += int64(len(g) - 1)
	}
	runs := stockRuns(groups)
	lates := make([]*lateSale, len(runs))
	for i, run := range runs {
		if l := findLateSale(run[0], s, retired); l != nil {
			lates[i] = l
			j.landed++
			if l.prev != nil { // it sold from the same stock as prev
				byReads++
			}
		}
	}
	j.landed = min(j.landed, int64(s.maybe))
	n := acked + j.landed
	high := s.initial - n                     // the final stock if no other info op sold
	low := s.initial - acked - int64(s.maybe) // if every one did
	byFinal := int64(0)
	if s.finalOK && s.final > high {
		byFinal = s.final - high
	}
	j.lost = max(byFinal, byReads)
	if n > s.initial {
		j.oversold = n - s.initial
	}

	// The anomaly spans the run from the first critical section, or from
	// the first sale a story names, to the final read.
	an := Anomaly{Key: s.key, Start: s.first, End: s.finalAt}
	if len(groups) > 0 {
		an.Start = forever
	}
	if s.seedOp >= 0 {
		an.Ops = append(an.Ops, s.seedOp)
	}
	stories, stale, storyEnd := sameReadStories(s.key, runs, lates, &an, faults)
	if s.finalOp >= 0 {
		an.Ops = append(an.Ops, s.finalOp)
	}
	if !s.finalOK && len(s.sales) > 0 {
		an.End = max(an.End, s.sales[len(s.sales)-1].ret)
	}
	if an.End < an.Start {
		an.End = an.Start
	}
	// The faults that matter are those in force while the stories ran,
	// when there are stories; else any during the run.
	faultsFrom, faultsTo := an.Start, an.End
	if storyEnd > 0 {
		faultsTo = storyEnd
	}
	an.Nemesis = describeFaults(faultsDuring(faults, faultsFrom, faultsTo))
	var how []string
	if j.landed > 0 {
		how = append(how, fmt.Sprintf("%d acknowledged", acked),
			plural(int(j.landed), "left in doubt that a later read proves landed", "left in doubt that later reads prove landed"))
	}
	if more := s.maybe - int(j.landed); more > 0 {
		what := plural(more, "critical section", "critical sections")
		if j.landed > 0 {
			what = fmt.Sprintf("%d more", more)
		}
		how = append(how, fmt.Sprintf("%s whose outcome is unknown may have sold more", what))
	}
	unknownSales := ""
	if len(how) > 0 {
		unknownSales = " (" + strings.Join(how, ", and ") + ")"
	}
	sold := fmt.Sprintf("%s sold from a stock of %d on lock %s%s", plural(int(n), "item was", "items were"), s.initial, s.key, unknownSales)
	finalSays := "the final stock was not read"
	if s.finalOK {
		finalSays = fmt.Sprintf("the final stock is %d", s.final)
	}
	lostSays := ""
	switch {
	case j.lost > 0 && j.landed > 0:
		// The stories tell how: a sale left in doubt landed late.
		lostSays = plural(int(j.lost), "decrement was lost", "decrements were lost")
	case j.lost == 1:
		lostSays = "1 decrement was lost when two holders sold from the same read"
	case j.lost > 0:
		lostSays = fmt.Sprintf("%d decrements were lost, each when two holders sold from the same read", j.lost)
	}
	why := faultSentence(faultsDuring(faults, faultsFrom, faultsTo), stale, "")
	switch {
	case j.oversold > 0:
		an.Kind = "oversold"
		claim := fmt.Sprintf("%s: %d oversold; %s, not %d", sold, j.oversold, finalSays, high)
		if !s.finalOK {
			claim = fmt.Sprintf("%s: %d oversold; %s", sold, j.oversold, finalSays)
		}
		if lostSays != "" {
			claim += ": " + lostSays
		}
		an.Explanation = sentences(claim+".", stories, why)
		j.anomalies = append(j.anomalies, an)
	case j.lost > 0:
		an.Kind = "lost-decrement"
		claim := fmt.Sprintf("%s, so the final stock should be %s, but it is %d: %s", sold, expected(low, high), s.final, lostSays)
		if !s.finalOK {
			claim = fmt.Sprintf("%s and %s: %s", sold, finalSays, lostSays)
		}
		an.Explanation = sentences(claim+".", stories, why)
		j.anomalies = append(j.anomalies, an)
	}
	if s.finalOK && s.final < low {
		m := Anomaly{Kind: "stock-mismatch", Key: s.key, Start: s.first, End: s.finalAt, Ops: []int{s.seedOp, s.finalOp}}
		m.Nemesis = describeFaults(faultsDuring(faults, m.Start, m.End))
		m.Explanation = fmt.Sprintf("%s, so the final stock should be %s, but it is %d: the stock fell by %d more than the recorded sales.",
			sold, expected(low, high), s.final, low-s.final)
		j.anomalies = append(j.anomalies, m)
	}
	for _, op := range s.odd {
		if len(j.anomalies) >= maxListed {
			break
		}
		m := Anomaly{Kind: "stock-mismatch", Key: s.key, Processes: []int{op.proc}, Start: op.call, End: op.ret, Ops: []int{op.inv, op.done}}
		m.Nemesis = describeFaults(faultsDuring(faults, m.Start, m.End))
		m.Explanation = fmt.Sprintf("Process %d's critical section on lock %s (%s) read a stock of %d and left %d: a sale takes exactly one item from a stock above zero.",
			op.proc, s.key, span(op.call, op.ret), op.read, op.wrote)
		j.anomalies = append(j.anomalies, m)
	}
	return j
}

// expected renders the final stock a run should end with: "88", or "86 to
// 88" when critical sections with unknown outcomes may have sold.
func expected(low, high int64) string {
	if low == high {
		return fmt.Sprint(high)
	}
	return fmt.Sprintf("%d to %d", low, high)
}

// sameReads groups the ops that read the same value (sales the same
// stock), by value, the highest first when descending (a stock counts
// down, a register up) and the earliest invoked first in each group; only
// groups of two or more.
func sameReads(read []*csOp, descending bool) [][]*csOp {
	ops := append([]*csOp(nil), read...)
	sort.SliceStable(ops, func(i, j int) bool {
		if ops[i].read != ops[j].read {
			return (ops[i].read > ops[j].read) == descending
		}
		return ops[i].call < ops[j].call
	})
	var groups [][]*csOp
	for i := 0; i < len(ops); {
		j := i + 1
		for j < len(ops) && ops[j].read == ops[i].read {
			j++
		}
		if j-i > 1 {
			groups = append(groups, ops[i:j])
		}
		i = j
	}
	return groups
}

// stockRuns merges groups of sales from one read (sameReads) into runs of
// consecutive stocks: a stale write that set the stock back makes every
// stock below it be sold again.
func stockRuns(groups [][]*csOp) [][][]*csOp {
	var runs [][][]*csOp
	for i := 0; i < len(groups); {
		j := i + 1
		for j < len(groups) && groups[j][0].read == groups[j-1][0].read-1 {
			j++
		}
		runs = append(runs, groups[i:j])
		i = j
	}
	return runs
}

// lateSale is a sale left in doubt whose write, the reads prove, landed
// late and set the stock back.
type lateSale struct {
	// lateWrite is the sale, how many others could have done it and the
	// crash that retired its process.
	lateWrite
	// first and again are the first two acknowledged sales from the stock
	// it set back: first's write was overwritten, again's read proves the
	// late write landed.
	first, again *csOp
	// prev is the acknowledged sale that sold from the same stock as op
	// did (the first that took the stock to what op wrote), or nil.
	prev *csOp
}

// findLateSale looks, when the first two acknowledged sales that read one
// stock r (g, by invocation) did not overlap, for what wrote r again in
// between: a sale left in doubt, invoked before the second returned and,
// when an acknowledged sale wrote r, before that one returned (it read
// r+1, which the stock held only until then). It returns nil when the two
// overlapped (a plain race), or when an acknowledged writer of r was still
// running after the first began. A candidate that returned before the
// first began landed before it. The latest invoked candidate is named.
func findLateSale(g []*csOp, s *stock, retired map[int]*history.Op) *lateSale {
	a, b := g[0], g[1]
	if a.ret >= b.call {
		return nil
	}
	r := a.read
	readBy := forever // the stock held r+1 until then, at the latest
	var prev *csOp
	for _, op := range s.sales {
		if op.wrote != r {
			continue
		}
		if op.ret > a.call {
			return nil
		}
		readBy = min(readBy, op.ret)
		if prev == nil || op.call < prev.call {
			prev = op
		}
	}
	late := latestLate(slices.Values(s.doubt), func(op *csOp) bool {
		if op.call > b.ret || op.call > readBy || op.ret < a.call {
			return false
		}
		return op.kind != rMaybe || op.wrote == r
	}, retired)
	if late.op == nil {
		return nil
	}
	return &lateSale{lateWrite: late, first: a, again: b, prev: prev}
}

// story tells how the late sale set the stock back and which read proves
// it.
func (l *lateSale) story() string {
	op, a, b := l.op, l.first, l.again
	r := a.read
	doubt := "left in doubt"
	switch {
	case op.kind == rIncr:
		doubt += fmt.Sprintf(" (its reply, op %d, did not say what it read)", op.done)
	case op.done >= 0:
		doubt += fmt.Sprintf(" (info at %s, op %d)", secs(op.returned), op.done)
	}
	s := fmt.Sprintf("The stock was set back to %d by process %d's critical section, invoked at %s and %s", r, op.proc, secs(op.call), doubt)
	if l.retired != nil {
		s += fmt.Sprintf(", whose process was retired at %s", secs(l.retired.Time))
	}
	read := "it read"
	if op.kind != rMaybe {
		read = "it must have read"
	}
	s += fmt.Sprintf(": %s %d", read, r+1)
	if l.prev != nil {
		s += fmt.Sprintf(", as process %d's sale (%s) did,", l.prev.proc, span(l.prev.call, l.prev.ret))
	}
	s += fmt.Sprintf(" and its write of %d landed late, after process %d's sale (%s) had taken the stock from %d to %d; process %d's read of %d (%s) proves it landed, as no acknowledged sale wrote %d then",
		r, a.proc, span(a.call, a.ret), r, a.wrote, b.proc, r, span(b.call, b.ret), r)
	if l.others > 0 {
		s += fmt.Sprintf(" (%s left in doubt could have done the same)", plural(l.others, "other critical section", "other critical sections"))
	}
	return s + "."
}

// sameReadStories tells how the first runs of sales from one read came
// about (a sale left in doubt that landed late, when lates names one for
// the run, else the two holders who sold from the same read), adds their
// processes and ops to an, and returns the stories, the process that sold
// first from a stale read (for the fault sentence; -1 when none), and when
// the last sale the stories name returned (0 when none).
func sameReadStories(key string, runs [][][]*csOp, lates []*lateSale, an *Anomaly, faults []history.Fault) (string, int, time.Duration) {
	var out []string
	stale := -1
	var end time.Duration
	seen := make(map[int]bool)
	addProc := func(p int) {
		if !seen[p] {
			seen[p] = true
			an.Processes = append(an.Processes, p)
		}
	}
	for i, run := range runs {
		if i == maxStories {
			out = append(out, fmt.Sprintf("%s more like it.", plural(len(runs)-maxStories, "run of sales", "runs of sales")))
			break
		}
		first := run[0]
		_, claim, ran := readTwice(key, first, faults)
		late := lates[i]
		if late != nil {
			addProc(late.op.proc)
			an.Ops = append(an.Ops, late.op.inv)
			if late.op.done >= 0 {
				an.Ops = append(an.Ops, late.op.done)
			}
			an.Start = min(an.Start, late.op.call)
			if late.prev != nil {
				addProc(late.prev.proc)
				an.Ops = append(an.Ops, late.prev.inv, late.prev.done)
				an.Start = min(an.Start, late.prev.call)
			}
		}
		if stale < 0 {
			stale = first[0].proc
			if late != nil {
				stale = late.op.proc
			}
		}
		for _, g := range run {
			for _, op := range g {
				addProc(op.proc)
				an.Ops = append(an.Ops, op.inv, op.done)
				an.Start = min(an.Start, op.call)
				end = max(end, op.ret)
			}
		}
		hi, lo := run[0][0].read, run[len(run)-1][0].read
		lostN := 0
		for _, g := range run {
			lostN += len(g) - 1
		}
		switch {
		case late != nil && len(run) == 1:
			out = append(out, late.story())
		case late != nil:
			out = append(out, late.story(), fmt.Sprintf("Each stock from %d down to %d was then sold from more than once (%s).",
				hi, lo, plural(lostN, "lost decrement", "lost decrements")))
		case len(run) == 1:
			out = append(out, capitalize(claim)+" ("+ran+").")
		default:
			out = append(out, fmt.Sprintf("The stock was set back: each stock from %d down to %d was sold from more than once (%s). It began when %s (%s).",
				hi, lo, plural(lostN, "lost decrement", "lost decrements"), claim, ran))
		}
	}
	return strings.Join(out, " "), stale, end
}
