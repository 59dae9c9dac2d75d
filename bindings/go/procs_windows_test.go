//go:build windows

package mcpclient

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// processesWith counts live processes running the fixture server's executable. Windows keeps
// another process's environment out of reach of a plain snapshot, so the mark is not read here
// (the Linux run checks it); the tests run one at a time and close their servers, so the count
// is this test's members.
func processesWith(t *testing.T, mark string) int {
	t.Helper()
	_ = mark
	want := strings.ToLower(filepath.Base(fixture))
	snap, err := syscall.CreateToolhelp32Snapshot(syscall.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		t.Fatalf("process snapshot: %v", err)
	}
	defer syscall.CloseHandle(snap)
	var e syscall.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	n := 0
	for err = syscall.Process32First(snap, &e); err == nil; err = syscall.Process32Next(snap, &e) {
		if strings.ToLower(syscall.UTF16ToString(e.ExeFile[:])) == want {
			n++
		}
	}
	return n
}
