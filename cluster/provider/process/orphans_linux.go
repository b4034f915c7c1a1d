package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
// and killed, children first. Then what they leave mounted under stateDir
// (container root filesystems, /dev/shm, network namespaces) is unmounted,
// so the state directory can be removed.
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
	if err := unmountUnder(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// unmountUnder lazily unmounts every mount point below dir, deepest first.
func unmountUnder(dir string) error {
	points, err := mountPoints(dir)
	if err != nil {
		return fmt.Errorf("reap mounts: %w", err)
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, mp := range points {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", mp, err))
		}
	}
	return errors.Join(errs...)
}

// mountPoints are the mount points below dir, from /proc/self/mountinfo.
func mountPoints(dir string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		// Field 5 is the mount point, with space, tab, newline and
		// backslash octal-escaped.
		mp := unescapeMount(f[4])
		if strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	return points, nil
}

// mountsUnder are the mount points below dir (absolute or not) still
// there; an unreadable mount table counts as one, so nothing is removed
// blind.
func mountsUnder(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return []string{dir + ": " + err.Error()}
	}
	points, err := mountPoints(abs)
	if err != nil {
		return []string{"/proc/self/mountinfo: " + err.Error()}
	}
	return points
}

func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
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
