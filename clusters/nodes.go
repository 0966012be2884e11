package clusters

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
)

// The node toolkit: what every topology does to one node by name (Kill,
// Restart, PauseNode, ResumeNode) and to one worker slot's links
// (Partition, Heal, PartitionNodes), and the worker slots' proxies its
// Setup makes, written once. A topology links its lock nodes into a
// NodeSet at the end of Setup and sends its faults there.

// NodeServer is one node's server as a NodeSet faults it: a local server
// process (localServer) or a container.
type NodeServer interface {
	// Kill crashes the server. The harness asked for its exit, so it is no
	// server death.
	Kill(ctx context.Context) error
	// Restart starts a killed server again and returns once it serves; a
	// running server is left as it is.
	Restart(ctx context.Context) error
	// Signal pauses (SIGSTOP) or resumes (SIGCONT) the server.
	Signal(ctx context.Context, sig syscall.Signal) error
}

// SetNode is one lock node of a NodeSet.
type SetNode struct {
	// Name is the node's name ("lock0", "zk1").
	Name string
	// Addr is where the worker slots' proxies to it forward.
	Addr string
	// Server is its server (nil for a node that is never faulted by name).
	Server NodeServer
	// Peers names its other proxies (a peer proxy that its replicas and
	// failover managers reach it through), which a kill stops too.
	Peers []string
}

// NodeSet is a topology's lock nodes by name, in order, each with its
// server and the proxies that reach it: one from every worker slot
// ("w<slot>-<node>"), and its peer proxies.
type NodeSet struct {
	// Kind names a node in the error for a name the set lacks: Kind "lock
	// node" gives `no lock node named "x"`.
	Kind     string
	proxies  *Proxies
	workers  int
	nodes    []SetNode
	slotAddr [][]string
}

// Faults gives a topology that embeds it the faults of its NodeSet on one
// node by name and on one worker slot's links: Kill and Restart (Killer),
// PauseNode and ResumeNode (Pauser), Partition and Heal (Partitioner).
type Faults struct{ of *NodeSet }

// FaultsOf returns the faults of set.
func FaultsOf(set *NodeSet) Faults { return Faults{of: set} }

// Kill stops every proxy to the named node and kills its server (see
// NodeSet.Kill).
func (f Faults) Kill(ctx context.Context, name string) error { return f.of.Kill(ctx, name) }

// Restart starts the named node's server again, then its proxies (see
// NodeSet.Restart).
func (f Faults) Restart(ctx context.Context, name string) error { return f.of.Restart(ctx, name) }

// PauseNode pauses the named node's server (SIGSTOP, docker pause).
func (f Faults) PauseNode(ctx context.Context, name string) error { return f.of.PauseNode(ctx, name) }

// ResumeNode resumes it (SIGCONT, docker unpause).
func (f Faults) ResumeNode(ctx context.Context, name string) error { return f.of.ResumeNode(ctx, name) }

// Partition cuts every link of a worker slot to the nodes.
func (f Faults) Partition(ctx context.Context, slot int) error { return f.of.Partition(ctx, slot) }

// Heal restores every link of a worker slot.
func (f Faults) Heal(ctx context.Context, slot int) error { return f.of.Heal(ctx, slot) }

// slotProxy names worker slot's proxy to the node named node.
func slotProxy(slot int, node string) string { return fmt.Sprintf("w%d-%s", slot, node) }

// Link makes the set hold nodes, in order, and starts in proxies a proxy
// from every worker slot to each node (a slot at a time); LockAddrs
// returns their addresses.
func (s *NodeSet) Link(proxies *Proxies, workers int, nodes []SetNode) error {
	s.proxies, s.workers, s.nodes = proxies, workers, nodes
	s.slotAddr = make([][]string, workers)
	for slot := range s.slotAddr {
		for _, n := range nodes {
			addr, err := proxies.Add(slotProxy(slot, n.Name), n.Addr)
			if err != nil {
				return err
			}
			s.slotAddr[slot] = append(s.slotAddr[slot], addr)
		}
	}
	return nil
}

// LockAddrs returns worker slot's proxy addresses, one per node.
func (s *NodeSet) LockAddrs(slot int) []string { return append([]string(nil), s.slotAddr[slot]...) }

// Index returns the position of the node named name.
func (s *NodeSet) Index(name string) (int, error) {
	for i, n := range s.nodes {
		if n.Name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no %s named %q", s.Kind, name)
}

// SlotLinks names worker slot's proxies, one per node.
func (s *NodeSet) SlotLinks(slot int) []string {
	return LinkNames(len(s.nodes), func(i int) string { return slotProxy(slot, s.nodes[i].Name) })
}

// nodeLinks names every proxy to node i: its peer proxies, then every
// worker slot's.
func (s *NodeSet) nodeLinks(i int) []string {
	n := s.nodes[i]
	return append(append([]string(nil), n.Peers...), LinkNames(s.workers, func(slot int) string { return slotProxy(slot, n.Name) })...)
}

// Kill stops every proxy to the named node, so its connections close and
// new ones are refused, then kills its server.
func (s *NodeSet) Kill(ctx context.Context, name string) error {
	i, err := s.Index(name)
	if err != nil {
		return err
	}
	if err := s.proxies.DisableAll(s.nodeLinks(i)); err != nil {
		return err
	}
	return s.nodes[i].Server.Kill(ctx)
}

// Restart starts the named node's server again, with its old data, and
// once it serves starts its proxies again.
func (s *NodeSet) Restart(ctx context.Context, name string) error {
	i, err := s.Index(name)
	if err != nil {
		return err
	}
	if err := s.nodes[i].Server.Restart(ctx); err != nil {
		return err
	}
	return s.proxies.EnableAll(s.nodeLinks(i))
}

// PauseNode stops the named node's server (SIGSTOP).
func (s *NodeSet) PauseNode(ctx context.Context, name string) error {
	return s.signal(ctx, name, syscall.SIGSTOP)
}

// ResumeNode continues it (SIGCONT).
func (s *NodeSet) ResumeNode(ctx context.Context, name string) error {
	return s.signal(ctx, name, syscall.SIGCONT)
}

func (s *NodeSet) signal(ctx context.Context, name string, sig syscall.Signal) error {
	i, err := s.Index(name)
	if err != nil {
		return err
	}
	return s.nodes[i].Server.Signal(ctx, sig)
}

// Partition cuts every link of a worker slot to the nodes.
func (s *NodeSet) Partition(ctx context.Context, slot int) error {
	return s.proxies.CutAll(s.SlotLinks(slot))
}

// Heal restores every link of a worker slot.
func (s *NodeSet) Heal(ctx context.Context, slot int) error {
	return s.proxies.RestoreAll(ctx, s.SlotLinks(slot))
}

// PartitionNodes cuts worker slot's links to the named nodes only.
func (s *NodeSet) PartitionNodes(ctx context.Context, slot int, nodes []string) error {
	if slot < 0 || slot >= len(s.slotAddr) {
		return fmt.Errorf("partition slot %d: no such worker slot", slot)
	}
	var names []string
	for _, n := range nodes {
		if _, err := s.Index(n); err != nil {
			return err
		}
		names = append(names, slotProxy(slot, n))
	}
	return s.proxies.CutAll(names)
}

// SetClock moves the wall clock of the node named node to real time +
// offset by writing its clock shim's offset file, file(its index); shim
// says whether the nodes run under the shim, and what names them in the
// error when they do not.
func (s *NodeSet) SetClock(shim bool, what, node string, offset time.Duration, file func(i int) string) error {
	if !shim {
		return fmt.Errorf("set clock of %s: %s run without the clock shim: %w", node, what, ErrUnsupported)
	}
	i, err := s.Index(node)
	if err != nil {
		return err
	}
	return WriteClockOffset(file(i), offset)
}

// SplitLinks names the worker slots' proxies that split them around node
// j: a slot in stay loses its links to every other node (and extra(slot),
// when extra is not nil), every other slot its link to node j.
func (s *NodeSet) SplitLinks(j int, stay []int, extra func(slot int) []string) []string {
	in := make(map[int]bool)
	for _, slot := range stay {
		in[slot] = true
	}
	var names []string
	for slot := 0; slot < s.workers; slot++ {
		if !in[slot] {
			names = append(names, slotProxy(slot, s.nodes[j].Name))
			continue
		}
		for i, n := range s.nodes {
			if i != j {
				names = append(names, slotProxy(slot, n.Name))
			}
		}
		if extra != nil {
			names = append(names, extra(slot)...)
		}
	}
	return names
}

// HeldCuts cuts proxies on behalf of faults: several faults may hold one
// proxy cut, and it is restored when the last lets go. It maps a proxy to
// the faults that cut it; its topology's lock guards it.
type HeldCuts map[string]map[string]bool

// Cut cuts the named proxies on behalf of fault.
func (h HeldCuts) Cut(ps *Proxies, fault string, names []string) error {
	return ps.CutAll(h.Hold(fault, names))
}

// Release lets go of every proxy fault cut, and restores those no other
// fault holds.
func (h HeldCuts) Release(ctx context.Context, ps *Proxies, fault string) error {
	return ps.RestoreAll(ctx, h.Drop(fault, nil))
}

// Hold records that fault holds the named proxies cut and returns those no
// fault held before: the ones to cut now.
func (h HeldCuts) Hold(fault string, names []string) []string {
	var fresh []string
	for _, n := range names {
		if len(h[n]) == 0 {
			fresh = append(fresh, n)
		}
		if h[n] == nil {
			h[n] = make(map[string]bool)
		}
		h[n][fault] = true
	}
	return fresh
}

// Drop lets go of fault's hold on the named proxies (on every proxy it
// holds when names is nil) and returns, sorted, those no fault holds any
// longer: the ones to restore now.
func (h HeldCuts) Drop(fault string, names []string) []string {
	if names == nil {
		for n, rs := range h {
			if rs[fault] {
				names = append(names, n)
			}
		}
	}
	var free []string
	for _, n := range names {
		if !h[n][fault] {
			continue
		}
		delete(h[n], fault)
		if len(h[n]) == 0 {
			delete(h, n)
			free = append(free, n)
		}
	}
	sort.Strings(free)
	return free
}

// ServerProc is a local server's process, which a restart replaces, and
// the log it writes.
type ServerProc struct {
	mu   sync.Mutex
	proc *Proc
	log  *os.File
}

// Started records a newly Started process and its log.
func (s *ServerProc) Started(p *Proc, log *os.File) {
	s.mu.Lock()
	s.proc, s.log = p, log
	s.mu.Unlock()
}

// Current returns the last started process (running or not), nil before
// the first start.
func (s *ServerProc) Current() *Proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// LogFile returns the log.
func (s *ServerProc) LogFile() *os.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// RunningProc returns the process while it runs, else nil.
func (s *ServerProc) RunningProc() *Proc {
	if p := s.Current(); p != nil && !p.Exited() {
		return p
	}
	return nil
}

// Pid returns the running process's Pid, 0 when none runs.
func (s *ServerProc) Pid() int {
	if p := s.RunningProc(); p != nil {
		return p.Pid()
	}
	return 0
}

// KillProc SIGKILLs the process (with its children when tree: see killTree)
// and waits for it; nothing before the first start.
func (s *ServerProc) KillProc(tree bool) error {
	p := s.Current()
	if p == nil {
		return nil
	}
	if tree {
		return KillTree(p)
	}
	return p.Kill()
}

// CloseLog closes the log (a start opens it again).
func (s *ServerProc) CloseLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		s.log.Close()
	}
}

// StopProc asks the process to exit (Proc.Stop, killed after grace) and
// closes its log; nothing before the first start.
func (s *ServerProc) StopProc(ctx context.Context, grace time.Duration) error {
	s.mu.Lock()
	p, log := s.proc, s.log
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	err := p.Stop(ctx, grace)
	if log != nil {
		log.Close()
	}
	return err
}

// StartLogged starts argv as the process of the server called name, its
// output appended to the log at logPath, and records both in s.
func (s *ServerProc) StartLogged(ctx context.Context, name, logPath string, argv, env []string, dir string) (*Proc, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	proc, err := StartProcEnv(ctx, name, argv, env, dir, log)
	if err != nil {
		log.Close()
		return nil, err
	}
	s.Started(proc, log)
	return proc, nil
}

// LocalServer is a local server process as a NodeSet kills, restarts and
// signals it.
type LocalServer struct {
	Name string
	Proc *ServerProc
	// Start starts the server again and waits until it serves.
	Start func(ctx context.Context) error
	// Tree signals and kills the process's children too (PostgreSQL's
	// backends lead sessions of their own: see children.go).
	Tree bool
	// CloseLogAfterKill closes the log after a kill; a restart opens it again.
	CloseLogAfterKill bool
	// RunningOnly makes Signal take a process that has exited for one
	// that is not running, as it does one never started (etcd's members).
	RunningOnly bool
}

// Kill SIGKILLs the server and waits for it to exit.
func (l LocalServer) Kill(ctx context.Context) error {
	if err := l.Proc.KillProc(l.Tree); err != nil {
		return fmt.Errorf("kill %s: %w", l.Name, err)
	}
	if l.CloseLogAfterKill {
		l.Proc.CloseLog()
	}
	return nil
}

// Restart starts the server when it is not running.
func (l LocalServer) Restart(ctx context.Context) error {
	if l.Proc.RunningProc() != nil {
		return nil
	}
	if err := l.Start(ctx); err != nil {
		return fmt.Errorf("restart %s: %w", l.Name, err)
	}
	return nil
}

// Signal sends sig to the server's process group (and its children when
// tree).
func (l LocalServer) Signal(ctx context.Context, sig syscall.Signal) error {
	p := l.Proc.Current()
	if l.RunningOnly {
		p = l.Proc.RunningProc()
	}
	if p == nil {
		return fmt.Errorf("%s is not running", l.Name)
	}
	if l.Tree {
		return SignalTree(p, sig)
	}
	return p.Signal(sig)
}

// LinkToxicker is a cluster whose worker slots' links to the lock nodes can
// carry Toxiproxy toxics (a slow, lossy, one-way or refusing link) on
// behalf of a fault, which sets and clears only its own: several faults
// may poison one slot at once, and a partition (Partitioner) composes with
// them.
type LinkToxicker interface {
	// SetLinkToxics puts ts on every link of worker slot to the lock
	// nodes on behalf of fault; with ts nil it takes fault's toxics off
	// them again (a link that carries none is left as it is).
	SetLinkToxics(ctx context.Context, slot int, fault string, ts []Toxic) error
}

var (
	_ LinkToxicker = Faults{}
)

// SetLinkToxics puts ts on every link of worker slot to the nodes on
// behalf of fault (Proxies.AddToxics), or with ts nil takes fault's off
// (Proxies.RemoveToxics).
func (s *NodeSet) SetLinkToxics(ctx context.Context, slot int, fault string, ts []Toxic) error {
	if slot < 0 || slot >= len(s.slotAddr) {
		return fmt.Errorf("toxics on the links of slot %d: no such worker slot", slot)
	}
	return each(s.SlotLinks(slot), func(n string) error {
		if ts == nil {
			return s.proxies.RemoveToxics(ctx, n, fault)
		}
		return s.proxies.AddToxics(n, fault, ts)
	})
}

// SetLinkToxics sets fault's toxics on a worker slot's links (every
// topology of a NodeSet: ZooKeeper, etcd, the databases, the containers).
func (f Faults) SetLinkToxics(ctx context.Context, slot int, fault string, ts []Toxic) error {
	return f.of.SetLinkToxics(ctx, slot, fault, ts)
}

// Restarts that lose data (the restart-lose nemesis): a lock node is
// crashed (SIGKILL) and started again with its data files deleted, as a
// node whose writes never reached the disk comes back (a Redis master with
// no AOF or appendfsync no, antirez's "delayed restarts" caveat on RedLock;
// a ZooKeeper or etcd member whose disk was replaced).

// Wiper is a cluster whose lock nodes can be restarted with their data
// gone.
type Wiper interface {
	// RestartEmpty crashes the node (SIGKILL, its proxies stopped), deletes
	// its data, starts it again and returns once it serves, empty.
	RestartEmpty(ctx context.Context, node string) error
}

// KeyReader is a cluster whose lock nodes' keys can be read directly (not
// through a worker's proxy): what a restart-lose takes away.
type KeyReader interface {
	// NodeKeys returns every key the node holds, with its value.
	NodeKeys(ctx context.Context, node string) (map[string]string, error)
}

// RestartEmpty kills the named node (see Kill), runs wipe on its index
// while it is down, and starts it again (see Restart). When wipe fails the
// node is started again all the same, with what is left, and the error
// says so.
func (s *NodeSet) RestartEmpty(ctx context.Context, name string, wipe func(i int) error) error {
	i, err := s.Index(name)
	if err != nil {
		return err
	}
	if err := s.Kill(ctx, name); err != nil {
		return err
	}
	werr := wipe(i)
	if err := s.Restart(ctx, name); err != nil {
		return errors.Join(werr, err)
	}
	if werr != nil {
		return fmt.Errorf("restart %s empty: %w", name, werr)
	}
	return nil
}

// RemoveData deletes the named files and directories under dir; a name
// that is not there is no error.
func RemoveData(dir string, names ...string) error {
	var errs []error
	for _, n := range names {
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
