package checker

import (
	"slices"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// lostDataWhy says how a lock node restarted with its data gone (the
// restart-lose nemesis: Hit.Node) lets a second client in, or "" for
// another fault: the node came back without the keys it had granted, so a
// holder's key that was on it is on fewer nodes, and a rival can be
// granted it where it needs only the nodes that are free. It reads the
// start op's Hit alone: the node, the keys it lost, and the nodes the
// struck holder's key was on.
func lostDataWhy(f history.Fault) string {
	if f.Hit == nil || f.Hit.Node == "" {
		return ""
	}
	node := f.Hit.Node
	s := node + " was killed and restarted with its data gone"
	switch len(f.Hit.Lost) {
	case 0:
		return s + ", and came back empty"
	case 1:
		s += " and lost key " + f.Hit.Lost[0]
	default:
		s += " and lost keys " + joinAnd(f.Hit.Lost)
	}
	key := f.Hit.Key
	if key == "" || !slices.Contains(f.Hit.Lost, key) || len(f.Hit.HeldOn) == 0 {
		return s + ", so it could grant them again while their holders still held them"
	}
	left := slices.DeleteFunc(slices.Clone(f.Hit.HeldOn), func(n string) bool { return n == node })
	s += ", which its holder had on " + joinAnd(f.Hit.HeldOn) + "; "
	if len(left) == 0 {
		return s + "so " + key + " was free everywhere while it was still held"
	}
	return s + "with " + node + "'s copy gone it was left on " + joinAnd(left) +
		" only, so the other nodes could grant " + key + " again while it was still held"
}

// tokenResetWhy says how a lock node restarted with its data gone between
// two grants (a restart-lose that struck after from and by to) sent the
// fencing tokens back: a token counter kept on the node (INCR) started
// over with its keys. It returns the sentence and the fault, and false
// when no such fault struck.
func tokenResetWhy(faults []history.Fault, from, to time.Duration) (string, history.Fault, bool) {
	for _, f := range faults {
		if f.Hit == nil || f.Hit.Node == "" || f.Start <= from || f.Start > to {
			continue
		}
		s := "In between, " + f.Hit.Node + " was killed and restarted with its data gone at " + secs(f.Start)
		if len(f.Hit.Lost) > 0 {
			s += " (it lost " + joinAnd(f.Hit.Lost) + ")"
		}
		return s + ", so a token counter kept on it started over.", f, true
	}
	return "", history.Fault{}, false
}
