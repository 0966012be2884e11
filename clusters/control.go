// Control commands: the user's own lines that stop and start the servers
// of an external topology (docker kill, systemctl, kubectl), which the
// server faults run in place of lockcheck's signals.

package clusters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// The control-command words: what a command given for a server does.
const (
	// CmdKill crashes the server (docker kill, kill -9).
	CmdKill = "kill"
	// CmdStart starts a killed server again, with its data.
	CmdStart = "start"
	// CmdStop pauses the server's processes (docker pause, kill -STOP).
	CmdStop = "stop"
	// CmdContinue resumes a stopped server (docker unpause, kill -CONT).
	CmdContinue = "continue"
	// CmdRestart restarts a server; a killed one is started with it when
	// the topology gives no start command.
	CmdRestart = "restart"
	// CmdRestartEmpty restarts a server with its data gone.
	CmdRestartEmpty = "restart-without-data"
)

// ControlWords are the words a topology file's commands may name, in the
// order the docs list them.
var ControlWords = []string{CmdKill, CmdStart, CmdStop, CmdContinue, CmdRestart, CmdRestartEmpty}

// Commands maps a control-command word to its shell line, in which
// {name}, {addr}, {host} and {port} stand for the server's.
type Commands map[string]string

// placeholder matches a {word} in a command line.
var placeholder = regexp.MustCompile(`\{[^{}\s]*\}`)

// Placeholders are the names a command line may use in braces.
var Placeholders = []string{"{name}", "{addr}", "{host}", "{port}"}

// CheckCommandLine returns an error naming the first placeholder in line
// that is not one of Placeholders.
func CheckCommandLine(line string) error {
	if strings.TrimSpace(line) == "" {
		return errors.New("empty command")
	}
	for _, p := range placeholder.FindAllString(line, -1) {
		known := false
		for _, k := range Placeholders {
			known = known || p == k
		}
		if !known {
			return fmt.Errorf("unknown placeholder %s (known: %s)", p, strings.Join(Placeholders, ", "))
		}
	}
	return nil
}

// fill puts the server's name and address in line's placeholders.
func fill(line, name, addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return strings.NewReplacer("{name}", name, "{addr}", addr, "{host}", host, "{port}", port).Replace(line)
}

// MissingCommand is the error for a fault that needs control commands
// an external topology does not give.
type MissingCommand struct {
	// Fault is the nemesis kind that needs them.
	Fault string
	// Words are the commands missing, in ControlWords order.
	Words []string
	// Nodes are the servers that lack them ("" for every one).
	Nodes []string
}

func (e *MissingCommand) Error() string {
	where := ""
	if len(e.Nodes) > 0 {
		where = " for " + strings.Join(e.Nodes, ", ")
	}
	return fmt.Sprintf("%s nemesis: no %s command in the topology file%s (give it under commands:, docs/your-lock.md)",
		e.Fault, strings.Join(e.Words, " command and no "), where)
}

// ErrMissingCommand is wrapped by every *MissingCommand.
var ErrMissingCommand = errors.New("missing control command")

// Unwrap makes a MissingCommand an ErrMissingCommand.
func (e *MissingCommand) Unwrap() error { return ErrMissingCommand }

// Commanded is a cluster whose server faults run control commands it may
// lack (an external topology): a fault checks with Lacks before it
// accepts the cluster.
type Commanded interface {
	// Lacks returns a *MissingCommand naming the commands of words that
	// some lock server has none for (alternatives: a word of the form
	// "a|b" is met by either), nil when every lock server has them.
	Lacks(fault string, words ...string) error
}

// Lacks returns c's Lacks, nil for a cluster that is not Commanded (its
// faults need no command).
func Lacks(c Cluster, fault string, words ...string) error {
	if cm, ok := c.(Commanded); ok {
		return cm.Lacks(fault, words...)
	}
	return nil
}

// commandOutputMax bounds the output a command run keeps.
const commandOutputMax = 2048

// RunCommand runs line with sh -c in a process group of its own, killed
// with its children when timeout passes or ctx ends, and returns it as it
// ran; err says why it failed (it could not start, exited non-zero, or ran
// out of time).
func RunCommand(ctx context.Context, node, word, line string, timeout time.Duration) (history.Command, error) {
	run := history.Command{Node: node, Word: word, Line: line, Exit: -1}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.Command("/bin/sh", "-c", line)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		run.Error = err.Error()
		return run, fmt.Errorf("%s command for %s: %w", word, node, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	run.Took = time.Since(start)
	run.Output = tail(out.String(), commandOutputMax)
	var exit *exec.ExitError
	switch {
	case err == nil:
		run.Exit = 0
		return run, nil
	case errors.As(err, &exit) && exit.Exited():
		run.Exit = exit.ExitCode()
		run.Error = fmt.Sprintf("exited %d", run.Exit)
	case errors.Is(err, context.DeadlineExceeded):
		run.Error = fmt.Sprintf("ran past its %s timeout and was killed", timeout)
	default:
		run.Error = err.Error()
	}
	last := lastLine(run.Output)
	if last != "" {
		last = ": " + last
	}
	return run, fmt.Errorf("%s command for %s `%s` %s%s", word, node, line, run.Error, last)
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// lastLine returns s's last line that is not blank.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// commandLog keeps the commands an external topology ran until a fault's
// op takes them.
type commandLog struct {
	mu  sync.Mutex
	ran []history.Command
}

func (l *commandLog) add(c history.Command) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ran = append(l.ran, c)
}

// take removes and returns the commands run on nodes (every one for
// nil), in the order they ran.
func (l *commandLog) take(nodes []string) []history.Command {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out, keep []history.Command
	for _, c := range l.ran {
		if nodes == nil || slices.Contains(nodes, c.Node) {
			out = append(out, c)
		} else {
			keep = append(keep, c)
		}
	}
	l.ran = keep
	return out
}

// CommandTaker is a cluster that runs control commands for its faults:
// the run takes those a fault ran into the fault's op.
type CommandTaker interface {
	// TakeCommands removes and returns the commands run on nodes (every
	// node for nil) since they were last taken.
	TakeCommands(nodes []string) []history.Command
}

// effectWait bounds how long a command's effect is looked for, and
// effectPoll how often.
const (
	effectWait = 10 * time.Second
	effectPoll = 100 * time.Millisecond
)

// commandServer is an external server as a NodeSet faults it: through its
// control commands.
type commandServer struct {
	name, addr string
	cmds       Commands
	timeout    time.Duration
	log        *commandLog
}

var _ NodeServer = commandServer{}

// run runs the command for word; a word the server has no command for is
// a *MissingCommand (Lacks refuses the fault before it gets here).
func (s commandServer) run(ctx context.Context, word string, effect func(context.Context) string) error {
	line, ok := s.cmds[word]
	if !ok {
		return &MissingCommand{Fault: word, Words: []string{word}, Nodes: []string{s.name}}
	}
	run, err := RunCommand(ctx, s.name, word, fill(line, s.name, s.addr), s.timeout)
	if err == nil && effect != nil {
		run.Effect = effect(ctx)
	}
	s.log.add(run)
	return err
}

// Kill runs the kill command, then looks whether the server stopped
// accepting connections (a port forwarder in front of it may go on
// accepting them, so one that does is said, not an error).
func (s commandServer) Kill(ctx context.Context) error {
	return s.run(ctx, CmdKill, func(ctx context.Context) string {
		if after, ok := awaitAccepting(ctx, s.addr, false); ok {
			return fmt.Sprintf("%s stopped accepting connections %.1f s after the command", s.addr, after.Seconds())
		}
		return fmt.Sprintf("%s still accepted connections %.0f s after the command (a port forwarder may answer for it)", s.addr, effectWait.Seconds())
	})
}

// Restart runs the start command (the restart command when there is
// none) and waits until the server accepts connections again.
func (s commandServer) Restart(ctx context.Context) error {
	word := CmdStart
	if _, ok := s.cmds[word]; !ok {
		word = CmdRestart
	}
	return s.waitAccepting(ctx, word)
}

// waitAccepting runs word's command and waits until the server accepts
// connections; one that does not within effectWait is an error.
func (s commandServer) waitAccepting(ctx context.Context, word string) error {
	var late bool
	err := s.run(ctx, word, func(ctx context.Context) string {
		if after, ok := awaitAccepting(ctx, s.addr, true); ok {
			return fmt.Sprintf("%s accepted connections %.1f s after the command", s.addr, after.Seconds())
		}
		late = true
		return fmt.Sprintf("%s accepted no connection in the %.0f s after the command", s.addr, effectWait.Seconds())
	})
	if err == nil && late {
		return fmt.Errorf("%s command for %s ran, and %s accepted no connection in the %.0f s after it", word, s.name, s.addr, effectWait.Seconds())
	}
	return err
}

// Signal runs the stop command for SIGSTOP and the continue command for
// SIGCONT.
func (s commandServer) Signal(ctx context.Context, sig syscall.Signal) error {
	switch sig {
	case syscall.SIGSTOP:
		return s.run(ctx, CmdStop, nil)
	case syscall.SIGCONT:
		return s.run(ctx, CmdContinue, nil)
	}
	return fmt.Errorf("%s: no control command for signal %v", s.name, sig)
}

// awaitAccepting polls addr every effectPoll, for at most effectWait,
// until whether it accepts connections is want, and returns how long that
// took; ok is false when it never was.
func awaitAccepting(ctx context.Context, addr string, want bool) (after time.Duration, ok bool) {
	start := time.Now()
	for time.Since(start) < effectWait && ctx.Err() == nil {
		if accepts(ctx, addr) == want {
			return time.Since(start), true
		}
		time.Sleep(effectPoll)
	}
	return 0, false
}

// accepts reports whether addr accepts a TCP connection within a short
// bound.
func accepts(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: 500 * time.Millisecond}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// lacking returns, of words, those that cmds has no command for; a word
// "a|b" is met by either.
func lacking(cmds Commands, words []string) []string {
	var out []string
	for _, w := range words {
		met := false
		for _, alt := range strings.Split(w, "|") {
			_, ok := cmds[alt]
			met = met || ok
		}
		if !met {
			out = append(out, strings.ReplaceAll(w, "|", " or "))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return wordOrder(out[i]) < wordOrder(out[j]) })
	return out
}

func wordOrder(w string) int {
	for i, c := range ControlWords {
		if strings.HasPrefix(w, c) {
			return i
		}
	}
	return len(ControlWords)
}
