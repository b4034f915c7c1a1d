//go:build unix && !linux

package process

import (
	"errors"
	"os/exec"
	"syscall"
)

// sysProcAttr places a child in a session of its own, detached or not (see
// proc_linux.go); there is no Pdeathsig outside Linux, so foreground ones
// may outlive a kstep that is killed.
func sysProcAttr(bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// sameProcess cannot check argv without /proc; a live PID is trusted.
func sameProcess(procRef) bool { return true }

// processState is unknown without /proc.
func processState(int) byte { return 0 }

// stateKnown reports whether processState works here.
const stateKnown = false

// startPinned cannot pin a process outside Linux: it refuses CPUs.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) > 0 {
		return errors.New("actorCPUs: pinning actors to CPUs needs Linux")
	}
	return cmd.Start()
}
