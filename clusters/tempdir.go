package clusters

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// TempPrefix starts the name of every temporary directory lockcheck makes.
const TempPrefix = "lockcheck-"

// ownerFile, inside a temporary directory, names the process that owns it.
const ownerFile = ".owner"

// owner identifies a process across pid reuse: its pid, its start time in
// clock ticks since boot (/proc/PID/stat field 22) and the boot it belongs to.
type owner struct {
	pid   int
	start uint64
	boot  string
}

func (o owner) String() string {
	return fmt.Sprintf("pid=%d start=%d boot=%s\n", o.pid, o.start, o.boot)
}

// parseOwner reads what owner.String wrote.
func parseOwner(s string) (owner, error) {
	var o owner
	seen := 0
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch k {
		case "pid":
			o.pid, err = strconv.Atoi(v)
			seen++
		case "start":
			o.start, err = strconv.ParseUint(v, 10, 64)
			seen++
		case "boot":
			o.boot = v
			seen++
		}
		if err != nil {
			return owner{}, fmt.Errorf("owner %q: %w", s, err)
		}
	}
	if seen != 3 || o.pid <= 0 {
		return owner{}, fmt.Errorf("owner %q: want pid=, start= and boot=", s)
	}
	return o, nil
}

// processOwner returns the owner record of process pid.
func processOwner(pid int) (owner, error) {
	o, _, err := processStat(pid)
	return o, err
}

// processStat returns the owner record of process pid and its state
// (/proc/PID/stat field 3: R, S, D, T, Z for a zombie...).
func processStat(pid int) (owner, byte, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return owner{}, 0, err
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return owner{}, 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return owner{}, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	start, err := strconv.ParseUint(f[19], 10, 64) // field 22: starttime
	if err != nil {
		return owner{}, 0, fmt.Errorf("/proc/%d/stat starttime: %w", pid, err)
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return owner{}, 0, fmt.Errorf("boot id: %w", err)
	}
	return owner{pid: pid, start: start, boot: strings.TrimSpace(string(boot))}, f[0][0], nil
}

// alive reports whether the process o recorded still runs: same boot, the
// pid exists (kill(pid, 0)), it started at the recorded time, so a reused
// pid does not count, and it is not a zombie (it has exited; its parent,
// or an init that does not reap orphans, has not waited for it).
func (o owner) alive() bool {
	err := syscall.Kill(o.pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	now, state, perr := processStat(o.pid)
	if perr != nil {
		// Someone else's process we cannot read: keep its directory.
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	return now == o && state != 'Z' && state != 'X'
}

// TempDir makes a fresh temporary directory named TempPrefix+name+random
// and records this process as its owner. First it removes the directories of
// earlier runs whose owner is gone (SweepTempDirs), and their CPU throttle
// cgroups (SweepThrottles), since a run killed with SIGKILL cannot remove
// its own.
func TempDir(name string) (string, error) {
	_, _ = SweepTempDirs(os.TempDir())
	_, _ = SweepThrottles()
	dir, err := os.MkdirTemp("", TempPrefix+name)
	if err != nil {
		return "", fmt.Errorf("create temporary directory: %w", err)
	}
	o, err := processOwner(os.Getpid())
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, ownerFile), []byte(o.String()), 0o644)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("record the owner of %s: %w", dir, err)
	}
	return dir, nil
}

// SweepTempDirs removes the directories TempPrefix* under root whose
// recorded owner process is gone, and returns them. The owner record must
// be a regular file of this user; the directory itself may belong to
// another (a database's data directory given to its system user after
// root recorded itself as the owner). A directory with no owner record
// (being made right now, a template, or made by an older lockcheck), with
// a record that does not parse or that another user wrote, or whose owner
// lives, is left alone. The record is removed last, so a sweep that fails
// half-way (a server still writing) leaves a directory the next sweep
// still recognises.
func SweepTempDirs(root string) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(root, TempPrefix+"*"))
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", root, err)
	}
	var removed []string
	var errs []error
	for _, dir := range dirs {
		if !staleTempDir(dir) {
			continue
		}
		if err := removeStale(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove stale %s: %w", dir, err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// staleTempDir reports whether dir is a plain directory holding an owner
// record of this user that names a process that is gone.
func staleTempDir(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	rec := filepath.Join(dir, ownerFile)
	rst, err := os.Lstat(rec)
	if err != nil || !rst.Mode().IsRegular() {
		return false
	}
	if sys, ok := rst.Sys().(*syscall.Stat_t); !ok || int(sys.Uid) != os.Getuid() {
		return false
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		return false
	}
	o, err := parseOwner(string(b))
	return err == nil && !o.alive()
}

// removeAll is os.RemoveAll; a test makes it fail.
var removeAll = os.RemoveAll

// removeStale removes everything in dir but its owner record, then the
// record and dir.
func removeStale(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Name() != ownerFile {
			errs = append(errs, removeAll(filepath.Join(dir, e.Name())))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return removeAll(dir)
}

// OwnerRecord returns a one-line record of this process (pid, start time
// and boot id) that OwnerGone can later test, so a resource tagged with it
// (a temporary directory, a container label) can be swept once the process
// that made it is gone, even after a SIGKILL.
func OwnerRecord() (string, error) {
	o, err := processOwner(os.Getpid())
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(o.String()), nil
}

// OwnerGone reports whether the process record names is certainly gone:
// another boot, no such pid, or the pid reused by a later process. A record
// that does not parse is not gone: whatever it tags is not ours to remove.
func OwnerGone(record string) bool {
	o, err := parseOwner(record)
	if err != nil {
		return false
	}
	return !o.alive()
}
