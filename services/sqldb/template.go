package sqldb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// templateMarker is written last into a complete template.
const templateMarker = ".lockcheck-template-complete"

// initFromTemplate fills the empty data directory data with a fresh
// database. The first run initialises one with init (initdb,
// mariadb-install-db: seconds of work) and keeps a copy as a template in
// the system's temporary directory, keyed by the server binary and the
// user; later runs copy the template, which takes a fraction of that. The
// template holds no run's data: it is the state right after init. data's
// parent must be inside the run's temporary directory (see TempDir): the
// template is staged there.
func initFromTemplate(ctx context.Context, kind, binary, data string, cred *syscall.Credential, init func(ctx context.Context) error) error {
	tmpl, err := templateDir(kind, binary, cred)
	if err != nil {
		return init(ctx)
	}
	if _, err := os.Stat(filepath.Join(tmpl, templateMarker)); err == nil {
		if err := copyTree(tmpl, data, cred); err == nil {
			_ = os.Remove(filepath.Join(data, templateMarker))
			return nil
		}
		// A broken template: start over from init.
		_ = os.RemoveAll(data)
		_ = os.RemoveAll(tmpl)
	}
	if err := init(ctx); err != nil {
		return err
	}
	// The copy is staged next to data, inside the run's own directory, so
	// that a run killed half-way leaves no partial template behind: the
	// sweep removes it with the run's directory. The rename then moves it
	// into place (both are under the temporary directory).
	staging, err := os.MkdirTemp(filepath.Dir(data), "template-")
	if err != nil {
		return nil // no template this time; the run goes on
	}
	if err := copyTree(data, staging, cred); err != nil ||
		os.WriteFile(filepath.Join(staging, templateMarker), nil, 0o644) != nil ||
		os.Rename(staging, tmpl) != nil {
		_ = os.RemoveAll(staging) // another run made it first, or the copy failed
	}
	return nil
}

// templateDir names the template of kind for this binary (path, size and
// modification time) and user.
func templateDir(kind, binary string, cred *syscall.Credential) (string, error) {
	st, err := os.Stat(binary)
	if err != nil {
		return "", err
	}
	uid := os.Geteuid()
	if cred != nil {
		uid = int(cred.Uid)
	}
	h := sha256.Sum256([]byte(fmt.Sprintf("%s %d %d %d", binary, st.Size(), st.ModTime().UnixNano(), uid)))
	return filepath.Join(os.TempDir(), "lockcheck-"+kind+"-template-"+hex.EncodeToString(h[:6])), nil
}

// copyTree copies the directory src to dst (created), keeping file modes,
// and gives everything to cred's user (nil: leaves the owner alone).
func copyTree(src, dst string, cred *syscall.Credential) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(to, info.Mode().Perm()); err != nil {
				return err
			}
			if err := os.Chmod(to, info.Mode().Perm()); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := copyFile(path, to, info.Mode().Perm()); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		default:
			return nil // sockets, pipes: not part of a data dir at rest
		}
		if cred != nil {
			return os.Lchown(to, int(cred.Uid), int(cred.Gid))
		}
		return nil
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
