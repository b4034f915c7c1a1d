package process

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr places a child: always in a session of its own, so a ^C in
// the terminal reaches only kstep (which then stops them in order), and so
// the CPU scheduler treats it alike whether kstep runs the cluster in the
// foreground (bench, up) or detached (up -d, measured later through
// --provider external): with autogroup scheduling (sched_autogroup_enabled,
// the default on most distributions) a session is one scheduling group, and
// actors sharing the harness's session would compete for the two cores
// thread by thread, where detached ones compete actor by actor, as
// containers (the docker provider) and separate machines do. Foreground
// children also get SIGKILL when we die; detached ones outlive us.
//
// Pdeathsig fires when the thread that forked the child exits, not the
// process. The Go runtime only retires a thread when a goroutine that locked
// it exits still locked; nothing in kstep's up/down path does that.
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true}
	if !detach {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}

// processState returns the one-letter state from /proc/<pid>/stat ('R',
// 'S', 'T', 'Z', ...), or 0 if it cannot be read.
func processState(pid int) byte {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain ") ".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2]
	}
	return 0
}

// stateKnown reports whether processState works here.
const stateKnown = true

// sameProcess checks /proc: the process is not a zombie and runs ref.Args.
func sameProcess(ref procRef) bool {
	if st := processState(ref.PID); st == 0 || st == 'Z' {
		return false
	}
	if ref.Args == nil {
		return true
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ref.PID))
	if err != nil {
		return false
	}
	argv := bytes.Split(bytes.TrimSuffix(raw, []byte{0}), []byte{0})
	if len(argv) == 0 {
		return false
	}
	got := make([]string, 0, len(argv)-1)
	for _, a := range argv[1:] {
		got = append(got, string(a))
	}
	return slices.Equal(got, ref.Args)
}

// startPinned starts cmd with its CPU affinity set to cpus (none: as the
// kernel places it). A child inherits the affinity of the thread that
// forks it, and every thread it makes inherits its own, so the thread that
// starts it narrows its own affinity to cpus for the fork and restores it
// after: the whole actor runs on cpus from its first instruction, which a
// sched_setaffinity on its PID after the start (its main thread alone,
// after the Go runtime made others) would not give.
func startPinned(cmd *exec.Cmd, cpus []int) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var was, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		return fmt.Errorf("CPU affinity: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPUs %v: %w (are they online, and in this process's cpuset?)", cpus, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &was); rerr != nil && err == nil {
		// The thread stays locked (and so retired with its goroutine)
		// rather than run other goroutines on the narrowed CPUs; a
		// foreground child's Pdeathsig then fires: fail its start.
		runtime.LockOSThread()
		return fmt.Errorf("restore CPU affinity: %w", rerr)
	}
	return err
}
