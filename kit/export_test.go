package kit

// SetUnfenced leaves the fencing check out of the resource, for a test's
// worker that claims fencing and keeps none.
func SetUnfenced(b bool) { unfenced = b }
