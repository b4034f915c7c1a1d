package docker

import (
	"fmt"
	"os"
	"syscall"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// CanRunRealNodes reports why real node containers cannot run with the
// programs beside spec's kstep binary, or nil when they can: the node image
// needs them (make build).
func CanRunRealNodes(spec provider.Spec) error {
	host, err := hostBinOf(spec.Binary)
	if err != nil {
		return err
	}
	for _, b := range nodeImage.programs {
		if _, err := os.Stat(host.path(b)); err != nil {
			return fmt.Errorf("real node containers need %s in %s (run make build): %w", b, host.dir, err)
		}
	}
	return nil
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
