//go:build !windows

package mcpclient

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fixtureSignal is the fixture server's --signal FIFO (tests/fixture-server/README.md): the
// server writes "request <method> <name>" when it reads a request and "notification <method>"
// after a notification took effect, so a test waits until another goroutine's call reached the
// server (for `hang`: is blocked for good) instead of sleeping for a guessed time.
type fixtureSignal struct {
	Path string
	f    *os.File
	buf  []byte
}

// newSignal makes and opens the FIFO (before the fixture starts); it is removed at cleanup.
func newSignal(t *testing.T) *fixtureSignal {
	t.Helper()
	path := filepath.Join(t.TempDir(), "signal.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read-write: opening does not wait for the server, and EOF never comes. A FIFO goes
	// through the runtime poller, so read deadlines work.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &fixtureSignal{Path: path, f: f}
}

// Args are the fixture flags that turn the signal on.
func (s *fixtureSignal) Args() []string { return []string{"--signal", s.Path} }

// Wait consumes lines until count of them started with prefix; the test fails after 10 s.
func (s *fixtureSignal) Wait(t *testing.T, prefix string, count int) {
	t.Helper()
	if s.wait(prefix, count, 10*time.Second) != nil {
		t.Fatalf("the fixture did not signal %q %d times", prefix, count)
	}
}

// wait is Wait without a *testing.T, for other goroutines.
func (s *fixtureSignal) wait(prefix string, count int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	chunk := make([]byte, 4096)
	for count > 0 {
		for count > 0 {
			i := bytes.IndexByte(s.buf, '\n')
			if i < 0 {
				break
			}
			if strings.HasPrefix(string(s.buf[:i]), prefix) {
				count--
			}
			s.buf = s.buf[i+1:]
		}
		if count == 0 {
			break
		}
		if err := s.f.SetReadDeadline(deadline); err != nil {
			return err
		}
		n, err := s.f.Read(chunk)
		if err != nil {
			return err
		}
		s.buf = append(s.buf, chunk[:n]...)
	}
	return nil
}

// waitingCalls are the system calls a thread parked in the library sleeps in (futex, epoll
// waits), by architecture.
var waitingCalls = map[string][]string{
	"amd64": {"202", "232", "281", "441"},
	"arm64": {"98", "22", "441"},
}

// lockedThreadID pins the calling goroutine to its OS thread and returns the thread's id, so
// waitParked can watch the thread a blocking call (Subscription.Next) runs on.
func lockedThreadID() int {
	runtime.LockOSThread()
	return syscall.Gettid()
}

// waitParked waits until thread tid sleeps in the kernel in a futex or epoll wait (seen twice
// in a row), for waits no fixture signal marks: a goroutine blocked in Subscription.Next.
// Polled, as no event marks "now asleep".
func waitParked(t *testing.T, tid *atomic.Int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for seen := 0; seen < 2; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("thread %d never parked", tid.Load())
		}
		seen = 0
		if id := tid.Load(); id != 0 && parked(int(id)) {
			seen++
			time.Sleep(2 * time.Millisecond)
			if parked(int(id)) {
				seen++
			}
		}
	}
}

func parked(tid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
	if err != nil {
		return false
	}
	nr, _, _ := strings.Cut(string(raw), " ")
	return slices.Contains(waitingCalls[runtime.GOARCH], strings.TrimSpace(nr))
}
