package workerproc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// Mux is one channel that many workers write their stdout to, read by the
// controller in the order the lines were written: a line a worker wrote
// before another worker wrote its own is handed over first, whichever
// process wrote it. Per-worker pipes, each read by its own goroutine, give
// no such order: a rival's grant could be read before the line its holder
// wrote before it let the lock go.
//
// The channel is a Unix stream socket whose reading end has SO_PASSCRED
// set: the kernel stamps every chunk with the pid of the process that
// wrote it and never returns chunks of two writers in one read, so the
// lines of each worker are put back together by pid. Only the worker
// process itself may write to its stdout (a child it starts is not known
// to the mux, and its lines are dropped).
//
// Every line is handed over (Options.Line, OnEvent, OnReply) with the
// mux's lock held, by whichever goroutine reads: the mux's own, Sync's
// caller, or a worker's that has exited.
type Mux struct {
	r, w *os.File // the controller's reading end; the workers' stdout
	rc   syscall.RawConn
	mu   sync.Mutex
	// Under mu:
	procs map[int]*Proc // by pid
	// early holds what a process wrote before it was added (its pid
	// known only once it runs), at most muxEarly bytes in all.
	early   map[int][]byte
	buf     []byte
	oob     []byte
	dropped int   // bytes from processes the mux does not know
	err     error // why reading stopped, nil while it goes on
	done    chan struct{}
	// held stops the mux's own reader, so that a test can see what Sync
	// hands over; never set outside tests.
	held atomic.Bool
}

// muxEarly bounds what the mux keeps of processes it does not know yet.
const muxEarly = 1 << 20

// muxRead is how much one read of the socket takes at most.
const muxRead = 64 * 1024

// NewMux opens a mux and starts reading it; Close ends it.
func NewMux() (*Mux, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("worker mux: socketpair: %w", err)
	}
	if err := syscall.SetsockoptInt(fds[0], syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, fmt.Errorf("worker mux: SO_PASSCRED: %w", err)
	}
	// The workers' end stays blocking: a worker's write waits for room.
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, fmt.Errorf("worker mux: %w", err)
	}
	m := &Mux{r: os.NewFile(uintptr(fds[0]), "worker-mux"), w: os.NewFile(uintptr(fds[1]), "worker-stdout"),
		procs: make(map[int]*Proc), early: make(map[int][]byte), buf: make([]byte, muxRead), oob: make([]byte, syscall.CmsgSpace(syscall.SizeofUcred)),
		done: make(chan struct{})}
	if m.rc, err = m.r.SyscallConn(); err != nil {
		m.r.Close()
		m.w.Close()
		return nil, fmt.Errorf("worker mux: %w", err)
	}
	go m.loop()
	return m, nil
}

// loop reads the socket whenever it is readable, until Close.
func (m *Mux) loop() {
	defer close(m.done)
	_ = m.rc.Read(func(fd uintptr) bool {
		if m.held.Load() {
			return false
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.drain(int(fd))
	})
}

// Sync reads and hands over every line written to the mux so far: a line
// a worker wrote before Sync was called is handed over before it returns.
func (m *Mux) Sync() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return
	}
	_ = m.rc.Control(func(fd uintptr) { m.drain(int(fd)) })
}

// drain reads the socket until it is empty and hands over each line read;
// it reports whether reading has ended. Called under mu.
func (m *Mux) drain(fd int) bool {
	for m.err == nil {
		n, oobn, _, _, err := syscall.Recvmsg(fd, m.buf, m.oob, syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return false
		case err != nil:
			m.err = fmt.Errorf("worker mux: read: %w", err)
			return true
		case n == 0:
			m.err = errors.New("worker mux: closed")
			return true
		}
		pid := -1
		if msgs, err := syscall.ParseSocketControlMessage(m.oob[:oobn]); err == nil {
			for i := range msgs {
				if cred, err := syscall.ParseUnixCredentials(&msgs[i]); err == nil {
					pid = int(cred.Pid)
				}
			}
		}
		p := m.procs[pid]
		switch {
		case p != nil:
			p.feed(m.buf[:n])
		case pid > 0 && m.earlyBytes()+n <= muxEarly:
			m.early[pid] = append(m.early[pid], m.buf[:n]...)
		default:
			m.dropped += n
		}
	}
	return true
}

// earlyBytes is how much early holds. Called under mu.
func (m *Mux) earlyBytes() int {
	n := 0
	for _, b := range m.early {
		n += len(b)
	}
	return n
}

// add has the mux read p's lines from now on, beginning with what p wrote
// before it was added. Lines an earlier process of the same pid (one that
// has exited since) left are handed to that one first.
func (m *Mux) add(p *Proc) {
	m.Sync()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.procs[p.Pid()] = p
	if b, ok := m.early[p.Pid()]; ok {
		delete(m.early, p.Pid())
		p.feed(b)
	}
}

// remove reads what p wrote before it exited and stops reading for it.
func (m *Mux) remove(p *Proc) {
	m.Sync()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.procs[p.Pid()] == p {
		delete(m.procs, p.Pid())
	}
}

// Dropped returns how many bytes came from processes that are not the
// mux's workers (a child a worker started, say), which no one read.
func (m *Mux) Dropped() int {
	m.Sync()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped + m.earlyBytes()
}

// Close stops reading; workers still running then write to a socket no one
// reads. Call it once their processes have exited.
func (m *Mux) Close() error {
	m.w.Close()
	err := m.r.Close()
	<-m.done
	return err
}
