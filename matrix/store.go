package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// StoreDir is the directory of the store that holds matrices:
// store/matrix/<yyyymmddThhmmss>/matrix.json.
const StoreDir = "matrix"

// NewDir creates store/<kind>/<yyyymmddThhmmss>/ (kind StoreDir for a
// matrix, "repro" for `check repro`) for a matrix started at now, adding a
// suffix when another started in the same second.
func NewDir(store, kind string, now time.Time) (string, error) {
	base := filepath.Join(store, kind, now.Format("20060102T150405"))
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", fmt.Errorf("create matrix directory: %w", err)
	}
	dir := base
	for i := 2; i <= 100; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create matrix directory: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
	return "", fmt.Errorf("create matrix directory: %s and 99 more exist", base)
}

// WriteJSON writes m as indented JSON.
func WriteJSON(w io.Writer, m *Matrix) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode matrix: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write matrix: %w", err)
	}
	return nil
}

// Save writes m to dir/matrix.json (through a temporary file, so a reader
// never sees half of it).
func Save(dir string, m *Matrix) error {
	path := filepath.Join(dir, "matrix.json")
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return fmt.Errorf("save matrix: %w", err)
	}
	if err := WriteJSON(f, m); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save matrix: %w", err)
	}
	return os.Rename(path+".tmp", path)
}

// Load reads a matrix.json.
func Load(path string) (*Matrix, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Matrix
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// List reads every stored matrix of the store, newest first. A matrix
// that cannot be read is left out; its error is returned with the rest.
func List(store string) ([]*Matrix, error) {
	des, err := os.ReadDir(filepath.Join(store, StoreDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ms []*Matrix
	var errs []error
	for _, de := range des {
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		path := filepath.Join(store, StoreDir, de.Name(), "matrix.json")
		if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
			continue // running, or not a matrix
		}
		m, err := Load(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.Dir = StoreDir + "/" + de.Name()
		ms = append(ms, m)
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if !ms[i].Started.Equal(ms[j].Started) {
			return ms[i].Started.After(ms[j].Started)
		}
		return ms[i].Dir > ms[j].Dir
	})
	return ms, errors.Join(errs...)
}

// Previous returns the newest matrix of all (newest first, as List
// returns them) that started before m and ran the same cells, or nil.
func Previous(all []*Matrix, m *Matrix) *Matrix {
	key := m.CellsKey()
	for _, p := range all {
		if p.Started.Before(m.Started) && p.CellsKey() == key {
			return p
		}
	}
	return nil
}

// Changes returns, for every cell of cur whose outcome (status and verdict
// counts) differs from the same cell of prev, the previous cell's Summary,
// by cell key.
func Changes(prev, cur *Matrix) map[string]string {
	out := make(map[string]string)
	if prev == nil {
		return out
	}
	before := make(map[string]CellResult, len(prev.Cells))
	for _, c := range prev.Cells {
		before[c.Key()] = c
	}
	for _, c := range cur.Cells {
		if p, ok := before[c.Key()]; ok && p.Outcome() != c.Outcome() {
			out[c.Key()] = p.Summary()
		}
	}
	return out
}
