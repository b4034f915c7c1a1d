package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kstep-dev/kstep/cluster/images"
)

// The tests and benchmarks that start real nodes: root on Linux, with the
// binaries of make build (KSTEP_BIN's directory, or the repository's bin/).
// Each uses its own index so that their bridges and subnets are apart from
// the nodes a developer may be running on the same host.
const (
	testIndex  = 201
	benchIndex = 202
)

func testBinDir() string {
	if b := os.Getenv("KSTEP_BIN"); b != "" {
		return filepath.Dir(b)
	}
	abs, _ := filepath.Abs(filepath.Join("..", "..", "bin"))
	return abs
}

// realNode is one node started for a test, with CRI clients and kstep's
// registry.
type realNode struct {
	*Node
	dir  string
	reg  *images.Registry
	rt   runtimeapi.RuntimeServiceClient
	img  runtimeapi.ImageServiceClient
	conn *grpc.ClientConn
}

// startRealNode starts the registry and a node at index, or skips the test
// with the reason it cannot run here. Cleanup removes every pod, stops the
// node and the registry, and deletes the bridge.
func startRealNode(tb testing.TB, index int) *realNode {
	tb.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		tb.Skip("real nodes need root on Linux (make test runs as root in CI)")
	}
	bin := testBinDir()
	for _, b := range []string{containerdBinary, images.AppBinary} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			tb.Skipf("%s/%s missing: run make build", bin, b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	reg, err := images.Start(ctx, "127.0.0.1:0", bin)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { reg.Close() })

	// A short directory: containerd's socket path must fit in 107 bytes.
	dir, err := os.MkdirTemp("", "kstep-node-")
	if err != nil {
		tb.Fatal(err)
	}
	cfg := Config{Name: fmt.Sprintf("test-node-%d", index), Index: index, Dir: dir, BinDir: bin, Registry: reg.Addr()}
	log := slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	n, err := Start(ctx, cfg, WithLog(log))
	if err != nil {
		os.RemoveAll(dir)
		tb.Fatal(err)
	}
	conn, err := DialCRI(n.Endpoint())
	if err != nil {
		tb.Fatal(err)
	}
	rn := &realNode{Node: n, dir: dir, reg: reg, conn: conn,
		rt: runtimeapi.NewRuntimeServiceClient(conn), img: runtimeapi.NewImageServiceClient(conn)}
	tb.Cleanup(func() { rn.cleanup(tb) })
	return rn
}

// testWriter sends the node's log to the test's.
type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (rn *realNode) cleanup(tb testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if rn.ContainerdPID() != 0 {
		rn.removeAllPods(tb, ctx)
	}
	if err := rn.Stop(ctx); err != nil {
		tb.Errorf("stop node: %v", err)
	}
	rn.conn.Close()
	if failed := tb.Failed(); failed {
		if b, err := os.ReadFile(rn.Layout().ContainerdLog); err == nil && len(b) > 0 {
			if len(b) > 8192 {
				b = b[len(b)-8192:]
			}
			tb.Logf("end of containerd's log:\n%s", b)
		}
	}
	unmountUnder(tb, rn.dir)
	if err := os.RemoveAll(rn.dir); err != nil {
		tb.Errorf("remove node dir: %v", err)
	}
	_ = exec.Command("ip", "link", "delete", rn.Config().Bridge()).Run()
}

func (rn *realNode) removeAllPods(tb testing.TB, ctx context.Context) {
	list, err := rn.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		tb.Errorf("list pods: %v", err)
		return
	}
	for _, sb := range list.Items {
		if _, err := rn.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			tb.Errorf("stop pod %s: %v", sb.Id, err)
		}
		if _, err := rn.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			tb.Errorf("remove pod %s: %v", sb.Id, err)
		}
	}
}

// unmountUnder detaches whatever a failed test left mounted under dir
// (sandbox shm, netns, rootfs), deepest first, so the directory can go.
func unmountUnder(tb testing.TB, dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			points = append(points, fields[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			tb.Logf("unmount %s: %v", p, err)
		}
	}
}

// pod is one sandbox with one kstep-app container.
type pod struct {
	sandboxID, containerID string
	ip                     netip.Addr
}

func sandboxConfig(name, logDir string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Uid: "uid-" + name, Namespace: "default"},
		Hostname:     name,
		LogDirectory: filepath.Join(logDir, name),
		Labels:       map[string]string{"app": "kstep-app"},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD},
				Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
			},
		},
	}
}

func appContainerConfig(image string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Envs:     []*runtimeapi.KeyValue{{Key: "START_DELAY", Value: []byte("0s")}},
		LogPath:  "app/0.log",
		Linux: &runtimeapi.LinuxContainerConfig{
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD},
				Seccomp:          &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault},
			},
		},
	}
}

// httpGet fetches url from the host, retrying until it answers 200 or
// timeout passes.
func httpGet(url string, timeout time.Duration) (string, error) {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return string(body), nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("GET %s: %w", url, last)
}

// containerPID reads the container's init PID from the verbose status.
func containerPID(ctx context.Context, rt runtimeapi.RuntimeServiceClient, id string) (int, error) {
	st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		return 0, err
	}
	var info struct{ Pid int }
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil {
		return 0, fmt.Errorf("container %s verbose info: %w", id, err)
	}
	return info.Pid, nil
}

// seccompMode is the Seccomp field of /proc/<pid>/status: 2 means a filter.
func seccompMode(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no Seccomp line in /proc/%d/status", pid)
}

// bridgePorts lists the interfaces attached to the node's bridge: one veth
// per running pod.
func bridgePorts(bridge string) []string {
	entries, _ := os.ReadDir(filepath.Join("/sys/class/net", bridge, "brif"))
	var ports []string
	for _, e := range entries {
		ports = append(ports, e.Name())
	}
	return ports
}
