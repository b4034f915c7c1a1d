package node

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitPID polls until s runs a process other than not (0: any), and returns
// its PID.
func waitPID(t *testing.T, s *supervised, not int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if pid, _ := s.current(); pid != 0 && pid != not {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: no new process (old pid %d)", s.name, not)
	return 0
}

func TestSupervisedRestartsAndStops(t *testing.T) {
	if _, err := os.Stat("/bin/sleep"); err != nil {
		t.Skip("no /bin/sleep")
	}
	s := newSupervised("sleeper", []string{"/bin/sleep", "600"}, os.Environ(), os.Stderr, slog.New(slog.DiscardHandler))
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	restarted := make(chan int, 4)
	s.restarted = func(pid int) { restarted <- pid }

	first := waitPID(t, s, 0)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second := waitPID(t, s, first)
	select {
	case pid := <-restarted:
		if pid != second {
			t.Errorf("restarted hook got pid %d, running %d", pid, second)
		}
	case <-time.After(5 * time.Second):
		t.Error("restarted hook not called")
	}

	began := time.Now()
	if err := s.stop(context.Background(), 5*time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("stop took %v: SIGTERM should end sleep at once", took)
	}
	if pid, _ := s.current(); pid != 0 {
		t.Errorf("pid %d still current after stop", pid)
	}
	if err := syscall.Kill(second, 0); err == nil {
		t.Errorf("pid %d alive after stop", second)
	}
	// Stopping twice is harmless.
	if err := s.stop(context.Background(), time.Second); err != nil {
		t.Errorf("second stop: %v", err)
	}
}

func TestSupervisedKillsAfterGrace(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	// A program that ignores SIGTERM.
	s := newSupervised("stubborn", []string{"/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"},
		os.Environ(), os.Stderr, slog.New(slog.DiscardHandler))
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	waitPID(t, s, 0)
	time.Sleep(100 * time.Millisecond) // let the shell install its trap
	err := s.stop(context.Background(), 300*time.Millisecond)
	if err == nil {
		t.Fatal("stop of a program ignoring SIGTERM: no error, want 'killed'")
	}
}

// TestStartFailsWhenContainerdExits: a containerd that dies at once makes
// Start fail with what it printed, and leaves nothing running.
func TestStartFailsWhenContainerdExits(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	bin := t.TempDir()
	for _, b := range append([]string{containerdBinary, shimBinary, runcBinary}, cniPlugins...) {
		script := "#!/bin/sh\nexit 0\n"
		if b == containerdBinary {
			script = "#!/bin/sh\necho 'containerd: failed to load config: boom' >&2\nexit 1\n"
		}
		if err := os.WriteFile(filepath.Join(bin, b), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp("", "kstep-node-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg := Config{Name: "n0", Index: 9, Dir: dir, BinDir: bin, Registry: "127.0.0.1:5000", Snapshotter: "native"}
	n, err := Start(context.Background(), cfg, WithReadyTimeout(20*time.Second))
	if err == nil {
		n.Stop(context.Background())
		t.Fatal("Start with a containerd that exits: no error")
	}
	if !strings.Contains(err.Error(), "exited before its CRI answered") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Start: %v; want the exit and the end of containerd's log", err)
	}
}

func TestStartNeedsTheBinaries(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Name: "n0", Index: 9, Dir: dir, BinDir: t.TempDir(), Registry: "127.0.0.1:5000", Snapshotter: "native"}
	_, err := Start(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "make node-bins") || !strings.Contains(err.Error(), "runc") {
		t.Errorf("Start without binaries: %v; want the missing ones and make node-bins", err)
	}
}
