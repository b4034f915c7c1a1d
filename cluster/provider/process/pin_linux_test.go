package process

import (
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A child started pinned runs on those CPUs alone, and every thread of it
// (a grep reading its own status shows the affinity its first thread
// inherited); the starting thread gets its own affinity back.
func TestStartPinned(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	first := -1
	for c := range 1024 {
		if all.IsSet(c) {
			first = c
			break
		}
	}
	if first < 0 {
		t.Fatal("no CPU in this process's affinity")
	}
	for range 5 {
		cmd := exec.Command("grep", "Cpus_allowed_list", "/proc/self/status")
		var out strings.Builder
		cmd.Stdout = &out
		if err := startPinned(cmd, []int{first}); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(strings.TrimPrefix(out.String(), "Cpus_allowed_list:")); got != strconv.Itoa(first) {
			t.Fatalf("the child's CPUs %q, want %d", got, first)
		}
	}
	// Every thread of this process still has its full affinity.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var now unix.CPUSet
	if err := unix.SchedGetaffinity(0, &now); err != nil {
		t.Fatal(err)
	}
	if now.Count() != all.Count() {
		t.Errorf("this thread runs on %d CPUs after the starts, %d before", now.Count(), all.Count())
	}
	// A CPU the process may not use is an error naming it, not a child
	// placed anywhere.
	if err := startPinned(exec.Command("true"), []int{1023}); err == nil || !strings.Contains(err.Error(), "1023") {
		t.Errorf("pinning to CPU 1023: %v", err)
	}
}
