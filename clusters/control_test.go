package clusters

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunCommand: a command's exit status, output and error as it ran; one
// past its timeout is killed with its children.
func TestRunCommand(t *testing.T) {
	ctx := context.Background()
	run, err := RunCommand(ctx, "n0", CmdKill, "echo gone; echo twice", time.Minute)
	if err != nil || run.Exit != 0 || run.Output != "gone\ntwice\n" || run.Node != "n0" || run.Word != CmdKill || run.Error != "" {
		t.Fatalf("ok command: %+v, %v", run, err)
	}
	run, err = RunCommand(ctx, "n0", CmdStart, "echo no such container >&2; exit 7", time.Minute)
	if err == nil || run.Exit != 7 || !strings.Contains(err.Error(), "start command for n0 `echo no such container >&2; exit 7` exited 7: no such container") {
		t.Fatalf("failing command: %+v, %v", run, err)
	}
	mark := filepath.Join(t.TempDir(), "child")
	start := time.Now()
	run, err = RunCommand(ctx, "n0", CmdStop, "(sleep 30; touch "+mark+") & sleep 30", 200*time.Millisecond)
	if err == nil || run.Exit != -1 || !strings.Contains(err.Error(), "ran past its 200ms timeout and was killed") || time.Since(start) > 10*time.Second {
		t.Fatalf("slow command: %+v, %v after %v", run, err, time.Since(start))
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the timed-out command's child lived on")
	}
	long := strings.Repeat("x", commandOutputMax+10)
	if run, _ := RunCommand(ctx, "n0", CmdKill, "printf "+long+"; printf END", time.Minute); len(run.Output) != commandOutputMax || !strings.HasSuffix(run.Output, "END") {
		t.Fatalf("output kept %d bytes ending %q, want the last %d", len(run.Output), run.Output[len(run.Output)-5:], commandOutputMax)
	}
}

// TestCheckCommandLine: the known placeholders pass, any other is named.
func TestCheckCommandLine(t *testing.T) {
	for line, want := range map[string]string{
		"docker kill {name}":                        "",
		"kill -9 $(lsof -ti :{port}) {host} {addr}": "",
		"awk '{print $1}'":                          "", // a brace with a space in it is the shell's
		"docker kill {container}":                   "unknown placeholder {container}",
		"":                                          "empty command",
	} {
		err := CheckCommandLine(line)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: err = %v, want %q", line, err, want)
		}
	}
	if got := fill("x {name} {addr} {host} {port}", "r0", "10.0.0.2:6379"); got != "x r0 10.0.0.2:6379 10.0.0.2 6379" {
		t.Errorf("fill = %q", got)
	}
}

// TestExternalLacks: a fault is refused naming the commands no lock
// server has, and the servers that lack them when only some do; a server
// that grants no lock needs none.
func TestExternalLacks(t *testing.T) {
	both := Commands{CmdKill: "k", CmdRestart: "r"}
	for _, tt := range []struct {
		name    string
		servers []ExternalServer
		words   []string
		want    string
	}{
		{"all given", []ExternalServer{{Name: "a", Commands: both}, {Name: "s", Role: "sentinel"}}, []string{CmdKill, CmdStart + "|" + CmdRestart}, ""},
		{"none", []ExternalServer{{Name: "a"}}, []string{CmdKill, CmdStart + "|" + CmdRestart},
			"kill nemesis: no kill command and no start or restart command in the topology file (give it"},
		{"one lacks", []ExternalServer{{Name: "a", Commands: both}, {Name: "b", Commands: Commands{CmdKill: "k"}}}, []string{CmdKill, CmdStart + "|" + CmdRestart},
			"no start or restart command in the topology file for b"},
		{"order", []ExternalServer{{Name: "a"}}, []string{CmdContinue, CmdStop}, "no stop command and no continue command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewExternal(ExternalConfig{Servers: tt.servers})
			err := e.Lacks("kill", tt.words...)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if err != nil && !errors.Is(err, ErrMissingCommand) {
				t.Fatalf("err = %v is no ErrMissingCommand", err)
			}
			if err := Lacks(e, "kill", tt.words...); (tt.want == "") != (err == nil) {
				t.Fatalf("Lacks(cluster) = %v", err)
			}
		})
	}
	if err := Lacks(failing{}, "kill", CmdKill); err != nil {
		t.Fatalf("a cluster that runs no command lacks none: %v", err)
	}
}

// TestCommandServer: a kill command's effect is looked for (the server
// stops accepting connections), a start command is waited on until the
// server accepts them, and every command ran is taken once by the nodes
// it acted on.
func TestCommandServer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	closed := filepath.Join(dir, "closed")
	go func() {
		// The "server": it stops listening when the kill command has run.
		for {
			if _, err := os.Stat(closed); err == nil {
				ln.Close()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	log := &commandLog{}
	s := commandServer{name: "n0", addr: addr, timeout: time.Minute, log: log,
		cmds: Commands{CmdKill: "touch " + closed, CmdStop: "true", CmdContinue: "false"}}
	if err := s.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Signal(ctx, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := s.Signal(ctx, syscall.SIGCONT); err == nil || !strings.Contains(err.Error(), "continue command for n0 `false` exited 1") {
		t.Fatalf("continue: err = %v", err)
	}
	if err := s.Restart(ctx); err == nil || !strings.Contains(err.Error(), "no restart command") {
		t.Fatalf("restart with no start command: err = %v", err)
	}
	if got := log.take([]string{"other"}); len(got) != 0 {
		t.Fatalf("another node took %v", got)
	}
	got := log.take([]string{"n0"})
	if len(got) != 3 || got[0].Word != CmdKill || !strings.Contains(got[0].Effect, "stopped accepting connections") ||
		got[1].Word != CmdStop || got[1].Effect != "" || got[2].Word != CmdContinue || got[2].Exit != 1 {
		t.Fatalf("commands taken: %+v", got)
	}
	if again := log.take(nil); len(again) != 0 {
		t.Fatalf("taken twice: %+v", again)
	}

	// A start command that brings the server back.
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	s.addr, s.cmds = ln2.Addr().String(), Commands{CmdStart: "true"}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got := log.take(nil); len(got) != 1 || !strings.Contains(got[0].Effect, "accepted connections") {
		t.Fatalf("start: %+v", got)
	}
}

// failing is a cluster that runs no command.
type failing struct{}

func (failing) Setup(context.Context) error    { return nil }
func (failing) Teardown(context.Context) error { return nil }
func (failing) Nodes() []Node                  { return nil }
