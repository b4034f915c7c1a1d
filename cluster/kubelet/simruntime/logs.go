package simruntime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrNoProcesses is what Exec, Attach and PortForward answer: a simulated
// container runs nothing to exec in, attach to or connect to.
var ErrNoProcesses = status.Error(codes.Unimplemented, "hollow node: containers run no processes")

// Exec implements RuntimeService: Unimplemented (ErrNoProcesses).
func (r *Runtime) Exec(ctx context.Context, _ *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	if err := r.enter(ctx, "Exec"); err != nil {
		return nil, err
	}
	return nil, ErrNoProcesses
}

// Attach implements RuntimeService: Unimplemented (ErrNoProcesses).
func (r *Runtime) Attach(ctx context.Context, _ *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	if err := r.enter(ctx, "Attach"); err != nil {
		return nil, err
	}
	return nil, ErrNoProcesses
}

// PortForward implements RuntimeService: Unimplemented (ErrNoProcesses).
func (r *Runtime) PortForward(ctx context.Context, _ *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	if err := r.enter(ctx, "PortForward"); err != nil {
		return nil, err
	}
	return nil, ErrNoProcesses
}

// OpenLog opens the simulated log of the container whose log path (as
// ContainerStatus reports it) is path: a few CRI-format lines of what its
// modeled application did, stamped with the times it did them (start,
// image, listening once its start delay is over, failing health, exit).
// A created container that never started has an empty log; a path no
// container has is fs.ErrNotExist. The reader is also an io.Seeker, as a
// file is. It is the kubelet's Config.LogReader on a hollow node.
func (r *Runtime) OpenLog(path string) (io.ReadCloser, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var c *container
	for _, x := range r.containers {
		if x.logPath == path && path != "" {
			c = x
			break
		}
	}
	if c == nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	r.refresh(c)
	return logFile{bytes.NewReader(r.simulatedLog(c, r.clock.Now()))}, nil
}

type logFile struct{ *bytes.Reader }

func (logFile) Close() error { return nil }

// simulatedLog renders c's log up to now. Callers hold r.mu.
func (r *Runtime) simulatedLog(c *container, now time.Time) []byte {
	if c.startedAt == 0 {
		return nil
	}
	var b bytes.Buffer
	end := now
	if c.finishedAt > 0 {
		end = time.Unix(0, c.finishedAt)
	}
	line := func(at time.Time, stream, msg string) {
		if at.After(end) {
			return
		}
		fmt.Fprintf(&b, "%s %s F %s\n", at.UTC().Format(time.RFC3339Nano), stream, msg)
	}
	start := time.Unix(0, c.startedAt)
	line(start, "stdout", fmt.Sprintf("kstep-sim: container %q (attempt %d) started on hollow node %s", c.name, c.attempt, r.node))
	line(start.Add(time.Millisecond), "stdout", fmt.Sprintf("image %s (%s)", c.image, c.ref))
	ready := start.Add(max(c.startDelay, 0) + 2*time.Millisecond)
	var ports []string
	if s := r.sandboxes[c.sandboxID]; s != nil {
		for _, p := range s.ports {
			ports = append(ports, fmt.Sprintf(":%d", p))
		}
	}
	if len(ports) > 0 {
		line(ready, "stdout", "listening on "+strings.Join(ports, ", "))
	} else {
		line(ready, "stdout", "ready")
	}
	if c.unhealthyAfter > 0 {
		line(start.Add(c.unhealthyAfter), "stderr", "health check failing: answering HTTP 500")
	}
	if c.finishedAt > 0 {
		switch {
		case c.exitAfter > 0 && c.finishedAt == c.startedAt+int64(c.exitAfter):
			line(end, "stdout", fmt.Sprintf("work done after %v, exiting with code %d", c.exitAfter, c.exitCode))
		case c.exitCode == 0:
			line(end, "stdout", "received SIGTERM, shutting down")
		default:
			line(end, "stderr", fmt.Sprintf("killed, exit code %d", c.exitCode))
		}
	}
	return b.Bytes()
}
