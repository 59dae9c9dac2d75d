//go:build !windows

package mcpclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// processesWith counts live processes whose environment holds MCP_HUB_TEST_MARK=mark.
func processesWith(t *testing.T, mark string) int {
	t.Helper()
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	n := 0
	for _, p := range envs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.Contains(string(b), "MCP_HUB_TEST_MARK="+mark+"\x00") {
			n++
		}
	}
	return n
}
