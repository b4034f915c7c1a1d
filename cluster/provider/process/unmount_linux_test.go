package process

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnmountUnder: what a killed node's pods leave mounted under the state
// directory (here: tmpfs mounts, one inside another, and a name with a
// space) is unmounted, so the directory can be removed; mounts elsewhere
// are not touched.
func TestUnmountUnder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	dir := t.TempDir()
	outer := filepath.Join(dir, "state", "rootfs one")
	inner := filepath.Join(outer, "shm")
	other := t.TempDir()
	for _, mp := range []string{outer, inner, other} {
		if err := os.MkdirAll(mp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", mp, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("mount tmpfs: %v", err)
		}
		if mp == outer {
			if err := os.MkdirAll(inner, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer syscall.Unmount(other, syscall.MNT_DETACH)
	if err := unmountUnder(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), dir) {
		t.Errorf("still mounted under %s", dir)
	}
	if !strings.Contains(string(b), other) {
		t.Errorf("%s, outside the directory, was unmounted", other)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
}
