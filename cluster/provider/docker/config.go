package docker

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// CanRunRealNodes reports why real node containers cannot run with the
// programs beside spec's kstep binary, or nil when they can: the node image
// needs them (make build).
func CanRunRealNodes(spec provider.Spec) error {
	bin, err := binDirOf(spec.Binary)
	if err != nil {
		return err
	}
	for _, b := range nodeImage.programs {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return fmt.Errorf("real node containers need %s in %s (run make build): %w", b, bin, err)
		}
	}
	return nil
}

// binDirOf is the directory of the kstep binary ("" = the running one):
// where the images' programs come from.
func binDirOf(binary string) (string, error) {
	if binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find the kstep binary: %w", err)
		}
		binary = exe
	}
	return filepath.Abs(filepath.Dir(binary))
}

// pidAlive reports whether a process with pid exists on this host (the
// owner of a foreground cluster).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
