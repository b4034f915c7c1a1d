//go:build unix && !linux

package process

import (
	"errors"
	"syscall"
)

// reapOrphanPods: real nodes run only on Linux.
func reapOrphanPods(string) error { return nil }

// mountsUnder: real nodes run only on Linux, and mount nothing elsewhere.
func mountsUnder(string) []string { return nil }

// descendantNamed: /proc is Linux's.
func descendantNamed(int, string) (int, error) {
	return 0, errors.New("finding a process inside an actor needs /proc (Linux)")
}

// SignalProgram: /proc is Linux's.
func SignalProgram(int, string, syscall.Signal) (int, error) {
	return 0, errors.New("finding a process by program needs /proc (Linux)")
}
