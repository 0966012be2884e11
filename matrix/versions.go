package matrix

// ByVersions returns every cell once per lock-server version (check run
// --service-version), in order: the row becomes ROW@VERSION and the flags
// ask for the version. A cell keeps its expectation, so a version that
// behaves otherwise than the catalog says shows as a missed cell of its
// own row. No versions returns the cells as they are.
func ByVersions(cells []Cell, versions []string) []Cell {
	return byAxis(cells, "--service-version", "@", versions)
}

// ByLibraryVersions returns every cell once per version of its design's
// Go client library (check run --library-version), as ByVersions does:
// the row becomes ROW@client-VERSION.
func ByLibraryVersions(cells []Cell, versions []string) []Cell {
	return byAxis(cells, "--library-version", "@client-", versions)
}

// byAxis returns every cell once per value of flag, its row suffixed with
// mark and the value.
func byAxis(cells []Cell, flag, mark string, values []string) []Cell {
	if len(values) == 0 {
		return cells
	}
	out := make([]Cell, 0, len(cells)*len(values))
	for _, c := range cells {
		for _, v := range values {
			vc := c
			vc.Row = c.Row + mark + v
			vc.Args = append(append([]string(nil), c.Args...), flag, v)
			out = append(out, vc)
		}
	}
	return out
}
