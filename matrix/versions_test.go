package matrix

import (
	"reflect"
	"testing"
)

func TestByVersions(t *testing.T) {
	cells := []Cell{
		{Row: "etcd-mutex", Column: "pause", Expect: Unsafe, Args: []string{"--lock", "etcd-mutex", "--nemesis", "pause"}},
		{Row: "etcd-mutex", Column: "kill", Expect: Safe, Args: []string{"--lock", "etcd-mutex", "--nemesis", "kill"}},
	}
	tests := []struct {
		name     string
		versions []string
		want     []Cell
	}{
		{"none", nil, cells},
		{"two", []string{"3.4.23", "3.6.16"}, []Cell{
			{Row: "etcd-mutex@3.4.23", Column: "pause", Expect: Unsafe, Args: []string{"--lock", "etcd-mutex", "--nemesis", "pause", "--service-version", "3.4.23"}},
			{Row: "etcd-mutex@3.6.16", Column: "pause", Expect: Unsafe, Args: []string{"--lock", "etcd-mutex", "--nemesis", "pause", "--service-version", "3.6.16"}},
			{Row: "etcd-mutex@3.4.23", Column: "kill", Expect: Safe, Args: []string{"--lock", "etcd-mutex", "--nemesis", "kill", "--service-version", "3.4.23"}},
			{Row: "etcd-mutex@3.6.16", Column: "kill", Expect: Safe, Args: []string{"--lock", "etcd-mutex", "--nemesis", "kill", "--service-version", "3.6.16"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ByVersions(cells, tt.versions)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ByVersions(%v):\n got %v\nwant %v", tt.versions, got, tt.want)
			}
			for _, c := range got {
				if _, _, err := ParseCell(c.String()); err != nil {
					t.Errorf("cell %q does not read back as a cells-file line: %v", c.Name(), err)
				}
			}
		})
	}
	// The cells given are left as they were.
	if cells[0].Row != "etcd-mutex" || len(cells[0].Args) != 4 {
		t.Fatalf("ByVersions changed its input: %v", cells[0])
	}
}

func TestByLibraryVersions(t *testing.T) {
	cells := []Cell{{Row: "etcd-mutex", Column: "pause", Expect: Unsafe, Args: []string{"--lock", "etcd-mutex", "--nemesis", "pause"}}}
	got := ByLibraryVersions(ByVersions(cells, []string{"3.6.16"}), []string{"3.5.35", "3.6.16"})
	want := []Cell{
		{Row: "etcd-mutex@3.6.16@client-3.5.35", Column: "pause", Expect: Unsafe,
			Args: []string{"--lock", "etcd-mutex", "--nemesis", "pause", "--service-version", "3.6.16", "--library-version", "3.5.35"}},
		{Row: "etcd-mutex@3.6.16@client-3.6.16", Column: "pause", Expect: Unsafe,
			Args: []string{"--lock", "etcd-mutex", "--nemesis", "pause", "--service-version", "3.6.16", "--library-version", "3.6.16"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ByLibraryVersions:\n got %v\nwant %v", got, want)
	}
	for _, c := range got {
		if _, _, err := ParseCell(c.String()); err != nil {
			t.Errorf("cell %q does not read back as a cells-file line: %v", c.Name(), err)
		}
	}
	if got := ByLibraryVersions(cells, nil); !reflect.DeepEqual(got, cells) {
		t.Fatalf("no versions: got %v", got)
	}
}
