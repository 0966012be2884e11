package nemesis

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/clusters"
	"github.com/lockcheck/lockcheck/history"
)

// crashEnv is an Env with fixed workers and an armed failpoint.
type crashEnv struct {
	workers   []Target
	failpoint string
}

func (e crashEnv) Holders() []Target {
	var hs []Target
	for _, w := range e.workers {
		if w.Key != "" {
			hs = append(hs, w)
		}
	}
	return hs
}
func (e crashEnv) Workers() []Target         { return e.workers }
func (e crashEnv) Cluster() clusters.Cluster { return nil }
func (e crashEnv) Failpoint() string         { return e.failpoint }

func TestCrashPicks(t *testing.T) {
	idle, holder, stopped := Target{Process: 1, Pid: 101}, Target{Process: 2, Pid: 102, Key: "k0"}, Target{Process: 3, Pid: 103, Failpoint: "setnx-expire"}
	aimAt := func(t Target) context.Context {
		return WithAim(context.Background(), func() (Target, error) { return t, nil })
	}
	tests := []struct {
		name       string
		ctx        context.Context
		env        crashEnv
		want       int
		why        string
		slowerThan time.Duration
	}{
		{"at the failpoint first", nil, crashEnv{[]Target{idle, holder, stopped}, "setnx-expire"}, 3, "stopped at failpoint setnx-expire", 0},
		{"no failpoint armed: the holder", nil, crashEnv{[]Target{idle, holder, stopped}, ""}, 2, "holding lock k0", 0},
		{"armed but nobody there: the holder after the wait", nil, crashEnv{[]Target{idle, holder}, "setnx-expire"}, 2, "holding lock k0", crashWait},
		{"no holder: any worker", nil, crashEnv{[]Target{idle}, ""}, 1, "a worker holding no lock", 0},
		{"aimed: the aimed worker, not the one at the failpoint", aimAt(holder), crashEnv{[]Target{idle, holder, stopped}, ""}, 2, "holding lock k0", 0},
		{"aimed at the failpoint's worker before the controller counts it there", aimAt(Target{Process: 3, Pid: 103}),
			crashEnv{[]Target{idle, holder, stopped}, "setnx-expire"}, 3, "stopped at failpoint setnx-expire", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := newCrash(tt.env, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			got, why, err := n.(*Crash).pick(ctx)
			if err != nil || got.Process != tt.want || why != tt.why || time.Since(start) < tt.slowerThan {
				t.Errorf("picked %d (%q, %v) after %s; want %d (%q)", got.Process, why, err, time.Since(start), tt.want, tt.why)
			}
		})
	}
	n, _ := newCrash(crashEnv{}, rand.New(rand.NewPCG(1, 2)))
	if _, _, err := n.(*Crash).pick(context.Background()); err == nil {
		t.Error("no workers: want an error")
	}
}

// TestCrashKillsProcessGroup kills a real process group and records it.
func TestCrashKillsProcessGroup(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	n, _ := newCrash(crashEnv{workers: []Target{{Process: 7, Pid: cmd.Process.Pid, Key: "k0"}}}, rand.New(rand.NewPCG(1, 2)))
	op := n.Invoke(context.Background(), history.Op{Process: history.NemesisProcess, Type: history.Invoke, F: history.FKillWorker})
	if op.Error != "" || op.Value == nil || len(op.Value.Ext().Targets) != 1 || op.Value.Ext().Targets[0] != 7 || !strings.HasPrefix(op.Value.Ext().Detail, "SIGKILL process 7") {
		t.Fatalf("kill-worker op: %+v %+v", op, op.Value)
	}
	select {
	case err := <-done:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Errorf("worker ended with %v, want SIGKILL", err)
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the worker outlived its crash")
	}
	if end := n.Invoke(context.Background(), history.Op{F: history.FRespawn}); end.Error != "" {
		t.Errorf("respawn: %s", end.Error)
	}
	if err := n.Heal(context.Background()); err != nil {
		t.Error(err)
	}
}
