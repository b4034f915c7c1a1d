package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/kstep-dev/kstep/cluster/provider"
)

// reapOrphanPods kills the pods that nodes of the cluster in stateDir left
// running: a node killed with SIGKILL (or whose shutdown timed out) leaves
// its containerd shims, and under them its containers, alive — by design,
// as upstream, so that a restarted node finds them. Down does not restart
// it, so they are found by their shim's -address (a socket under stateDir)
// and killed, children first.
func reapOrphanPods(stateDir string) error {
	dir, err := filepath.Abs(stateDir)
	if err != nil {
		return err
	}
	children, err := processTree()
	if err != nil {
		return fmt.Errorf("reap pods: %w", err)
	}
	var shims []int
	for _, kids := range children {
		for _, pid := range kids {
			if isShimUnder(pid, dir) {
				shims = append(shims, pid)
			}
		}
	}
	var errs []error
	for _, shim := range shims {
		kill := descendants(children, shim)
		kill = append(kill, shim)
		for _, pid := range kill {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("reap pod process %d: %w", pid, err))
			}
		}
	}
	return errors.Join(errs...)
}

// processTree maps every process's parent to its children, from /proc.
func processTree() (map[int][]int, error) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentPID(pid); ppid > 0 {
			children[ppid] = append(children[ppid], pid)
		}
	}
	return children, nil
}

// descendantNamed finds the descendant of pid that runs the program name:
// argv[0]'s base name, or the kstep subcommand (argv[1] of a kstep), so
// "containerd" and "kubelet" both name a real node's processes.
func descendantNamed(pid int, name string) (int, error) {
	children, err := processTree()
	if err != nil {
		return 0, err
	}
	for _, d := range descendants(children, pid) {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", d))
		if err != nil {
			continue
		}
		if provider.ProgramIs(strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00"), name) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("no %s process under pid %d (/proc)", name, pid)
}

// SignalProgram sends sig to the descendant of root that runs the program
// name (see provider.ProgramIs): `kstep signal` runs it inside a node
// container with root 1, the container's init.
func SignalProgram(root int, name string, sig syscall.Signal) (int, error) {
	pid, err := descendantNamed(root, name)
	if err != nil {
		return 0, err
	}
	return pid, signalProcess(pid, sig)
}

// descendants lists pid's descendants, deepest last.
func descendants(children map[int][]int, pid int) []int {
	var out []int
	for _, c := range children[pid] {
		out = append(out, c)
		out = append(out, descendants(children, c)...)
	}
	return out
}

func parentPID(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// isShimUnder reports whether pid is a containerd shim serving a containerd
// whose socket lies under dir.
func isShimUnder(pid int, dir string) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(raw) == 0 {
		return false
	}
	argv := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	if !strings.HasPrefix(filepath.Base(argv[0]), "containerd-shim") {
		return false
	}
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "-address" || argv[i] == "--address" {
			addr := strings.TrimPrefix(argv[i+1], "unix://")
			return strings.HasPrefix(addr, dir+string(filepath.Separator))
		}
	}
	return false
}
