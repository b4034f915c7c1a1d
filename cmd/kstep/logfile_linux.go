package main

import (
	"fmt"
	"os"
	"syscall"
)

// logFileEnv names a file that takes this process's stdout and stderr.
// The docker provider sets it for every container, with the file in the
// state directory bind-mounted at the same path, so an actor's output
// lands in <state-dir>/logs/<actor>.log as it happens, across restarts of
// the container, and survives the container's removal. Children (a node's
// kubelet and containerd) inherit the descriptors.
const logFileEnv = "KSTEP_LOG_FILE"

func init() {
	path := os.Getenv(logFileEnv)
	if path == "" {
		return
	}
	os.Unsetenv(logFileEnv)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kstep: %s=%s: %v; logging to stderr\n", logFileEnv, path, err)
		return
	}
	for _, fd := range []int{1, 2} {
		if err := syscall.Dup3(int(f.Fd()), fd, 0); err != nil {
			fmt.Fprintf(os.Stderr, "kstep: %s: dup to fd %d: %v\n", logFileEnv, fd, err)
		}
	}
	f.Close()
}
