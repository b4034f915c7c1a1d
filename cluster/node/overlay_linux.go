package node

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// overlaySupported mounts a scratch overlay under dir (where containerd's
// snapshots will live) and unmounts it: whether overlayfs works there, with
// the file system and privileges this process has.
func overlaySupported(dir string) error {
	td, err := os.MkdirTemp(dir, "overlay-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(td)
	d := func(n string) string { return filepath.Join(td, n) }
	for _, n := range []string{"lower", "upper", "work", "merged"} {
		if err := os.Mkdir(d(n), 0o700); err != nil {
			return err
		}
	}
	opts := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", d("lower"), d("upper"), d("work"))
	if err := syscall.Mount("overlay", d("merged"), "overlay", 0, opts); err != nil {
		return fmt.Errorf("mount overlay in %s: %w", dir, err)
	}
	return syscall.Unmount(d("merged"), 0)
}
