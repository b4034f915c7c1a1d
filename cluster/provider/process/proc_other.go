//go:build unix && !linux

package process

import "syscall"

// sysProcAttr places a child: detached children get their own session;
// foreground ones their own process group (no Pdeathsig outside Linux, so
// they may outlive a kstep that is killed).
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}

// sameProcess cannot check argv without /proc; a live PID is trusted.
func sameProcess(procRef) bool { return true }

// processState is unknown without /proc.
func processState(int) byte { return 0 }

// stateKnown reports whether processState works here.
const stateKnown = false
