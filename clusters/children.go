package clusters

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Children returns the pids of pid's child processes, read from /proc. A
// server that puts its workers in process groups of their own (the
// PostgreSQL postmaster makes each backend a session leader) cannot be
// signalled as a group; the harness signals it and these pids instead.
func Children(pid int) []int {
	var out []int
	for c, f := range procStats() {
		if ppid, _ := strconv.Atoi(string(f[1])); ppid == pid {
			out = append(out, c)
		}
	}
	return out
}

// procStats reads /proc/<pid>/stat of every process: by pid, the fields
// after the command name (state, ppid, pgrp, ...; field n of proc(5) is
// at index n-3). A process whose stat cannot be read or has fewer than two
// such fields is left out.
func procStats() map[int][][]byte {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	out := make(map[int][][]byte, len(stats))
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(path)))
		if len(f) < 2 || err != nil {
			continue
		}
		out[pid] = f
	}
	return out
}

// SignalTree sends sig to p's process group and to each of p's children
// (which may have groups of their own).
func SignalTree(p *Proc, sig syscall.Signal) error {
	kids := Children(p.Pid())
	err := p.Signal(sig)
	for _, c := range kids {
		if e := syscall.Kill(c, sig); e != nil && !errors.Is(e, syscall.ESRCH) {
			err = errors.Join(err, fmt.Errorf("signal %s child %d: %w", p.Name, c, e))
		}
	}
	return err
}

// KillTree SIGKILLs p and its children and waits until p has exited and
// no child is left.
func KillTree(p *Proc) error {
	kids := Children(p.Pid())
	err := p.Kill()
	for _, c := range kids {
		_ = syscall.Kill(c, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range kids {
		for syscall.Kill(c, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return err
}
