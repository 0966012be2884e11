package checker

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/lockcheck/lockcheck/history"
)

// Compose returns a checker that runs every checker in cs concurrently on
// the same history. Its verdict is the worst verdict of the non-advisory
// sub-results (Invalid > Unknown > Valid); a checker that panics becomes
// Unknown with the panic in Error. Anomalies are the concatenation of all
// sub-results' anomalies, Results the sub-results in the order of cs, and
// Visualize the first sub-result's Visualize that is set. The history is
// paired once and shared by the built-in checkers.
func Compose(name string, cs ...Checker) Checker {
	return &compose{name: name, cs: cs}
}

// ComposeInOrder is Compose, but runs the checkers one after another, in
// the order of cs.
func ComposeInOrder(name string, cs ...Checker) Checker {
	return &compose{name: name, cs: cs, inOrder: true}
}

// compose implements Compose and ComposeInOrder.
type compose struct {
	name    string
	cs      []Checker
	inOrder bool
}

// Name returns the name given to Compose.
func (c *compose) Name() string { return c.name }

// Check runs every sub-checker on h.
func (c *compose) Check(ctx context.Context, h history.History) Result {
	return c.run(ctx, h, nil)
}

// checkAnalysis implements analyzer, so nested compositions share one
// analysis.
func (c *compose) checkAnalysis(ctx context.Context, a *analysis) Result {
	return c.run(ctx, a.h, a)
}

// run runs the sub-checkers; a is created on first need when nil.
func (c *compose) run(ctx context.Context, h history.History, a *analysis) Result {
	var once sync.Once
	shared := func() *analysis {
		once.Do(func() {
			if a == nil {
				a = newAnalysis(h)
			}
		})
		return a
	}
	var cs []Checker
	for _, sub := range c.cs {
		if ap, ok := sub.(applier); ok && !ap.appliesTo(shared()) {
			continue
		}
		cs = append(cs, sub)
	}
	results := make([]Result, len(cs))
	var wg sync.WaitGroup
	for i, sub := range cs {
		if c.inOrder {
			results[i] = safeCheck(ctx, sub, h, shared)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = safeCheck(ctx, sub, h, shared)
		}()
	}
	wg.Wait()

	r := Result{Checker: c.name, Valid: Valid, Anomalies: []Anomaly{}, Results: results}
	var errs []string
	for _, sub := range results {
		r.Anomalies = append(r.Anomalies, sub.Anomalies...)
		if r.Visualize == nil {
			r.Visualize = sub.Visualize
		}
		if r.Panicked == "" {
			r.Panicked = sub.Panicked
		}
		if sub.Advisory {
			continue
		}
		r.Valid = worse(r.Valid, sub.Valid)
		if sub.Valid == Unknown && sub.Error != "" {
			errs = append(errs, sub.Checker+": "+sub.Error)
		}
	}
	if r.Valid == Unknown {
		r.Error = strings.Join(errs, "; ")
	}
	r.Incidents = Incidents(r.Anomalies)
	return r
}

// applier is a checker that judges some histories only (the register
// resource checker, the inventory checker); Compose leaves it out of a
// history it does not apply to, and out of the Results.
type applier interface {
	appliesTo(a *analysis) bool
}

// safeCheck runs one sub-checker, turning a panic into an Unknown result.
func safeCheck(ctx context.Context, c Checker, h history.History, shared func() *analysis) (r Result) {
	name := "?"
	defer func() {
		if p := recover(); p != nil {
			r = Result{Checker: name, Valid: Unknown, Anomalies: []Anomaly{}, Error: fmt.Sprintf("checker panicked: %v", p),
				Panicked: fmt.Sprintf("%s: %v", name, p)}
			if _, ok := c.(*advisory); ok {
				r.Advisory = true
			}
		}
	}()
	name = c.Name()
	if an, ok := c.(analyzer); ok {
		r = an.checkAnalysis(ctx, shared())
	} else {
		r = c.Check(ctx, h)
	}
	if r.Checker == "" {
		r.Checker = name
	}
	if r.Anomalies == nil {
		r.Anomalies = []Anomaly{}
	}
	return r
}

// Advisory returns a checker whose result is c's with Advisory set: it is
// reported, but a composition's verdict ignores it.
func Advisory(c Checker) Checker { return &advisory{c: c} }

// advisory implements Advisory.
type advisory struct{ c Checker }

// Name returns the wrapped checker's name.
func (a *advisory) Name() string { return a.c.Name() }

// Check runs the wrapped checker and marks its result advisory.
func (a *advisory) Check(ctx context.Context, h history.History) Result {
	r := a.c.Check(ctx, h)
	r.Advisory = true
	return r
}

// checkAnalysis implements analyzer.
func (a *advisory) checkAnalysis(ctx context.Context, an *analysis) Result {
	r := check(ctx, a.c, an)
	r.Advisory = true
	return r
}

// Default returns the full lockcheck checker: Compose("lockcheck", mutex,
// resource, inventory, fencing, overlap, liveness, stats, exercise, and
// windows: the lost-lock windows of grants the lock service released under
// their holders, always valid), with the
// exercise result's NotExercised on the composed result. Resource judges
// register histories and inventory judges inventory histories (those with
// seed ops); each is left out of the other's. When opts.Fenced, mutex and
// overlap are Advisory and their anomalies are marked Fenced: with fencing,
// two processes may both believe they hold the lock, and safety rests on the
// resource refusing the stale one, which resource and fencing decide. When
// opts.NoLock, mutex and overlap are left out: a design that takes no lock
// is judged by what it did to the resource alone.
func Default(opts Options) Checker {
	var mutex, overlap Checker = NewMutex(opts), NewOverlap(opts)
	if opts.Fenced {
		mutex, overlap = Advisory(mutex), Advisory(overlap)
	}
	cs := []Checker{mutex, NewResource(opts), NewInventory(), NewFencingFor(opts), overlap, NewLiveness(opts), NewStats(), NewExercise(opts), NewWindows(), NewConditions()}
	if opts.NoLock {
		cs = []Checker{NewResource(opts), NewInventory(), NewFencingFor(opts), NewLiveness(opts), NewStats(), NewExercise(opts), NewConditions()}
	}
	if opts.OneAtATime {
		return liftNotExercised(ComposeInOrder("lockcheck", cs...))
	}
	return liftNotExercised(Compose("lockcheck", cs...))
}

// Compile-time checks that the built-in checkers share the analysis.
var (
	_ analyzer = (*compose)(nil)
	_ analyzer = (*advisory)(nil)
	_ analyzer = (*mutex)(nil)
	_ analyzer = (*resource)(nil)
	_ analyzer = fencing{}
	_ analyzer = (*overlap)(nil)
	_ analyzer = (*liveness)(nil)
	_ analyzer = stats{}
	_ analyzer = inventory{}
	_ analyzer = windows{}
	_ analyzer = conditionsChecker{}
	_ applier  = (*resource)(nil)
	_ applier  = inventory{}
)
