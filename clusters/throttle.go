package clusters

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The CPU throttle: holding processes to a small share of one CPU for a
// while (the starve nemesis), by the first mechanism this machine allows.

// Throttle mechanisms, in order of preference.
const (
	// ThrottleCgroup2 is a child cgroup with cpu.max (cgroup v2).
	ThrottleCgroup2 = "cgroup2"
	// ThrottleCgroup1 is a child cgroup of the v1 cpu controller with
	// cpu.cfs_quota_us and cpu.cfs_period_us.
	ThrottleCgroup1 = "cgroup1"
	// ThrottleDutyCycle stops and continues the processes in turn
	// (SIGSTOP, SIGCONT), where no cgroup is writable.
	ThrottleDutyCycle = "duty-cycle"
)

// ThrottlePrefix starts the name of every cgroup a Throttle makes. The rest
// of the name is its owner's pid and start time and a sequence number
// ("lockcheck-starve-812-40233-3"), so SweepThrottles can tell whose it is
// with no file inside it (a cgroup directory holds only the kernel's files).
const ThrottlePrefix = "lockcheck-starve-"

// minQuota is the smallest CPU quota a cgroup accepts per period (1 ms).
const minQuota = time.Millisecond

// maxDutyCycles bounds the cycles of one duty-cycle throttle (a day of
// 100 ms periods).
const maxDutyCycles = 864000

// Throttle holds a set of processes to Quota of one CPU until Release.
type Throttle struct {
	// Mechanism is how: ThrottleCgroup2, ThrottleCgroup1 or
	// ThrottleDutyCycle.
	Mechanism string
	// Quota is the share of one CPU the processes get together (0.05: 5 ms
	// in every 100 ms); Period the time over which it is measured.
	Quota  float64
	Period time.Duration
	// Dir is the cgroup made for the processes, "" for a duty cycle.
	Dir string

	mu       sync.Mutex
	h        hierarchy      // the cgroup's hierarchy; h.self is Dir's parent
	home     map[int]string // pid -> the cgroup directory it came from
	pids     []int          // the duty cycle's processes
	stop     chan struct{}
	stopped  chan struct{}
	load     []*exec.Cmd // the busy loops addLoad started
	released bool
}

// throttleSeq numbers the cgroups of this process.
var throttleSeq struct {
	sync.Mutex
	n int
}

// hierarchy is a cgroup hierarchy that can hold a throttle: its mechanism
// and the directory of this process's own cgroup in it, under which a
// throttle's cgroup goes.
type hierarchy struct {
	mechanism string
	mount     string // the hierarchy's mount point
	self      string // this process's cgroup directory
}

// cgroupHierarchies returns the hierarchies that have a CPU controller, v2
// first, as /proc/self/mountinfo and /proc/self/cgroup name them.
func cgroupHierarchies() []hierarchy {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	var v1path, v2path string
	for _, line := range strings.Split(string(own), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2path = f[2]
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "cpu" {
				v1path = f[2]
			}
		}
	}
	var v1, v2 []hierarchy
	for _, line := range strings.Split(string(mounts), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		root, mount := pf[3], pf[4]
		rel := func(p string) string {
			if root != "/" {
				p = strings.TrimPrefix(p, root)
			}
			return filepath.Join(mount, p)
		}
		switch qf[0] {
		case "cgroup2":
			if v2path != "" {
				v2 = append(v2, hierarchy{ThrottleCgroup2, mount, rel(v2path)})
			}
		case "cgroup":
			for _, o := range strings.Split(qf[2], ",") {
				if o == "cpu" && v1path != "" {
					v1 = append(v1, hierarchy{ThrottleCgroup1, mount, rel(v1path)})
				}
			}
		}
	}
	return append(v2, v1...)
}

// ThrottleProcs holds the processes pids to quota of one CPU per period:
// NewThrottle, then Add.
func ThrottleProcs(pids []int, quota float64, period time.Duration, mechanism string, load int) (*Throttle, error) {
	if len(pids) == 0 {
		return nil, errors.New("throttle: no process to throttle")
	}
	t, err := NewThrottle(quota, period, mechanism, load)
	if err != nil {
		return nil, err
	}
	if err := t.Add(pids); err != nil {
		return nil, errors.Join(err, t.Release())
	}
	return t, nil
}

// NewThrottle makes a throttle that will hold the processes Add gives it to
// quota of one CPU per period, by the first mechanism that works here:
// cgroup v2, then the v1 cpu controller, else a duty cycle of SIGSTOP and
// SIGCONT (only mechanism, when not "", is tried). A cgroup gets load busy
// loops at once (see addLoad), so that it is already starved when the
// processes come; a duty cycle needs none. First it removes the cgroups of
// earlier runs whose owner is gone (SweepThrottles). Release gives the
// processes their CPU back and removes the cgroup.
func NewThrottle(quota float64, period time.Duration, mechanism string, load int) (*Throttle, error) {
	if quota <= 0 || quota >= 1 {
		return nil, fmt.Errorf("throttle: quota %g of a CPU: want more than 0 and less than 1", quota)
	}
	if period < 10*time.Millisecond || period > time.Second {
		return nil, fmt.Errorf("throttle: period %s: want 10 ms to 1 s", period)
	}
	_, _ = SweepThrottles()
	var errs []error
	if mechanism != ThrottleDutyCycle {
		for _, h := range cgroupHierarchies() {
			if mechanism != "" && h.mechanism != mechanism {
				continue
			}
			t, err := cgroupThrottle(h, quota, period, load)
			if err == nil {
				return t, nil
			}
			errs = append(errs, err)
		}
	}
	if mechanism != "" && mechanism != ThrottleDutyCycle {
		return nil, fmt.Errorf("throttle: no writable %s hierarchy with a cpu controller here (%w): %w", mechanism, ErrUnsupported, errors.Join(errs...))
	}
	return &Throttle{Mechanism: ThrottleDutyCycle, Quota: quota, Period: period,
		stop: make(chan struct{}), stopped: make(chan struct{})}, nil
}

// Add moves the processes pids into the throttle's cgroup, or starts the
// duty cycle on them; a duty cycle takes one Add only. A process that has
// exited meanwhile is skipped; when all have, it is an error.
func (t *Throttle) Add(pids []int) error {
	if t.Mechanism == ThrottleDutyCycle {
		return t.startDuty(pids)
	}
	return t.move(pids)
}

// cgroupThrottle makes the throttle's cgroup in h and starts load busy
// loops in it.
func cgroupThrottle(h hierarchy, quota float64, period time.Duration, load int) (*Throttle, error) {
	o, err := processOwner(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("throttle: %w", err)
	}
	q := max(time.Duration(float64(period)*quota), minQuota)
	if h.mechanism == ThrottleCgroup2 {
		if err := enableCPU(h.self); err != nil {
			return nil, err
		}
	}
	throttleSeq.Lock()
	throttleSeq.n++
	seq := throttleSeq.n
	throttleSeq.Unlock()
	dir := filepath.Join(h.self, fmt.Sprintf("%s%d-%d-%d", ThrottlePrefix, o.pid, o.start, seq))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("throttle: make cgroup: %w", err)
	}
	t := &Throttle{Mechanism: h.mechanism, Quota: float64(q) / float64(period), Period: period, Dir: dir,
		h: h, home: make(map[int]string)}
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	if h.mechanism == ThrottleCgroup2 {
		err = writeCgroup(dir, "cpu.max", us(q)+" "+us(period))
	} else {
		err = errors.Join(writeCgroup(dir, "cpu.cfs_period_us", us(period)), writeCgroup(dir, "cpu.cfs_quota_us", us(q)))
	}
	if err == nil && load > 0 {
		err = t.addLoad(load)
	}
	if err != nil {
		return nil, errors.Join(err, t.Release())
	}
	return t, nil
}

// enableCPU makes sure the cpu controller is on for dir's children (cgroup
// v2's cgroup.subtree_control).
func enableCPU(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("throttle: %w", err)
	}
	for _, c := range strings.Fields(string(b)) {
		if c == "cpu" {
			return nil
		}
	}
	return writeCgroup(dir, "cgroup.subtree_control", "+cpu")
}

// move moves pids into the throttle's cgroup, remembering where each came
// from; a process that has exited meanwhile is skipped.
func (t *Throttle) move(pids []int) error {
	moved := 0
	for _, pid := range pids {
		home := procCgroup(t.h, pid)
		if err := writeCgroup(t.Dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				continue
			}
			return err
		}
		t.mu.Lock()
		t.home[pid] = home
		t.mu.Unlock()
		moved++
	}
	if moved == 0 {
		return errors.New("throttle: every process to throttle has exited")
	}
	return nil
}

// procCgroup returns the directory of pid's cgroup in h, "" when unknown.
func procCgroup(h hierarchy, pid int) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.SplitN(sc.Text(), ":", 3)
		if len(p) != 3 {
			continue
		}
		v2 := p[0] == "0" && p[1] == ""
		cpu := false
		for _, c := range strings.Split(p[1], ",") {
			cpu = cpu || c == "cpu"
		}
		if (h.mechanism == ThrottleCgroup2 && v2) || (h.mechanism == ThrottleCgroup1 && cpu) {
			return filepath.Join(h.mount, p[2])
		}
	}
	return ""
}

// writeCgroup writes value to a cgroup's control file.
func writeCgroup(dir, file, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("throttle: %w", err)
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("throttle: write %q to %s: %w", value, filepath.Join(dir, file), err)
	}
	return nil
}

// startDuty lets pids run for quota of every period and stops them for
// the rest, until Release.
func (t *Throttle) startDuty(pids []int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pids != nil || t.released {
		return errors.New("throttle: a duty cycle takes one set of processes")
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.pids = append(t.pids, pid)
		}
	}
	if len(t.pids) == 0 {
		return errors.New("throttle: every process to throttle has exited")
	}
	run := time.Duration(float64(t.Period) * t.Quota)
	go func() {
		defer close(t.stopped)
		defer t.signal(syscall.SIGCONT)
		for i := 0; i < maxDutyCycles; i++ {
			t.signal(syscall.SIGSTOP)
			select {
			case <-t.stop:
				return
			case <-time.After(t.Period - run):
			}
			t.signal(syscall.SIGCONT)
			select {
			case <-t.stop:
				return
			case <-time.After(run):
			}
		}
	}()
	return nil
}

// signal sends sig to every process of a duty cycle.
func (t *Throttle) signal(sig syscall.Signal) {
	for _, pid := range t.pids {
		_ = syscall.Kill(pid, sig)
	}
}

// Release gives the processes their full CPU back: it moves every process
// in the throttle's cgroup (children forked meanwhile too) back to the
// cgroup it came from and removes the cgroup, or ends the duty cycle with
// a SIGCONT. It is idempotent.
func (t *Throttle) Release() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return nil
	}
	if t.Mechanism == ThrottleDutyCycle {
		close(t.stop)
		if t.pids != nil {
			<-t.stopped
		}
		t.released = true
		return nil
	}
	// A throttled process cannot even exit until its next turn: lift the
	// quota first, so that the busy loops die and the moves land at once.
	t.unlimit()
	t.stopLoad()
	if err := emptyCgroup(t.Dir, t.h.self, t.home); err != nil {
		return err
	}
	t.released = true
	return nil
}

// unlimit lifts the cgroup's quota (a cgroup removed meanwhile needs
// none).
func (t *Throttle) unlimit() {
	if t.Mechanism == ThrottleCgroup2 {
		_ = writeCgroup(t.Dir, "cpu.max", "max")
		return
	}
	_ = writeCgroup(t.Dir, "cpu.cfs_quota_us", "-1")
}

// loadIterations bounds a busy loop of addLoad: minutes at full speed, far
// longer on a small quota; Release kills it sooner, and so does the end of
// the process that started it (Pdeathsig).
const loadIterations = 1_000_000_000

// addLoad starts n busy loops (sh) inside the throttle's cgroup, standing
// for a starved process's own busy threads: a process that sleeps most of
// the time spends less CPU than a small quota and would never be held
// back; with busy neighbours in the cgroup the quota runs out early in
// every period, and each wake-up of the process waits for the next one.
// It returns once the loops have spent the first period's quota (or, on a
// machine too busy to let them, after two periods), so that the processes
// moved in next wait at once for the next period rather than run on the
// fresh quota. Release kills them.
func (t *Throttle) addLoad(n int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := 0; i < n; i++ {
		cmd := exec.Command("sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do i=$((i+1)); done", loadIterations))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("throttle: start load: %w", err)
		}
		t.load = append(t.load, cmd)
		if err := writeCgroup(t.Dir, "cgroup.procs", strconv.Itoa(cmd.Process.Pid)); err != nil {
			return err
		}
	}
	// The quota is spent once the loops have run for it since they moved
	// in (cpu.stat's nr_throttled counts only when the period ends).
	var pids []int
	for _, c := range t.load {
		pids = append(pids, c.Process.Pid)
	}
	spent, base := time.Duration(float64(t.Period)*t.Quota), onCPU(pids)
	deadline := time.Now().Add(2 * t.Period)
	for onCPU(pids)-base < spent && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return nil
}

// onCPU returns how long the processes pids have run on a CPU in all
// (/proc/PID/schedstat's first field, in nanoseconds).
func onCPU(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// Procs returns how many processes the throttle holds (its busy loops
// apart).
func (t *Throttle) Procs() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Mechanism == ThrottleDutyCycle {
		return len(t.pids)
	}
	return len(t.home)
}

// LoadPids returns the pids of the busy loops the throttle started.
func (t *Throttle) LoadPids() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []int
	for _, c := range t.load {
		out = append(out, c.Process.Pid)
	}
	return out
}

// stopLoad kills the busy loops (by their process group) and waits for
// them.
func (t *Throttle) stopLoad() {
	for _, c := range t.load {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
	}
	t.load = nil
}

// rmdirTries bounds the attempts to empty and remove a cgroup: a process
// forked while the others are moved out keeps it busy for a moment.
const rmdirTries = 50

// emptyCgroup moves every process in the cgroup dir to its home (or to
// parent) and removes dir; a dir that is gone already is fine.
func emptyCgroup(dir, parent string, home map[int]string) error {
	var err error
	for try := 0; try < rmdirTries; try++ {
		b, rerr := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if errors.Is(rerr, fs.ErrNotExist) {
			return nil
		}
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			to := home[pid]
			if to == "" {
				to = parent
			}
			if werr := writeCgroup(to, "cgroup.procs", f); werr != nil && to != parent {
				_ = writeCgroup(parent, "cgroup.procs", f)
			}
		}
		err = syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("throttle: remove cgroup %s: %w", dir, err)
}

// throttleDepth bounds how deep SweepThrottles looks into a hierarchy.
const throttleDepth = 8

// SweepThrottles removes the throttle cgroups whose owner process is gone
// (a controller killed with SIGKILL cannot release its own), in every
// hierarchy with a CPU controller, and returns them. Each is found by its
// name (ThrottlePrefix, the owner's pid and start time), emptied into its
// parent cgroup and removed. A cgroup whose owner lives, or whose name
// does not parse, is left alone.
func SweepThrottles() ([]string, error) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return nil, fmt.Errorf("sweep throttles: %w", err)
	}
	var removed []string
	var errs []error
	for _, h := range cgroupHierarchies() {
		base := strings.Count(h.mount, string(filepath.Separator))
		_ = filepath.WalkDir(h.mount, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if strings.Count(path, string(filepath.Separator))-base > throttleDepth {
				return fs.SkipDir
			}
			if !strings.HasPrefix(d.Name(), ThrottlePrefix) {
				return nil
			}
			o, ok := throttleOwner(d.Name(), strings.TrimSpace(string(boot)))
			if !ok || o.alive() {
				return fs.SkipDir
			}
			// Lifting the quota lets what is left run (and exit) at once.
			_ = writeCgroup(path, "cpu.max", "max")
			_ = writeCgroup(path, "cpu.cfs_quota_us", "-1")
			if err := emptyCgroup(path, filepath.Dir(path), nil); err != nil {
				errs = append(errs, err)
			} else {
				removed = append(removed, path)
			}
			return fs.SkipDir
		})
	}
	return removed, errors.Join(errs...)
}

// throttleOwner parses the owner out of a throttle cgroup's name; a cgroup
// does not outlive its boot, so the boot is this one.
func throttleOwner(name, boot string) (owner, bool) {
	f := strings.Split(strings.TrimPrefix(name, ThrottlePrefix), "-")
	if len(f) != 3 {
		return owner{}, false
	}
	pid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return owner{}, false
	}
	return owner{pid: pid, start: start, boot: boot}, true
}

// GroupPids returns the processes of process group pgid, found in /proc
// (a worker's process group is its pid: its children are in it).
func GroupPids(pgid int) []int {
	return scanProcs(func(pid, pgrp, _ int) bool { return pgrp == pgid })
}

// TreePids returns pid and every process descended from it (a server's
// children: PostgreSQL's backends lead sessions of their own).
func TreePids(pid int) []int {
	parent := make(map[int]int)
	scanProcs(func(p, _, ppid int) bool { parent[p] = ppid; return false })
	var out []int
	for p := range parent {
		for q, n := p, 0; q > 0 && n < 64; q, n = parent[q], n+1 {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// scanProcs returns the pids of /proc whose pid, process group and parent
// keep says to keep.
func scanProcs(keep func(pid, pgrp, ppid int) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) < 3 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		if keep(pid, pgrp, ppid) {
			out = append(out, pid)
		}
	}
	return out
}

// PidLister is a cluster whose servers are local processes: the starve
// nemesis throttles one by its pid.
type PidLister interface {
	// Pids returns the pids of the running server processes, by node
	// name.
	Pids() map[string]int
}
