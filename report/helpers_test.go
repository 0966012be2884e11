package report

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/checker"
	"github.com/lockcheck/lockcheck/history"
)

// fixture is a stored run under testdata/runs.
type fixture struct {
	meta    Meta
	testRaw []byte // test.json as stored
	h       history.History
}

// loadFixture reads testdata/runs/<name>.
func loadFixture(t *testing.T, name string) fixture {
	t.Helper()
	dir := filepath.Join("testdata", "runs", name)
	raw, err := os.ReadFile(filepath.Join(dir, "test.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tf TestInfo
	if err := json.Unmarshal(raw, &tf); err != nil {
		t.Fatalf("%s/test.json: %v", dir, err)
	}
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return fixture{meta: metaOf(tf), testRaw: raw, h: h}
}

// metaOf turns a stored test.json into a Meta, as the runner would fill it.
func metaOf(tf TestInfo) Meta {
	return Meta{Name: tf.Name, Lock: tf.Lock, Nemesis: tf.Nemesis, Seed: tf.Seed, Fencing: tf.Fencing,
		Workers: tf.Workers, Duration: tf.Time, Command: strings.Join(tf.Command, " "), Started: tf.Started}
}

// check runs the default checkers on h as the runner does.
func check(t *testing.T, h history.History, fenced bool) checker.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return checker.Default(checker.Options{Fenced: fenced, Timeout: 20 * time.Second}).Check(ctx, h)
}

// storeRun writes a run directory store/<test>/<run>/ as the runner leaves
// it: test.json, history.jsonl, results.json, linearizability.html when the
// result has a visualization, and report.html. It returns the directory.
func storeRun(t *testing.T, store, test, run string, testJSON []byte, in Input) string {
	t.Helper()
	dir := filepath.Join(store, test, run)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if testJSON == nil {
		testJSON = testJSONOf(in.Meta)
	}
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("test.json", testJSON)
	hf, err := os.Create(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(hf)
	for _, op := range in.History {
		if err := enc.Encode(op); err != nil {
			t.Fatal(err)
		}
	}
	if err := hf.Close(); err != nil {
		t.Fatal(err)
	}
	rb, err := json.MarshalIndent(in.Result, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write("results.json", rb)
	if in.Result.Visualize != nil {
		f, err := os.Create(filepath.Join(dir, "linearizability.html"))
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Result.Visualize(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if err := Write(filepath.Join(dir, "report.html"), in); err != nil {
		t.Fatal(err)
	}
	return dir
}

// testJSONOf renders the test.json fields the index reads.
func testJSONOf(m Meta) []byte {
	b, _ := json.MarshalIndent(TestInfo{Name: m.Name, Lock: m.Lock, Nemesis: m.Nemesis, Seed: m.Seed,
		Fencing: m.Fencing, Workers: m.Workers, Time: m.Duration, Started: m.Started,
		Command: strings.Fields(m.Command)}, "", "  ")
	return b
}

// synthHistory generates a plausible history of a redis-set-px run: workers
// cycle acquire → cs (read, think 10–12 ms, write) → release on one key
// with a 1 s lease for d. Every 6–10 s the nemesis pauses the holder for
// 3 s right after its cs began: its lease runs out, others are granted the
// lock, and its write after the pause rolls the register back (a double
// holder and a lost update). Acquires that wait over 2 s fail, and now and
// then a release times out (info), the controller retires the process and
// a fresh one (process + workers) takes the slot. All randomness comes from
// seed.
func synthHistory(seed uint64, workers int, d time.Duration) history.History {
	const (
		us         = time.Microsecond
		lease      = time.Second
		acqTimeout = 2 * lease
		pauseFor   = 3 * lease
	)
	rng := rand.New(rand.NewPCG(seed, 0x7265706f7274))
	jitter := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)) }
	var ops []history.Op
	emit := func(at time.Duration, p int, typ history.Type, f string, v *history.Value, errText string) {
		key := "k0"
		if p == history.NemesisProcess {
			key = ""
		}
		ops = append(ops, history.Op{Time: at, Process: p, Type: typ, F: f, Key: key, Value: v, Error: errText})
	}
	type worker struct {
		proc     int
		waitFrom time.Duration // when its open acquire was invoked
	}
	ws := make([]*worker, workers)
	for i := range ws {
		ws[i] = &worker{proc: i, waitFrom: 50*time.Millisecond + time.Duration(i)*100*us}
		emit(ws[i].waitFrom, i, history.Invoke, history.FAcquire, nil, "")
	}
	free := 60 * time.Millisecond // when the lock is next free
	var token, reg int64
	type write struct {
		at  time.Duration
		val int64
	}
	var pending []write // the paused holders' late writes
	nextPause := jitter(3*time.Second, 5*time.Second)
	retires := 3
	for free < d {
		for _, w := range ws { // acquires that waited too long fail and retry
			for w.waitFrom+acqTimeout < free {
				at := w.waitFrom + acqTimeout
				emit(at, w.proc, history.Fail, history.FAcquire, nil, "lock not acquired: held by another client until the acquire timeout")
				w.waitFrom = at + 20*us
				emit(w.waitFrom, w.proc, history.Invoke, history.FAcquire, nil, "")
			}
		}
		var cands []*worker
		soonest := time.Duration(1 << 62)
		for _, w := range ws {
			if w.waitFrom <= free {
				cands = append(cands, w)
			}
			soonest = min(soonest, w.waitFrom)
		}
		if len(cands) == 0 {
			free = soonest
			continue
		}
		w := cands[rng.IntN(len(cands))]
		g := free + jitter(100*us, 2100*us)
		token++
		owner := fmt.Sprintf("p%d-%016x", w.proc, rng.Uint64())
		emit(g, w.proc, history.OK, history.FAcquire, &history.Value{Token: token, Owner: owner}, "")
		cs := g + 8*us
		emit(cs, w.proc, history.Invoke, history.FCS, &history.Value{Owner: owner}, "")
		slices.SortFunc(pending, func(a, b write) int { return cmp.Compare(a.at, b.at) })
		for len(pending) > 0 && pending[0].at < cs {
			reg, pending = pending[0].val, pending[1:]
		}
		read := reg
		if g >= nextPause && g+pauseFor+2*time.Second < d { // pause this holder
			p := cs + time.Millisecond
			emit(p, history.NemesisProcess, history.Invoke, history.FPause, nil, "")
			emit(p+50*us, history.NemesisProcess, history.Info, history.FPause,
				&history.Value{Extra: &history.Extra{Targets: []int{w.proc}, Detail: fmt.Sprintf("SIGSTOP process %d", w.proc)}}, "")
			r := p + pauseFor
			emit(r, history.NemesisProcess, history.Invoke, history.FResume, nil, "")
			emit(r+50*us, history.NemesisProcess, history.Info, history.FResume,
				&history.Value{Extra: &history.Extra{Targets: []int{w.proc}, Detail: "SIGCONT"}}, "")
			emit(r+200*us, w.proc, history.Info, history.FEvent, &history.Value{Extra: &history.Extra{Detail: "lease expired while the process was stopped"}}, "")
			end := r + 300*us
			emit(end, w.proc, history.OK, history.FCS, &history.Value{Read: history.Int64(read), Wrote: history.Int64(read + 1)}, "")
			pending = append(pending, write{end, read + 1})
			emit(end+10*us, w.proc, history.Invoke, history.FRelease, &history.Value{Token: token, Owner: owner}, "")
			emit(end+310*us, w.proc, history.OK, history.FRelease, &history.Value{Released: history.Bool(false)}, "")
			w.waitFrom = end + 320*us
			emit(w.waitFrom, w.proc, history.Invoke, history.FAcquire, nil, "")
			free = g + lease
			nextPause = r + jitter(6*time.Second, 10*time.Second)
			continue
		}
		end := cs + jitter(10*time.Millisecond, 12*time.Millisecond)
		reg = read + 1
		emit(end, w.proc, history.OK, history.FCS, &history.Value{Read: history.Int64(read), Wrote: history.Int64(reg)}, "")
		rel := end + 10*us
		emit(rel, w.proc, history.Invoke, history.FRelease, &history.Value{Token: token, Owner: owner}, "")
		free = rel + 150*us
		if retires > 0 && g > d/4 && rng.IntN(800) == 0 { // the release times out: retire the process
			retires--
			at := rel + 500*time.Millisecond
			emit(at, w.proc, history.Info, history.FRelease, nil, "timeout: no reply within 500ms")
			emit(at+10*us, w.proc, history.Invoke, history.FCrash, nil, "")
			emit(at+time.Millisecond, w.proc, history.Info, history.FCrash, nil, "")
			w.proc += workers
			w.waitFrom = at + 3*time.Millisecond
			emit(w.waitFrom, w.proc, history.Invoke, history.FAcquire, nil, "")
			continue
		}
		ok := rel + jitter(300*us, 800*us)
		emit(ok, w.proc, history.OK, history.FRelease, &history.Value{Released: history.Bool(true)}, "")
		w.waitFrom = ok + 10*us
		emit(w.waitFrom, w.proc, history.Invoke, history.FAcquire, nil, "")
	}
	for _, w := range ws { // the test is over: open acquires give up
		emit(max(w.waitFrom, free)+time.Millisecond, w.proc, history.Fail, history.FAcquire, nil, "test over")
	}
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = i
	}
	return ops
}
