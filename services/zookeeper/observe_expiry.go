package zookeeper

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"sync"
)

// zkExpiryMark is what a ZooKeeper server logs (at INFO, on the leader)
// when it expires a session whose client went silent for its timeout:
// "Expiring session 0x300003d0b8f0003, timeout of 4000ms exceeded". It
// logs it before it closes the session and deletes its ephemeral nodes;
// a client that closes its session, or deletes its node, logs no such
// line.
var zkExpiryMark = []byte("Expiring session 0x")

// zkExpiries reads the servers' logs for the sessions they expired, so
// that the observer can tell a lock node that went with its expired
// session from one its holder deleted (or whose session its client
// closed).
type zkExpiries struct {
	mu      sync.Mutex
	logs    []string
	offsets []int64  // how far each log was read
	partial [][]byte // each log's last line, not complete yet
	expired map[int64]bool
}

// newZKExpiries returns a reader of the logs at paths.
func newZKExpiries(paths []string) *zkExpiries {
	return &zkExpiries{logs: paths, offsets: make([]int64, len(paths)), partial: make([][]byte, len(paths)), expired: map[int64]bool{}}
}

// has reports whether a server has logged that it expired session. The
// server logs the expiry before it deletes the session's nodes, and the
// observer hears of a deletion after that, so the logs are read up to
// their ends at each question.
func (x *zkExpiries) has(session int64) bool {
	if x == nil || session == 0 {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.expired[session] {
		x.readNew()
	}
	return x.expired[session]
}

// readNew reads what each log gained since it was last read.
func (x *zkExpiries) readNew() {
	for i, p := range x.logs {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		st, err := f.Stat()
		if err != nil || st.Size() == x.offsets[i] {
			f.Close()
			continue
		}
		if st.Size() < x.offsets[i] {
			x.offsets[i], x.partial[i] = 0, nil // a new log
		}
		b, err := io.ReadAll(io.NewSectionReader(f, x.offsets[i], st.Size()-x.offsets[i]))
		f.Close()
		if err != nil {
			continue
		}
		x.offsets[i] += int64(len(b))
		b = append(x.partial[i], b...)
		end := bytes.LastIndexByte(b, '\n') + 1
		x.scan(b[:end])
		x.partial[i] = append([]byte(nil), b[end:]...)
	}
}

// scan adds the sessions that lines (whole lines of a log) say were
// expired.
func (x *zkExpiries) scan(lines []byte) {
	for {
		i := bytes.Index(lines, zkExpiryMark)
		if i < 0 {
			return
		}
		lines = lines[i+len(zkExpiryMark):]
		n := 0
		for n < len(lines) && isHex(lines[n]) {
			n++
		}
		if id, err := strconv.ParseUint(string(lines[:n]), 16, 64); err == nil && n > 0 {
			x.expired[int64(id)] = true
		}
	}
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
