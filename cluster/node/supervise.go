package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Restart backoff of a supervised program: the first restart comes quickly
// (a killed containerd is what chaos tests measure recovery from), repeated
// crashes slow down, and a run this long counts as healthy again.
const (
	restartFirst   = 100 * time.Millisecond
	restartMax     = 10 * time.Second
	restartHealthy = 10 * time.Second
)

// restartDelay is how long to wait before the next start after crashes
// consecutive short runs: 100 ms, 200 ms, 400 ms, ... up to 10 s.
func restartDelay(crashes int) time.Duration {
	d := restartFirst
	for range crashes {
		if d >= restartMax/2 {
			return restartMax
		}
		d *= 2
	}
	return d
}

// supervised runs one program and starts it again whenever it exits, until
// stop. Its output goes to a file (never a pipe: containerd's shims inherit
// it and outlive containerd, and a pipe would keep Wait from returning).
type supervised struct {
	name string
	argv []string
	env  []string
	out  *os.File
	log  *slog.Logger
	// restarted, if set, runs in its own goroutine after every restart.
	restarted func(pid int)

	mu       sync.Mutex
	cmd      *exec.Cmd     // the current run
	exited   chan struct{} // closed when the current run has exited
	stopping bool
	stopc    chan struct{} // closed by stop
	done     chan struct{} // closed when the restart loop has returned
}

func newSupervised(name string, argv, env []string, out *os.File, log *slog.Logger) *supervised {
	return &supervised{
		name: name, argv: argv, env: env, out: out, log: log,
		stopc: make(chan struct{}), done: make(chan struct{}),
	}
}

var errStopping = errors.New("stopping")

// spawn starts one run, unless stop has begun.
func (s *supervised) spawn() (*exec.Cmd, chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return nil, nil, errStopping
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = s.env
	cmd.Stdout, cmd.Stderr = s.out, s.out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", s.name, err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	return cmd, s.exited, nil
}

// start runs the program for the first time and supervises it from then on.
func (s *supervised) start() error {
	cmd, exited, err := s.spawn()
	if err != nil {
		close(s.done)
		return err
	}
	go s.loop(cmd, exited)
	return nil
}

// loop waits for each run to end and starts the next.
func (s *supervised) loop(cmd *exec.Cmd, exited chan struct{}) {
	defer close(s.done)
	crashes := 0
	for {
		began := time.Now()
		err := cmd.Wait()
		close(exited)
		if s.isStopping() {
			return
		}
		ran := time.Since(began)
		if ran >= restartHealthy {
			crashes = 0
		}
		s.log.Warn("process exited; restarting", "process", s.name, "pid", cmd.Process.Pid,
			"status", exitStatus(err), "ran", ran.Round(time.Millisecond), "restart_in", restartDelay(crashes))
		for {
			select {
			case <-s.stopc:
				return
			case <-time.After(restartDelay(crashes)):
			}
			crashes++
			next, nextExited, err := s.spawn()
			if errors.Is(err, errStopping) {
				return
			}
			if err == nil {
				cmd, exited = next, nextExited
				break
			}
			s.log.Error("restart failed", "process", s.name, "err", err, "retry_in", restartDelay(crashes))
		}
		s.log.Info("process restarted", "process", s.name, "pid", cmd.Process.Pid)
		if s.restarted != nil {
			go s.restarted(cmd.Process.Pid)
		}
	}
}

func (s *supervised) isStopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// current is the running process's PID (0 between runs) and a channel
// closed when that run exits.
func (s *supervised) current() (int, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0, nil
	}
	select {
	case <-s.exited:
		return 0, s.exited
	default:
		return s.cmd.Process.Pid, s.exited
	}
}

// stop ends supervision: SIGTERM to the running process, SIGKILL if it has
// not exited after grace (or when ctx ends), then waits for it.
func (s *supervised) stop(ctx context.Context, grace time.Duration) error {
	s.mu.Lock()
	if !s.stopping {
		s.stopping = true
		close(s.stopc)
	}
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		<-s.done
		return nil
	}
	var err error
	select {
	case <-exited:
	default:
		_ = cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			err = fmt.Errorf("%s (pid %d) ignored SIGTERM for %v; killed", s.name, cmd.Process.Pid, grace)
		case <-ctx.Done():
			err = fmt.Errorf("%s (pid %d) still running: %w; killed", s.name, cmd.Process.Pid, context.Cause(ctx))
		}
		if err != nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	<-s.done
	return err
}

// exitStatus says how a run ended: "exit status 2", "signal: killed".
func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
