package matrix

// ByVersions returns every cell once per lock-server version (check run
// --service-version), in order: the row becomes ROW@VERSION and the flags
// ask for the version. A cell keeps its expectation, so a version that
// behaves otherwise than the catalog says shows as a missed cell of its
// own row. No versions returns the cells as they are.
func ByVersions(cells []Cell, versions []string) []Cell {
	if len(versions) == 0 {
		return cells
	}
	out := make([]Cell, 0, len(cells)*len(versions))
	for _, c := range cells {
		for _, v := range versions {
			vc := c
			vc.Row = c.Row + "@" + v
			vc.Args = append(append([]string(nil), c.Args...), "--service-version", v)
			out = append(out, vc)
		}
	}
	return out
}
