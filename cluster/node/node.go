package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Kubelet is how a node runs its kubelet: the kstep binary's kubelet
// command, told where the runtime is, which node it is, and where the
// node's own files go (so that nodes sharing a host share nothing):
//
//	<Binary> kubelet --container-runtime-endpoint unix://<socket> --node-name <name>
//	    --pod-cidr 10.88.<index>.0/24 --root-dir <dir>/kubelet --pod-logs-dir <dir>/pods
//	    [--kubeconfig <Kubeconfig>] <Args...>
//
// Args come last, so they override the others.
type Kubelet struct {
	Binary     string // the kstep binary
	Kubeconfig string // empty: not passed
	Args       []string
}

// Option changes how Start runs a node.
type Option func(*options)

type options struct {
	kubelet       *Kubelet
	log           *slog.Logger
	containerdOut *os.File
	kubeletOut    *os.File
	readyTimeout  time.Duration
}

// WithKubelet runs the kubelet once containerd answers CRI. Without it the
// node is containerd alone.
func WithKubelet(k Kubelet) Option { return func(o *options) { o.kubelet = &k } }

// WithLog is where the node says what it does (starts, restarts, stops).
// The default discards it.
func WithLog(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithContainerdOutput sends containerd's stdout and stderr to f (os.Stdout,
// say) instead of Layout.ContainerdLog. The node does not close f.
func WithContainerdOutput(f *os.File) Option { return func(o *options) { o.containerdOut = f } }

// WithKubeletOutput sends the kubelet's stdout and stderr to f; the default
// is this process's stderr. The node does not close f.
func WithKubeletOutput(f *os.File) Option { return func(o *options) { o.kubeletOut = f } }

// WithReadyTimeout bounds how long Start waits for containerd's CRI to
// answer (default 60 s).
func WithReadyTimeout(d time.Duration) Option { return func(o *options) { o.readyTimeout = d } }

// Node is one running real node: containerd, supervised, and optionally its
// kubelet. Containerd or the kubelet that exits is started again (after
// 100 ms, backing off to 10 s while it keeps crashing) until Stop.
type Node struct {
	cfg        Config
	layout     Layout
	log        *slog.Logger
	containerd *supervised
	kubelet    *supervised // nil: no kubelet
	logFile    *os.File    // ours to close, if containerd logs to Layout.ContainerdLog
	conn       *grpc.ClientConn
	stopped    chan struct{} // closed by Stop: restarted hooks give up
}

// Start writes the node's configuration (WriteConfig), starts containerd
// and returns once containerd answers CRI's Version; then it starts the
// kubelet, if WithKubelet. If containerd exits before it answers, Start
// fails with the end of containerd's log. ctx bounds only the start.
func Start(ctx context.Context, c Config, opts ...Option) (*Node, error) {
	o := options{log: slog.New(slog.DiscardHandler), kubeletOut: os.Stderr, readyTimeout: time.Minute}
	for _, opt := range opts {
		opt(&o)
	}
	c, l, err := WriteConfig(c)
	if err != nil {
		return nil, err
	}
	if err := checkBinaries(c.BinDir); err != nil {
		return nil, err
	}
	n := &Node{cfg: c, layout: l, log: o.log.With("node", c.Name), stopped: make(chan struct{})}
	out := o.containerdOut
	if out == nil {
		if n.logFile, err = os.OpenFile(l.ContainerdLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
			return nil, err
		}
		out = n.logFile
	}
	if n.conn, err = DialCRI(l.Endpoint()); err != nil {
		n.closeFiles()
		return nil, err
	}

	env := childEnv(c.BinDir)
	n.containerd = newSupervised("containerd",
		[]string{filepath.Join(c.BinDir, containerdBinary), "--config", l.ContainerdConfig}, env, out, n.log)
	n.containerd.restarted = n.containerdRestarted
	began := time.Now()
	if err := n.containerd.start(); err != nil {
		n.closeFiles()
		return nil, err
	}
	pid, exited := n.containerd.current()
	n.log.Info("containerd started", "pid", pid, "config", l.ContainerdConfig, "snapshotter", c.Snapshotter)

	rctx, cancel := context.WithTimeout(ctx, o.readyTimeout)
	defer cancel()
	go func() {
		select {
		case <-exited:
			cancel()
		case <-rctx.Done():
		}
	}()
	v, err := WaitCRI(rctx, n.conn)
	if err != nil {
		select {
		case <-exited:
			err = fmt.Errorf("containerd exited before its CRI answered%s", n.logTail())
		default:
		}
		_ = n.Stop(context.Background())
		return nil, fmt.Errorf("node %s: %w", c.Name, err)
	}
	n.log.Info("containerd ready", "pid", pid, "endpoint", l.Endpoint(),
		"runtime", v.RuntimeName+" "+v.RuntimeVersion, "after", time.Since(began).Round(time.Millisecond))

	if k := o.kubelet; k != nil {
		argv := k.argv(c, l)
		n.kubelet = newSupervised("kubelet", argv, os.Environ(), o.kubeletOut, n.log)
		if err := n.kubelet.start(); err != nil {
			_ = n.Stop(context.Background())
			return nil, fmt.Errorf("node %s: %w", c.Name, err)
		}
		kpid, _ := n.kubelet.current()
		n.log.Info("kubelet started", "pid", kpid, "argv", strings.Join(argv, " "))
	}
	return n, nil
}

// argv is the kubelet's command line for node c at l.
func (k Kubelet) argv(c Config, l Layout) []string {
	argv := []string{k.Binary, "kubelet", "--container-runtime-endpoint", l.Endpoint(), "--node-name", c.Name,
		"--pod-cidr", c.PodCIDR().String(), "--root-dir", l.KubeletDir, "--pod-logs-dir", l.PodLogsDir}
	if k.Kubeconfig != "" {
		argv = append(argv, "--kubeconfig", k.Kubeconfig)
	}
	return append(argv, k.Args...)
}

// containerdRestarted logs when a restarted containerd answers CRI again.
func (n *Node) containerdRestarted(pid int) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		select {
		case <-n.stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	if _, err := WaitCRI(ctx, n.conn); err != nil {
		select {
		case <-n.stopped:
		default:
			n.log.Warn("restarted containerd does not answer CRI", "pid", pid, "err", err)
		}
		return
	}
	n.log.Info("containerd ready again", "pid", pid, "after", time.Since(began).Round(time.Millisecond))
}

// Config is the node's configuration, with the snapshotter chosen.
func (n *Node) Config() Config { return n.cfg }

// Layout is where the node's files are.
func (n *Node) Layout() Layout { return n.layout }

// Endpoint is containerd's CRI endpoint, unix://<socket>.
func (n *Node) Endpoint() string { return n.layout.Endpoint() }

// ContainerdPID is containerd's PID, or 0 while it is being restarted.
func (n *Node) ContainerdPID() int {
	pid, _ := n.containerd.current()
	return pid
}

// KubeletPID is the kubelet's PID, or 0 while it is being restarted or when
// the node runs none.
func (n *Node) KubeletPID() int {
	if n.kubelet == nil {
		return 0
	}
	pid, _ := n.kubelet.current()
	return pid
}

// stopGrace is how long each program gets between SIGTERM and SIGKILL.
const stopGrace = 10 * time.Second

// Stop stops the kubelet, then containerd: SIGTERM, and SIGKILL after 10 s
// or when ctx ends. Containers keep running: their shims outlive
// containerd, as upstream, and a containerd started again on the same
// directory finds them.
func (n *Node) Stop(ctx context.Context) error {
	select {
	case <-n.stopped:
		return nil
	default:
		close(n.stopped)
	}
	var errs []error
	if n.kubelet != nil {
		errs = append(errs, n.kubelet.stop(ctx, stopGrace))
		n.log.Info("kubelet stopped")
	}
	errs = append(errs, n.containerd.stop(ctx, stopGrace))
	n.log.Info("containerd stopped")
	n.closeFiles()
	return errors.Join(errs...)
}

// Shutdown is the node's machine going down: the kubelet stops, then every
// pod is stopped and removed through CRI (the kubelet must not restart them
// meanwhile), then containerd stops. Unlike Stop, nothing outlives it: no
// shim, no container, no network namespace. A pod that cannot be removed
// before ctx ends is reported in the error.
func (n *Node) Shutdown(ctx context.Context) error {
	var errs []error
	if n.kubelet != nil {
		errs = append(errs, n.kubelet.stop(ctx, stopGrace))
	}
	errs = append(errs, n.RemovePods(ctx))
	errs = append(errs, n.Stop(ctx))
	return errors.Join(errs...)
}

// RemovePods stops and removes every pod sandbox (and with it its
// containers) on the node's containerd.
func (n *Node) RemovePods(ctx context.Context) error {
	rt := runtimeapi.NewRuntimeServiceClient(n.conn)
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("node %s: list pods: %w", n.cfg.Name, err)
	}
	var errs []error
	for _, sb := range list.GetItems() {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stop pod %s/%s: %w", sb.GetMetadata().GetNamespace(), sb.GetMetadata().GetName(), err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("remove pod %s/%s: %w", sb.GetMetadata().GetNamespace(), sb.GetMetadata().GetName(), err))
		}
	}
	n.log.Info("pods removed", "pods", len(list.GetItems()), "failed", len(errs))
	return errors.Join(errs...)
}

func (n *Node) closeFiles() {
	if n.conn != nil {
		n.conn.Close()
	}
	if n.logFile != nil {
		n.logFile.Close()
	}
}

// logTail is the end of containerd's log, to explain a failed start.
func (n *Node) logTail() string {
	if n.logFile == nil {
		return ""
	}
	f, err := os.Open(n.layout.ContainerdLog)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 2048
	if st, err := f.Stat(); err == nil && st.Size() > tail {
		_, _ = f.Seek(-tail, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return fmt.Sprintf("; the end of %s:\n%s", n.layout.ContainerdLog, b)
}

// checkBinaries says which of the node's programs are missing from binDir.
func checkBinaries(binDir string) error {
	var missing []string
	for _, b := range append([]string{containerdBinary, shimBinary, runcBinary}, cniPlugins...) {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s: run make node-bins", binDir, strings.Join(missing, ", "))
	}
	return nil
}

// childEnv is this process's environment with binDir first on PATH (the CNI
// plugins and runc are found there) and the sbin directories present
// (the bridge plugin runs iptables).
func childEnv(binDir string) []string {
	env := os.Environ()
	path := os.Getenv("PATH")
	parts := []string{binDir}
	for _, p := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		if !strings.Contains(":"+path+":", ":"+p+":") {
			path += ":" + p
		}
	}
	parts = append(parts, strings.TrimPrefix(path, ":"))
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "PATH="+strings.Join(parts, ":"))
}
