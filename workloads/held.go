package workloads

import (
	"fmt"
	"sync"
)

// heldLocks is what a library-backed lock client keeps of the locks it
// holds: the library's own lock object by key, so Release and Valid can call
// it. Safe for concurrent use; the zero value is ready.
type heldLocks[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// put records the library's lock object for key.
func (h *heldLocks[T]) put(key string, v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[string]T)
	}
	h.m[key] = v
}

// get returns key's lock object, false when none is held.
func (h *heldLocks[T]) get(key string) (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[key]
	return v, ok
}

// held returns key's lock object, or an error when none is held (for a
// Validator's Valid).
func (h *heldLocks[T]) held(key string) (T, error) {
	v, ok := h.get(key)
	if !ok {
		return v, fmt.Errorf("lock %s not held", key)
	}
	return v, nil
}

// pop removes and returns key's lock object, false when none was held.
func (h *heldLocks[T]) pop(key string) (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[key]
	delete(h.m, key)
	return v, ok
}

// take removes and returns key's lock object for a release; a release of a
// key this client does not hold fails for certain (nothing was sent).
func (h *heldLocks[T]) take(key string) (T, error) {
	v, ok := h.pop(key)
	if !ok {
		return v, Definite(fmt.Errorf("release %s: not held by this client", key))
	}
	return v, nil
}
