package workloads

import (
	"context"
	"os"
	"runtime"
	"syscall"
)

// ServeStdio runs Serve on the process's stdin and stdout, set up for what a
// worker is: one of many small processes on few cores, each doing one
// request at a time. Unless the GOMAXPROCS environment variable says
// otherwise, the Go runtime gets one processor, so a wake-up does not also
// wake idle processors to spin; and pipes are read and written through the
// runtime's poller instead of a thread blocked in read(2), so waiting for
// the next request parks a goroutine, not a thread.
func ServeStdio(ctx context.Context) error {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	return Serve(ctx, pollable(os.Stdin, "stdin"), pollable(os.Stdout, "stdout"))
}

// pollable returns f, or, when f is a pipe, a non-blocking file on the same
// descriptor that the runtime's poller waits on.
func pollable(f *os.File, name string) *os.File {
	var st syscall.Stat_t
	fd := int(f.Fd())
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return f
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), name)
}
