package nemesis

import "context"

// Aim resolves the target of a fault fired by a lock event (package
// schedule): the holder of the event's lock, as it stands when the fault
// strikes (Key empty when it no longer holds it, so that the fault's Hit
// says it missed).
type Aim func() (Target, error)

type aimKey struct{}

// WithAim returns ctx carrying aim. A nemesis that strikes a holder (pause,
// partition, the link faults, starve, session-kill, failover's holder)
// strikes the worker aim returns, at once, instead of waiting for one and
// picking it; a fault on a lock node strikes at once instead of waiting for
// a holder. Without it, every nemesis picks its target as it always has.
func WithAim(ctx context.Context, aim Aim) context.Context {
	return context.WithValue(ctx, aimKey{}, aim)
}

// AimOf returns the aim ctx carries, if any: a nemesis registered from
// outside this package that strikes a holder takes its target from it when
// a trigger fired it.
func AimOf(ctx context.Context) (Aim, bool) {
	a, ok := ctx.Value(aimKey{}).(Aim)
	return a, ok && a != nil
}

// Preparer is a nemesis that can make ready, before its trigger's event,
// what its start op needs (starve's CPU throttle), so that a fault fired by
// a lock event is in force at once. The trigger engine calls Prepare while
// the fault waits for its event; Heal undoes what it made.
type Preparer interface {
	Prepare(ctx context.Context) error
}
