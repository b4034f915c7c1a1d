package node

import "syscall"

// sysProcAttr places containerd and the kubelet in their own process group,
// so a ^C meant for kstep node reaches only kstep node (which then stops them
// in order), and has the kernel kill them if kstep node dies: a node's
// programs do not outlive their supervisor. Containerd's shims, and so the
// containers, do (they are containerd's children, in their own groups).
//
// Pdeathsig fires when the thread that forked the child exits; the Go
// runtime retires a thread only when a goroutine exits while locked to it,
// which nothing in this package does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
