package simruntime

import (
	"context"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	batchv1 "k8s.io/api/batch/v1"
	"maps"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/kstep-dev/kstep/cluster/kubelet/prober"
)

// RuntimeName is what Version reports; container IDs in pod status read
// "kstep-sim://<id>".
const RuntimeName = "kstep-sim"

// Runtime is one hollow node's container runtime: CRI's RuntimeService and
// ImageService implemented in memory, with modeled latency and injected
// failures. Nothing runs: a "started" container is a record with a start
// time, its probes pass once its modeled start-up delay is over, and its
// pod IP comes from the node's range and is never dialled (Runtime is also
// the node's prober.Network). Safe for concurrent use.
type Runtime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	cfg   Config
	clock clock.Clock
	node  string

	rmu sync.Mutex // guards rng
	rng *rand.Rand

	mu         sync.Mutex
	sandboxes  map[string]*sandbox
	containers map[string]*container
	images     map[string]string // image name -> ref
	ips        *ipam
	calls      map[string]int
}

type sandbox struct {
	id          string
	meta        sandboxMeta
	labels      map[string]string
	annotations map[string]string
	state       runtimeapi.PodSandboxState
	createdAt   int64
	ip          netip.Addr
	containers  []string
	logDir      string  // the config's LogDirectory: containers' log paths are under it
	ports       []int32 // container ports, for the simulated log
}

type sandboxMeta struct {
	Name, Namespace, Uid string //nolint:revive // CRI's spelling
	Attempt              uint32
}

type container struct {
	id, sandboxID string
	name          string
	attempt       uint32
	image, ref    string
	labels        map[string]string
	annotations   map[string]string
	logPath       string
	state         runtimeapi.ContainerState
	createdAt     int64
	startedAt     int64
	finishedAt    int64
	exitCode      int32
	reason        string

	// the modeled application
	startDelay     time.Duration // probes pass this long after start
	exitAfter      time.Duration // SIM_EXIT_AFTER: exits by itself
	exitWith       int32         // SIM_EXIT_CODE
	unhealthyAfter time.Duration // SIM_UNHEALTHY_AFTER: probes fail from then on
	cpuShares      int64         // from the cpu request: what its simulated usage follows
	cpuQuota       int64         // from the cpu limit (per 100 ms period), 0 for none
	memLimit       int64         // bytes, 0 for none
}

var (
	_ runtimeapi.RuntimeServiceServer = (*Runtime)(nil)
	_ runtimeapi.ImageServiceServer   = (*Runtime)(nil)
	_ prober.Network                  = (*Runtime)(nil)
)

// New returns a runtime for the node named node whose pods get IPs from
// podCIDR (the first host address is the node's own).
func New(node string, podCIDR netip.Prefix, cfg Config, clk clock.Clock) (*Runtime, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ips, err := newIPAM(podCIDR)
	if err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(node))
	return &Runtime{cfg: cfg, clock: clk, node: node, rng: rand.New(rand.NewPCG(cfg.Seed, h.Sum64())),
		sandboxes: map[string]*sandbox{}, containers: map[string]*container{}, images: map[string]string{},
		ips: ips, calls: map[string]int{}}, nil
}

// NodeIP is the node's own address: the first host address of its range.
func (r *Runtime) NodeIP() netip.Addr { return r.ips.gateway }

// Calls returns how many times each method was called.
func (r *Runtime) Calls() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.calls)
}

// Sandboxes counts sandboxes by state (READY, NOTREADY) — what a test asks
// to prove a pod never got two.
func (r *Runtime) Sandboxes() (ready, notReady int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sandboxes {
		if s.state == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		} else {
			notReady++
		}
	}
	return ready, notReady
}

// enter models one call: it counts it, waits its latency and decides
// whether it fails.
func (r *Runtime) enter(ctx context.Context, method string) error {
	r.mu.Lock()
	r.calls[method]++
	r.mu.Unlock()
	m, ok := r.cfg.Latency[method]
	if !ok {
		m = r.cfg.Latency["*"]
	}
	f, ok := r.cfg.Failures[method]
	if !ok {
		f = r.cfg.Failures["*"]
	}
	if m.Dist == "" && f == 0 {
		return nil
	}
	r.rmu.Lock()
	d := m.Sample(r.rng)
	fail := f > 0 && r.rng.Float64() < f
	r.rmu.Unlock()
	if d > 0 {
		t := r.clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return status.FromContextError(ctx.Err()).Err()
		case <-t.C():
		}
	}
	if fail {
		return status.Errorf(codes.Unavailable, "simruntime: injected %s failure", method)
	}
	return nil
}

func (r *Runtime) sample(m Model) time.Duration {
	r.rmu.Lock()
	defer r.rmu.Unlock()
	return m.Sample(r.rng)
}

func (r *Runtime) newID() string {
	r.rmu.Lock()
	a, b := r.rng.Uint64(), r.rng.Uint64()
	r.rmu.Unlock()
	var buf [16]byte
	for i := 0; i < 8; i++ {
		buf[i], buf[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
	}
	return hex.EncodeToString(buf[:])
}

func notFound(kind, id string) error {
	return status.Errorf(codes.NotFound, "%s %q not found", kind, id)
}

// Version implements RuntimeService.
func (r *Runtime) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if err := r.enter(ctx, "Version"); err != nil {
		return nil, err
	}
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: RuntimeName, RuntimeVersion: "v1", RuntimeApiVersion: "v1"}, nil
}

// Status implements RuntimeService: the runtime and its network are ready.
func (r *Runtime) Status(ctx context.Context, _ *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	if err := r.enter(ctx, "Status"); err != nil {
		return nil, err
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true}, {Type: runtimeapi.NetworkReady, Status: true}}}}, nil
}

// RunPodSandbox implements RuntimeService. Like containerd, it refuses a
// second sandbox with the same name, namespace, uid and attempt.
func (r *Runtime) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	if err := r.enter(ctx, "RunPodSandbox"); err != nil {
		return nil, err
	}
	md := req.GetConfig().GetMetadata()
	if md == nil || md.Uid == "" {
		return nil, status.Error(codes.InvalidArgument, "sandbox config has no metadata")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.sandboxes {
		if s.meta.Uid == md.Uid && s.meta.Name == md.Name && s.meta.Namespace == md.Namespace && s.meta.Attempt == md.Attempt {
			return nil, status.Errorf(codes.AlreadyExists, "sandbox name %s_%s_%s_%d is reserved for %s", md.Name, md.Namespace, md.Uid, md.Attempt, s.id)
		}
	}
	ip, err := r.ips.allocate()
	if err != nil {
		return nil, status.Error(codes.ResourceExhausted, err.Error())
	}
	s := &sandbox{id: r.newID(), meta: sandboxMeta{Name: md.Name, Namespace: md.Namespace, Uid: md.Uid, Attempt: md.Attempt},
		labels: maps.Clone(req.Config.Labels), annotations: maps.Clone(req.Config.Annotations),
		state: runtimeapi.PodSandboxState_SANDBOX_READY, createdAt: r.clock.Now().UnixNano(), ip: ip,
		logDir: req.Config.LogDirectory}
	for _, pm := range req.Config.PortMappings {
		s.ports = append(s.ports, pm.ContainerPort)
	}
	r.sandboxes[s.id] = s
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: s.id}, nil
}

// StopPodSandbox implements RuntimeService: it kills the sandbox's running
// containers and releases its IP. Idempotent.
func (r *Runtime) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	if err := r.enter(ctx, "StopPodSandbox"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.PodSandboxId]
	if !ok {
		return &runtimeapi.StopPodSandboxResponse{}, nil
	}
	now := r.clock.Now().UnixNano()
	for _, id := range s.containers {
		if c := r.containers[id]; c != nil {
			r.refresh(c)
			if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
				c.exit(now, 137, "Error")
			}
		}
	}
	if s.state == runtimeapi.PodSandboxState_SANDBOX_READY {
		s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		r.ips.release(s.ip)
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox implements RuntimeService. Idempotent.
func (r *Runtime) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	if err := r.enter(ctx, "RemovePodSandbox"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.PodSandboxId]
	if !ok {
		return &runtimeapi.RemovePodSandboxResponse{}, nil
	}
	for _, id := range s.containers {
		delete(r.containers, id)
	}
	if s.state == runtimeapi.PodSandboxState_SANDBOX_READY {
		r.ips.release(s.ip)
	}
	delete(r.sandboxes, s.id)
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (s *sandbox) metadata() *runtimeapi.PodSandboxMetadata {
	return &runtimeapi.PodSandboxMetadata{Name: s.meta.Name, Namespace: s.meta.Namespace, Uid: s.meta.Uid, Attempt: s.meta.Attempt}
}

// PodSandboxStatus implements RuntimeService.
func (r *Runtime) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	if err := r.enter(ctx, "PodSandboxStatus"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.PodSandboxId]
	if !ok {
		return nil, notFound("sandbox", req.PodSandboxId)
	}
	st := &runtimeapi.PodSandboxStatus{Id: s.id, Metadata: s.metadata(), State: s.state, CreatedAt: s.createdAt,
		Labels: s.labels, Annotations: s.annotations}
	if s.state == runtimeapi.PodSandboxState_SANDBOX_READY {
		st.Network = &runtimeapi.PodSandboxNetworkStatus{Ip: s.ip.String()}
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: st}, nil
}

func matchLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// ListPodSandbox implements RuntimeService.
func (r *Runtime) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	if err := r.enter(ctx, "ListPodSandbox"); err != nil {
		return nil, err
	}
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*runtimeapi.PodSandbox, 0, len(r.sandboxes))
	for _, s := range r.sandboxes {
		if f != nil && (f.Id != "" && f.Id != s.id || f.State != nil && f.State.State != s.state || !matchLabels(s.labels, f.LabelSelector)) {
			continue
		}
		out = append(out, &runtimeapi.PodSandbox{Id: s.id, Metadata: s.metadata(), State: s.state, CreatedAt: s.createdAt,
			Labels: s.labels, Annotations: s.annotations})
	}
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

// envDuration reads a duration from a container's environment: "2s", or a
// bare number of seconds as the workload image accepts.
func envDuration(env map[string]string, key string) (time.Duration, bool) {
	v, ok := env[key]
	if !ok {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d, true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(f * float64(time.Second)), true
	}
	return 0, false
}

// CreateContainer implements RuntimeService. The image must have been
// pulled, as with containerd. The container's environment sets its
// modeled behaviour (see the package doc).
func (r *Runtime) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	if err := r.enter(ctx, "CreateContainer"); err != nil {
		return nil, err
	}
	cfg := req.GetConfig()
	if cfg.GetMetadata() == nil || cfg.GetImage() == nil {
		return nil, status.Error(codes.InvalidArgument, "container config has no metadata or image")
	}
	env := make(map[string]string, len(cfg.Envs))
	for _, kv := range cfg.Envs {
		env[kv.Key] = string(kv.Value)
	}
	c := &container{name: cfg.Metadata.Name, attempt: cfg.Metadata.Attempt, image: cfg.Image.Image,
		labels: maps.Clone(cfg.Labels), annotations: maps.Clone(cfg.Annotations), logPath: cfg.LogPath,
		state: runtimeapi.ContainerState_CONTAINER_CREATED}
	if d, ok := envDuration(env, "START_DELAY"); ok {
		c.startDelay = d
	} else {
		c.startDelay = -1 // drawn at start
	}
	if d, ok := envDuration(env, "SIM_EXIT_AFTER"); ok {
		c.exitAfter = d
	} else if jobPod(req.GetSandboxConfig().GetLabels()) {
		c.exitAfter = -1 // a Job's work: its length drawn at start
	}
	c.unhealthyAfter, _ = envDuration(env, "SIM_UNHEALTHY_AFTER")
	if v, err := strconv.Atoi(env["SIM_EXIT_CODE"]); err == nil {
		c.exitWith = int32(v)
	}
	if res := cfg.GetLinux().GetResources(); res != nil {
		c.cpuShares, c.cpuQuota, c.memLimit = res.CpuShares, res.CpuQuota, res.MemoryLimitInBytes
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.PodSandboxId]
	if !ok {
		return nil, notFound("sandbox", req.PodSandboxId)
	}
	if s.state != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "sandbox %s is not ready", s.id)
	}
	ref, ok := r.images[c.image]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "image %q not found", c.image)
	}
	for _, id := range s.containers {
		if o := r.containers[id]; o != nil && o.name == c.name && o.attempt == c.attempt {
			return nil, status.Errorf(codes.AlreadyExists, "container name %s attempt %d is reserved for %s", c.name, c.attempt, o.id)
		}
	}
	c.id, c.sandboxID, c.ref, c.createdAt = r.newID(), s.id, ref, r.clock.Now().UnixNano()
	if c.logPath != "" && s.logDir != "" {
		// As containerd: the status reports the full path.
		c.logPath = filepath.Join(s.logDir, c.logPath)
	}
	r.containers[c.id] = c
	s.containers = append(s.containers, c.id)
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// StartContainer implements RuntimeService.
func (r *Runtime) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	if err := r.enter(ctx, "StartContainer"); err != nil {
		return nil, err
	}
	delay, work := r.sample(r.cfg.StartDelay), r.sample(r.cfg.JobDuration)
	if r.cfg.JobDuration.Dist == "" {
		work = DefaultJobDuration
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %s is %s, not created", c.id, c.state)
	}
	c.state, c.startedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, r.clock.Now().UnixNano()
	if c.startDelay < 0 {
		c.startDelay = delay
	}
	if c.exitAfter < 0 {
		c.exitAfter = max(work, time.Nanosecond)
	}
	return &runtimeapi.StartContainerResponse{}, nil
}

// DefaultJobDuration is how long a Job's container works when the
// Config's JobDuration is unset.
const DefaultJobDuration = 2 * time.Second

// jobPod reports whether a sandbox's labels (the pod's) are those the Job
// controller gives its pods.
func jobPod(l map[string]string) bool {
	_, ok := l[batchv1.JobNameLabel]
	if !ok {
		_, ok = l[batchv1.ControllerUidLabel]
	}
	return ok
}

func (c *container) exit(at int64, code int32, reason string) {
	c.state, c.finishedAt, c.exitCode, c.reason = runtimeapi.ContainerState_CONTAINER_EXITED, at, code, reason
}

// refresh applies a modeled exit that is due. Callers hold r.mu.
func (r *Runtime) refresh(c *container) {
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING || c.exitAfter <= 0 {
		return
	}
	at := c.startedAt + int64(c.exitAfter)
	if r.clock.Now().UnixNano() < at {
		return
	}
	reason := "Completed"
	if c.exitWith != 0 {
		reason = "Error"
	}
	c.exit(at, c.exitWith, reason)
}

// StopContainer implements RuntimeService: the modeled application exits
// on SIGTERM at once, with code 0. Idempotent.
func (r *Runtime) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	if err := r.enter(ctx, "StopContainer"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	r.refresh(c)
	switch c.state {
	case runtimeapi.ContainerState_CONTAINER_RUNNING, runtimeapi.ContainerState_CONTAINER_CREATED:
		c.exit(r.clock.Now().UnixNano(), 0, "Completed")
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer implements RuntimeService. Idempotent.
func (r *Runtime) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	if err := r.enter(ctx, "RemoveContainer"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.ContainerId]
	if !ok {
		return &runtimeapi.RemoveContainerResponse{}, nil
	}
	delete(r.containers, c.id)
	if s := r.sandboxes[c.sandboxID]; s != nil {
		for i, id := range s.containers {
			if id == c.id {
				s.containers = append(s.containers[:i], s.containers[i+1:]...)
				break
			}
		}
	}
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (r *Runtime) sandboxMeta(c *container) *runtimeapi.ContainerMetadata {
	return &runtimeapi.ContainerMetadata{Name: c.name, Attempt: c.attempt}
}

// ListContainers implements RuntimeService.
func (r *Runtime) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	if err := r.enter(ctx, "ListContainers"); err != nil {
		return nil, err
	}
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*runtimeapi.Container, 0, len(r.containers))
	for _, c := range r.containers {
		r.refresh(c)
		if f != nil && (f.Id != "" && f.Id != c.id || f.PodSandboxId != "" && f.PodSandboxId != c.sandboxID ||
			f.State != nil && f.State.State != c.state || !matchLabels(c.labels, f.LabelSelector)) {
			continue
		}
		out = append(out, &runtimeapi.Container{Id: c.id, PodSandboxId: c.sandboxID, Metadata: r.sandboxMeta(c),
			Image: &runtimeapi.ImageSpec{Image: c.image}, ImageRef: c.ref, ImageId: c.ref, State: c.state, CreatedAt: c.createdAt,
			Labels: c.labels, Annotations: c.annotations})
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

// ContainerStatus implements RuntimeService.
func (r *Runtime) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	if err := r.enter(ctx, "ContainerStatus"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	r.refresh(c)
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{
		Id: c.id, Metadata: r.sandboxMeta(c), State: c.state, CreatedAt: c.createdAt, StartedAt: c.startedAt,
		FinishedAt: c.finishedAt, ExitCode: c.exitCode, Reason: c.reason, Image: &runtimeapi.ImageSpec{Image: c.image},
		ImageRef: c.ref, ImageId: c.ref, Labels: c.labels, Annotations: c.annotations, LogPath: c.logPath}}, nil
}

// healthy reports whether the modeled application answers now, and why
// not. Callers hold r.mu.
func (r *Runtime) healthy(id string) (bool, string) {
	c, ok := r.containers[id]
	if !ok {
		return false, "container not found"
	}
	r.refresh(c)
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return false, "connection refused: container is not running"
	}
	now := r.clock.Now().UnixNano()
	if now < c.startedAt+int64(max(c.startDelay, 0)) {
		return false, "connection refused: application still starting"
	}
	if c.unhealthyAfter > 0 && now >= c.startedAt+int64(c.unhealthyAfter) {
		return false, "HTTP probe failed with statuscode: 500"
	}
	return true, ""
}

// ExecSync implements RuntimeService: "false" exits 1, "true" exits 0,
// anything else exits 0 while the modeled application is healthy.
func (r *Runtime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if err := r.enter(ctx, "ExecSync"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	r.refresh(c)
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %s is not running", c.id)
	}
	if len(req.Cmd) > 0 && req.Cmd[0] == "false" {
		return &runtimeapi.ExecSyncResponse{ExitCode: 1}, nil
	}
	if len(req.Cmd) > 0 && req.Cmd[0] == "true" {
		return &runtimeapi.ExecSyncResponse{}, nil
	}
	if ok, why := r.healthy(c.id); !ok {
		return &runtimeapi.ExecSyncResponse{ExitCode: 1, Stderr: []byte(why)}, nil
	}
	return &runtimeapi.ExecSyncResponse{}, nil
}

// HTTPGet implements prober.Network in process.
func (r *Runtime) HTTPGet(_ context.Context, req prober.HTTPRequest) (prober.Result, string) {
	return r.probe(req.ContainerID)
}

// TCPConnect implements prober.Network in process.
func (r *Runtime) TCPConnect(_ context.Context, req prober.TCPRequest) (prober.Result, string) {
	return r.probe(req.ContainerID)
}

func (r *Runtime) probe(id string) (prober.Result, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls["probe"]++
	if ok, why := r.healthy(id); !ok {
		return prober.Failure, why
	}
	return prober.Success, ""
}

// imageRef is a stable fake digest for an image name.
func imageRef(image string) string {
	h := fnv.New128a()
	_, _ = h.Write([]byte(image))
	return "sha256:" + hex.EncodeToString(h.Sum(nil)) + hex.EncodeToString(h.Sum(nil))
}

// ListImages implements ImageService.
func (r *Runtime) ListImages(ctx context.Context, _ *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	if err := r.enter(ctx, "ListImages"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*runtimeapi.Image, 0, len(r.images))
	for name, ref := range r.images {
		out = append(out, &runtimeapi.Image{Id: ref, RepoTags: []string{name}, Size: 4 << 20})
	}
	return &runtimeapi.ListImagesResponse{Images: out}, nil
}

// ImageStatus implements ImageService: a nil image when not pulled.
func (r *Runtime) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	if err := r.enter(ctx, "ImageStatus"); err != nil {
		return nil, err
	}
	name := req.GetImage().GetImage()
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, ok := r.images[name]
	if !ok {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: ref, RepoTags: []string{name}, Size: 4 << 20}}, nil
}

// PullImage implements ImageService: after the modeled latency the image
// is present. An image named "*/missing*" or with tag "missing" is never
// found, to exercise ErrImagePull.
func (r *Runtime) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	if err := r.enter(ctx, "PullImage"); err != nil {
		return nil, err
	}
	name := req.GetImage().GetImage()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "no image")
	}
	if missingImage(name) {
		return nil, status.Errorf(codes.NotFound, "failed to pull image %q: not found", name)
	}
	ref := imageRef(name)
	r.mu.Lock()
	r.images[name] = ref
	r.mu.Unlock()
	return &runtimeapi.PullImageResponse{ImageRef: ref}, nil
}

func missingImage(name string) bool {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == ':' {
			return name[i+1:] == "missing"
		}
		if name[i] == '/' {
			break
		}
	}
	return false
}

// RemoveImage implements ImageService. Idempotent.
func (r *Runtime) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	if err := r.enter(ctx, "RemoveImage"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	delete(r.images, req.GetImage().GetImage())
	r.mu.Unlock()
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo implements ImageService: nothing to report.
func (r *Runtime) ImageFsInfo(ctx context.Context, _ *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	if err := r.enter(ctx, "ImageFsInfo"); err != nil {
		return nil, err
	}
	return &runtimeapi.ImageFsInfoResponse{}, nil
}

// String names the runtime for logs.
func (r *Runtime) String() string { return fmt.Sprintf("simruntime(%s)", r.ips.prefix) }

// PodCIDR is the node's pod range.
func (r *Runtime) PodCIDR() netip.Prefix { return r.ips.prefix }
