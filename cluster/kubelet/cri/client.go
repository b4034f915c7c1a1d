package cri

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Client is the kubelet's view of a container runtime: the CRI calls it
// makes, each timed (kstep_kubelet_cri_duration_seconds) and bounded by a
// timeout. It is built on the generated gRPC client interfaces, so the same
// code drives containerd over a unix socket and simruntime in process.
// Safe for concurrent use.
type Client struct {
	rs      runtimeapi.RuntimeServiceClient
	is      runtimeapi.ImageServiceClient
	timeout time.Duration
	close   func() error
}

// DefaultTimeout bounds every call but PullImage (upstream's
// --runtime-request-timeout).
const DefaultTimeout = 2 * time.Minute

// New wraps runtime and image service clients.
func New(rs runtimeapi.RuntimeServiceClient, is runtimeapi.ImageServiceClient) *Client {
	return &Client{rs: rs, is: is, timeout: DefaultTimeout, close: func() error { return nil }}
}

// Dial connects to a CRI endpoint, "unix:///run/containerd/containerd.sock"
// (a bare path is taken as a unix socket). The connection is lazy: the
// first call, usually Version, finds out whether the runtime answers.
func Dial(endpoint string) (*Client, error) {
	target := endpoint
	if strings.HasPrefix(target, "/") {
		target = "unix://" + target
	}
	if !strings.HasPrefix(target, "unix://") {
		return nil, fmt.Errorf("container runtime endpoint %q: only unix sockets are supported", endpoint)
	}
	conn, err := grpc.NewClient(target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)))
	if err != nil {
		return nil, fmt.Errorf("container runtime endpoint %q: %w", endpoint, err)
	}
	c := New(runtimeapi.NewRuntimeServiceClient(conn), runtimeapi.NewImageServiceClient(conn))
	c.close = conn.Close
	return c, nil
}

// Close releases the connection.
func (c *Client) Close() error { return c.close() }

var callDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "kstep_kubelet_cri_duration_seconds",
	Help:    "Latency of the kubelet's CRI calls by method and gRPC code.",
	Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18),
}, []string{"method", "code"})

func init() { prometheus.MustRegister(callDuration) }

// call runs one CRI call with the client's timeout (none when timeout is
// zero beyond ctx) and records its latency.
func call[Resp any](ctx context.Context, c *Client, method string, timeout time.Duration, fn func(context.Context) (Resp, error)) (Resp, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	start := time.Now()
	resp, err := fn(ctx)
	callDuration.WithLabelValues(method, status.Code(err).String()).Observe(time.Since(start).Seconds())
	if err != nil {
		return resp, fmt.Errorf("%s: %w", method, err)
	}
	return resp, nil
}

// Version reports the runtime's name and version.
func (c *Client) Version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	return call(ctx, c, "Version", c.timeout, func(ctx context.Context) (*runtimeapi.VersionResponse, error) {
		return c.rs.Version(ctx, &runtimeapi.VersionRequest{Version: "v1"})
	})
}

// Status reports the runtime's conditions (RuntimeReady, NetworkReady).
func (c *Client) Status(ctx context.Context) (*runtimeapi.RuntimeStatus, error) {
	r, err := call(ctx, c, "Status", c.timeout, func(ctx context.Context) (*runtimeapi.StatusResponse, error) {
		return c.rs.Status(ctx, &runtimeapi.StatusRequest{})
	})
	if err != nil {
		return nil, err
	}
	return r.GetStatus(), nil
}

// RunPodSandbox creates and starts a sandbox and returns its id.
func (c *Client) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, handler string) (string, error) {
	r, err := call(ctx, c, "RunPodSandbox", c.timeout, func(ctx context.Context) (*runtimeapi.RunPodSandboxResponse, error) {
		return c.rs.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg, RuntimeHandler: handler})
	})
	if err != nil {
		return "", err
	}
	return r.GetPodSandboxId(), nil
}

// PodSandboxStatus returns a sandbox's state and network.
func (c *Client) PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatus, error) {
	r, err := call(ctx, c, "PodSandboxStatus", c.timeout, func(ctx context.Context) (*runtimeapi.PodSandboxStatusResponse, error) {
		return c.rs.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	})
	if err != nil {
		return nil, err
	}
	return r.GetStatus(), nil
}

// StopPodSandbox stops a sandbox's containers and releases its network.
func (c *Client) StopPodSandbox(ctx context.Context, id string) error {
	_, err := call(ctx, c, "StopPodSandbox", c.timeout, func(ctx context.Context) (*runtimeapi.StopPodSandboxResponse, error) {
		return c.rs.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
	})
	return err
}

// RemovePodSandbox removes a sandbox and its containers.
func (c *Client) RemovePodSandbox(ctx context.Context, id string) error {
	_, err := call(ctx, c, "RemovePodSandbox", c.timeout, func(ctx context.Context) (*runtimeapi.RemovePodSandboxResponse, error) {
		return c.rs.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	})
	return err
}

// ListPodSandbox lists the sandboxes carrying every label in labels.
func (c *Client) ListPodSandbox(ctx context.Context, labels map[string]string) ([]*runtimeapi.PodSandbox, error) {
	r, err := call(ctx, c, "ListPodSandbox", c.timeout, func(ctx context.Context) (*runtimeapi.ListPodSandboxResponse, error) {
		return c.rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: labels}})
	})
	if err != nil {
		return nil, err
	}
	return r.GetItems(), nil
}

// CreateContainer creates a container in a sandbox and returns its id.
func (c *Client) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sandbox *runtimeapi.PodSandboxConfig) (string, error) {
	r, err := call(ctx, c, "CreateContainer", c.timeout, func(ctx context.Context) (*runtimeapi.CreateContainerResponse, error) {
		return c.rs.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: cfg, SandboxConfig: sandbox})
	})
	if err != nil {
		return "", err
	}
	return r.GetContainerId(), nil
}

// StartContainer starts a created container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	_, err := call(ctx, c, "StartContainer", c.timeout, func(ctx context.Context) (*runtimeapi.StartContainerResponse, error) {
		return c.rs.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	})
	return err
}

// StopContainer stops a container, killing it after grace seconds.
func (c *Client) StopContainer(ctx context.Context, id string, grace int64) error {
	// The call itself may take the whole grace period.
	_, err := call(ctx, c, "StopContainer", c.timeout+time.Duration(grace)*time.Second, func(ctx context.Context) (*runtimeapi.StopContainerResponse, error) {
		return c.rs.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: grace})
	})
	return err
}

// RemoveContainer removes a container.
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	_, err := call(ctx, c, "RemoveContainer", c.timeout, func(ctx context.Context) (*runtimeapi.RemoveContainerResponse, error) {
		return c.rs.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
	})
	return err
}

// ListContainers lists the containers carrying every label in labels.
func (c *Client) ListContainers(ctx context.Context, labels map[string]string) ([]*runtimeapi.Container, error) {
	r, err := call(ctx, c, "ListContainers", c.timeout, func(ctx context.Context) (*runtimeapi.ListContainersResponse, error) {
		return c.rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: labels}})
	})
	if err != nil {
		return nil, err
	}
	return r.GetContainers(), nil
}

// ContainerStatus returns a container's state, exit code and times.
func (c *Client) ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	r, err := call(ctx, c, "ContainerStatus", c.timeout, func(ctx context.Context) (*runtimeapi.ContainerStatusResponse, error) {
		return c.rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	})
	if err != nil {
		return nil, err
	}
	return r.GetStatus(), nil
}

// ExecSync runs cmd in a container and waits up to timeout for it.
func (c *Client) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	return call(ctx, c, "ExecSync", c.timeout+timeout, func(ctx context.Context) (*runtimeapi.ExecSyncResponse, error) {
		return c.rs.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: int64(timeout.Seconds())})
	})
}

// ImageStatus returns the image, or nil when the runtime does not have it.
func (c *Client) ImageStatus(ctx context.Context, image string) (*runtimeapi.Image, error) {
	r, err := call(ctx, c, "ImageStatus", c.timeout, func(ctx context.Context) (*runtimeapi.ImageStatusResponse, error) {
		return c.is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	})
	if err != nil {
		return nil, err
	}
	return r.GetImage(), nil
}

// PullImage pulls an image and returns its reference (digest). It has no
// timeout of its own: a large image takes what it takes, and ctx bounds it.
func (c *Client) PullImage(ctx context.Context, image string, sandbox *runtimeapi.PodSandboxConfig) (string, error) {
	r, err := call(ctx, c, "PullImage", 0, func(ctx context.Context) (*runtimeapi.PullImageResponse, error) {
		return c.is.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: image}, SandboxConfig: sandbox})
	})
	if err != nil {
		return "", err
	}
	return r.GetImageRef(), nil
}

// Exec prepares a streaming exec in a container and returns the URL on the
// runtime's stream server that serves it (the kubelet's server proxies the
// caller's upgraded connection there).
func (c *Client) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (string, error) {
	r, err := call(ctx, c, "Exec", c.timeout, func(ctx context.Context) (*runtimeapi.ExecResponse, error) {
		return c.rs.Exec(ctx, req)
	})
	if err != nil {
		return "", err
	}
	return r.GetUrl(), nil
}

// Attach prepares a streaming attach to a container's main process and
// returns the URL that serves it.
func (c *Client) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (string, error) {
	r, err := call(ctx, c, "Attach", c.timeout, func(ctx context.Context) (*runtimeapi.AttachResponse, error) {
		return c.rs.Attach(ctx, req)
	})
	if err != nil {
		return "", err
	}
	return r.GetUrl(), nil
}

// PortForward prepares port forwarding into a sandbox's network namespace
// and returns the URL that serves it.
func (c *Client) PortForward(ctx context.Context, sandboxID string, ports []int32) (string, error) {
	r, err := call(ctx, c, "PortForward", c.timeout, func(ctx context.Context) (*runtimeapi.PortForwardResponse, error) {
		return c.rs.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: sandboxID, Port: ports})
	})
	if err != nil {
		return "", err
	}
	return r.GetUrl(), nil
}

// ListContainerStats returns the cpu and memory usage of the containers
// carrying every label in labels.
func (c *Client) ListContainerStats(ctx context.Context, labels map[string]string) ([]*runtimeapi.ContainerStats, error) {
	r, err := call(ctx, c, "ListContainerStats", c.timeout, func(ctx context.Context) (*runtimeapi.ListContainerStatsResponse, error) {
		return c.rs.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{LabelSelector: labels}})
	})
	if err != nil {
		return nil, err
	}
	return r.GetStats(), nil
}

// ListPodSandboxStats returns the usage of the sandboxes carrying every
// label in labels, with their containers'.
func (c *Client) ListPodSandboxStats(ctx context.Context, labels map[string]string) ([]*runtimeapi.PodSandboxStats, error) {
	r, err := call(ctx, c, "ListPodSandboxStats", c.timeout, func(ctx context.Context) (*runtimeapi.ListPodSandboxStatsResponse, error) {
		return c.rs.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{Filter: &runtimeapi.PodSandboxStatsFilter{LabelSelector: labels}})
	})
	if err != nil {
		return nil, err
	}
	return r.GetStats(), nil
}
