package process

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kstep-dev/kstep/cluster/provider"
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

// TestPurgeRemovesNodesData: `kstep down --purge` left a real node's data
// (<state>/nodes/node-0, containerd's root and state) behind (#56 6d).
// Purge removes it with the rest; what a pod left mounted there (here a
// bind mount of a directory elsewhere, as a hostPath volume is) is
// unmounted first, and the directory behind it is not touched.
func TestPurgeRemovesNodesData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	root := filepath.Join(dir, "nodes", "node-0", "containerd", "root")
	for _, d := range []string{root, filepath.Join(dir, "etcd", "etcd-0"), filepath.Join(dir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "meta.db"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	host := t.TempDir() // a pod's hostPath
	sentinel := filepath.Join(host, "keep")
	if err := os.WriteFile(sentinel, []byte("the host's"), 0o600); err != nil {
		t.Fatal(err)
	}
	mounted := false
	if os.Geteuid() == 0 {
		mp := filepath.Join(dir, "nodes", "node-0", "rootfs", "data")
		if err := os.MkdirAll(mp, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount(host, mp, "", syscall.MS_BIND, ""); err == nil {
			mounted = true
			defer syscall.Unmount(mp, syscall.MNT_DETACH)
		} else {
			t.Logf("bind mount: %v (checking the removal alone)", err)
		}
	}
	p, err := New(provider.Spec{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Purge(); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		var left []string
		_ = filepath.WalkDir(dir, func(path string, _ fs.DirEntry, _ error) error { left = append(left, path); return nil })
		t.Fatalf("state dir after Purge: %v, holding %q", err, left)
	}
	if b, err := os.ReadFile(sentinel); err != nil || string(b) != "the host's" {
		t.Fatalf("the directory mounted in the node's data: %q, %v (mounted: %v)", b, err, mounted)
	}
}
