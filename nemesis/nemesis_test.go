package nemesis

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// fake records what it was asked to do.
type fake struct {
	mu     sync.Mutex
	calls  []string
	healed int
}

func (f *fake) Fs() (string, string) { return history.FPause, history.FResume }

func (f *fake) Invoke(_ context.Context, op history.Op) history.Op {
	f.mu.Lock()
	f.calls = append(f.calls, op.F)
	f.mu.Unlock()
	return completed(op, &history.Value{Extra: &history.Extra{Targets: []int{1}}}, nil)
}

func (f *fake) Heal(context.Context) error {
	f.mu.Lock()
	f.healed++
	f.mu.Unlock()
	return nil
}

func TestScheduleAlternatesAndHeals(t *testing.T) {
	f := &fake{}
	rec := history.NewRecorder(nil)
	s := Schedule{Nemeses: []Nemesis{f}, Interval: 40 * time.Millisecond, Duration: 30 * time.Millisecond,
		Rng: rand.New(rand.NewPCG(1, 2)), Record: rec.Record}
	start := time.Now()
	if err := s.Run(context.Background(), start.Add(400*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// Run stops by itself at its deadline. On a loaded machine it may
	// return a scheduling delay late (642 ms for a 400 ms deadline was
	// seen under make test-under-load), never a further fault later.
	if time.Since(start) > 400*time.Millisecond+5*time.Second {
		t.Errorf("schedule overran its deadline: %s", time.Since(start))
	}
	if len(f.calls) < 4 || len(f.calls)%2 != 0 {
		t.Fatalf("calls %v: want whole pause/resume pairs", f.calls)
	}
	for i, c := range f.calls {
		want := history.FPause
		if i%2 == 1 {
			want = history.FResume
		}
		if c != want {
			t.Fatalf("call %d is %s, want %s (%v)", i, c, want, f.calls)
		}
	}
	if f.healed != 1 {
		t.Errorf("healed %d times, want once at the end", f.healed)
	}
	h := rec.History()
	if _, err := h.Pairs(); err != nil {
		t.Fatalf("recorded history: %v", err)
	}
	for _, op := range h {
		if op.Process != history.NemesisProcess || (op.Type != history.Invoke && op.Type != history.Info) {
			t.Fatalf("nemesis op %s: want process -1, invoke or info", op)
		}
	}
	if faults := h.Faults(); len(faults) != len(f.calls)/2 {
		t.Errorf("%d fault windows for %d pauses", len(faults), len(f.calls)/2)
	}
}

func TestScheduleStopsOnCancel(t *testing.T) {
	f := &fake{}
	ctx, cancel := context.WithCancel(context.Background())
	s := Schedule{Nemeses: []Nemesis{f}, Interval: 10 * time.Millisecond, Duration: time.Hour,
		Rng: rand.New(rand.NewPCG(1, 2)), Record: history.NewRecorder(nil).Record}
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_ = s.Run(ctx, start.Add(10*time.Hour))
	if time.Since(start) > 2*time.Second {
		t.Fatalf("schedule ignored cancellation for %s", time.Since(start))
	}
	if f.healed != 1 || (len(f.calls) > 0 && f.calls[len(f.calls)-1] != history.FResume) {
		t.Errorf("after cancel: calls %v, healed %d; want the fault ended and healed", f.calls, f.healed)
	}
}

// named is a fake that logs its name into a shared log on each fault.
type named struct {
	fake
	name string
	log  *[]string
}

func (n *named) Invoke(ctx context.Context, op history.Op) history.Op {
	if op.F == history.FPause {
		*n.log = append(*n.log, n.name)
	}
	return n.fake.Invoke(ctx, op)
}

func TestScheduleIsSeeded(t *testing.T) {
	picks := func(seed uint64) []string {
		var log []string
		s := Schedule{Nemeses: []Nemesis{&named{name: "a", log: &log}, &named{name: "b", log: &log}},
			Interval: 2 * time.Millisecond, Duration: time.Millisecond,
			Rng: rand.New(rand.NewPCG(seed, seed)), Record: history.NewRecorder(nil).Record}
		_ = s.Run(context.Background(), time.Now().Add(300*time.Millisecond))
		return log
	}
	x, y, z := picks(3), picks(3), picks(4)
	n := min(len(x), len(y), len(z))
	if n < 10 {
		t.Fatalf("only %d faults", n)
	}
	if strings.Join(x[:n], "") != strings.Join(y[:n], "") {
		t.Errorf("seed 3 twice chose %v and %v", x[:n], y[:n])
	}
	if strings.Join(x[:n], "") == strings.Join(z[:n], "") {
		t.Errorf("seeds 3 and 4 chose the same %d faults: the seed is not used", n)
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		spec  string
		names []string
		err   string
	}{
		{"none", nil, ""},
		{"", nil, ""},
		{"pause", []string{"pause"}, ""},
		{"pause,kill,pause", []string{"pause", "kill"}, ""},
		// The list of known kinds grows as nemeses register themselves.
		{"pause,flood", nil, `unknown nemesis "flood" (known: none, `},
		{"none,pause", nil, `--nemesis none,pause: none (no faults) cannot be combined with other nemeses; give --nemesis none alone, or only the nemeses to combine`},
		{"pause, none", nil, `--nemesis pause, none: none (no faults) cannot be combined with other nemeses`},
		{"none,none", nil, `--nemesis none,none: none (no faults) cannot be combined`},
		{"flood,none", nil, `unknown nemesis "flood" (known: none, `},
		{"pause,", nil, `unknown nemesis "" (known: none, `},
	} {
		ks, err := Parse(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.spec, err, tt.err)
			}
			continue
		}
		var names []string
		for _, k := range ks {
			names = append(names, k.Name)
		}
		if err != nil || strings.Join(names, ",") != strings.Join(tt.names, ",") {
			t.Errorf("%q: %v %v, want %v", tt.spec, names, err, tt.names)
		}
	}
}

// sleeperGroup starts a sleep in a process group of its own, a stand-in for
// a worker, and returns its pid (the group's id); it is killed when the
// test ends.
func sleeperGroup(t *testing.T) int { return groupProcess(t, "sleep", "30") }

// groupProcess starts argv in a process group of its own (killed with the
// test process too), and returns its pid; the group is killed when the
// test ends.
func groupProcess(t *testing.T, argv ...string) int {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}
