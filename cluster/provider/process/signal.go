package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// toSyscall converts a signal the caller passed as os.Signal.
func toSyscall(sig os.Signal) (syscall.Signal, error) {
	s, ok := sig.(syscall.Signal)
	if !ok || s == 0 {
		return 0, fmt.Errorf("signal %v is not a process signal", sig)
	}
	return s, nil
}

// terminates reports whether Stop waits for the process to exit after sig.
func terminates(sig syscall.Signal) bool {
	return sig == syscall.SIGKILL || sig == syscall.SIGTERM || sig == syscall.SIGINT
}

// signalProcess sends sig to pid. A process that is already gone is not an
// error: the caller wanted it to stop, and it has.
func signalProcess(pid int, sig syscall.Signal) error {
	err := syscall.Kill(pid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("send %v to pid %d: %w", sig, pid, err)
}

// processAlive reports whether ref names a live process: the PID exists, is
// not a zombie, and (where the OS lets us check) still runs ref's argv, so a
// PID reused by an unrelated process does not count.
func processAlive(ref procRef) bool {
	if ref.PID <= 0 {
		return false
	}
	if err := syscall.Kill(ref.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return sameProcess(ref)
}

// waitGone polls until ref's process is gone or ctx ends. It is for processes
// this Provider did not start and so cannot wait(2) for.
func waitGone(ctx context.Context, ref procRef) error {
	t := time.NewTicker(25 * time.Millisecond)
	defer t.Stop()
	for processAlive(ref) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("pid %d still running: %w", ref.PID, context.Cause(ctx))
		case <-t.C:
		}
	}
	return nil
}

// waitPaused waits until pid's run state agrees with paused: stopped ('T')
// after SIGSTOP, anything else after SIGCONT. Signals are delivered
// asynchronously; without this a chaos step would start its clock before
// the pause took effect. Where the state cannot be read it returns at once.
func waitPaused(ctx context.Context, pid int, paused bool) error {
	if !stateKnown {
		return nil
	}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		st := processState(pid)
		if st == 0 || st == 'Z' || (st == 'T') == paused {
			return nil // gone, or where we want it
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pid %d in state %c: %w", pid, st, context.Cause(ctx))
		case <-t.C:
		}
	}
}
