package simruntime

import (
	"context"
	"hash/fnv"
	"math"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The simulated usage of a running container. Its cpu follows its request
// (the cgroup cpu shares the kubelet derived from it; defaultMilliCPU when
// it has none), capped by its limit: a steady 30–70 % of it, the fraction
// drawn from its id, so cumulative usage grows linearly from its start.
// Its memory working set grows from 60 % to all of a target (40 % of its
// memory limit, else defaultMemory plus 64 KiB per requested millicore)
// over its first minute or so.
const (
	defaultMilliCPU = 10
	defaultMemory   = 16 << 20
	memoryRampUp    = 30.0 // seconds, the working set's time constant
)

// usage is one container's cpu and memory at now (ns). Callers hold r.mu.
func (r *Runtime) usage(c *container, now int64) (*runtimeapi.CpuUsage, *runtimeapi.MemoryUsage) {
	end := now
	if c.state == runtimeapi.ContainerState_CONTAINER_EXITED && c.finishedAt > 0 {
		end = c.finishedAt
	}
	elapsed := max(end-c.startedAt, 0)
	if c.startedAt == 0 {
		elapsed = 0
	}
	milli := float64(defaultMilliCPU)
	if c.cpuShares > 2 {
		milli = float64(c.cpuShares) * 1000 / 1024
	}
	if c.cpuQuota > 0 {
		milli = min(milli, float64(c.cpuQuota)*1000/100000)
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(c.id))
	frac := 0.3 + 0.4*float64(h.Sum32()%1000)/1000
	nanoCores := uint64(milli * frac * 1e6) // 1 millicore = 1e6 nanocores
	var rate uint64
	if c.state == runtimeapi.ContainerState_CONTAINER_RUNNING {
		rate = nanoCores
	}
	target := float64(defaultMemory) + milli*64*1024
	if c.memLimit > 0 {
		target = 0.4 * float64(c.memLimit)
	}
	ws := uint64(target * (0.6 + 0.4*(1-math.Exp(-float64(elapsed)/1e9/memoryRampUp))))
	cpu := &runtimeapi.CpuUsage{Timestamp: now,
		UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: uint64(float64(elapsed) * float64(nanoCores) / 1e9)},
		UsageNanoCores:       &runtimeapi.UInt64Value{Value: rate}}
	mem := &runtimeapi.MemoryUsage{Timestamp: now,
		WorkingSetBytes: &runtimeapi.UInt64Value{Value: ws},
		UsageBytes:      &runtimeapi.UInt64Value{Value: ws + ws/10},
		RssBytes:        &runtimeapi.UInt64Value{Value: ws - ws/10}}
	if c.memLimit > 0 {
		mem.AvailableBytes = &runtimeapi.UInt64Value{Value: uint64(c.memLimit) - min(ws, uint64(c.memLimit))}
	}
	return cpu, mem
}

func (r *Runtime) containerStats(c *container, now int64) *runtimeapi.ContainerStats {
	cpu, mem := r.usage(c, now)
	return &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{Id: c.id, Metadata: r.sandboxMeta(c),
			Labels: c.labels, Annotations: c.annotations},
		Cpu: cpu, Memory: mem,
	}
}

// ContainerStats implements RuntimeService: the container's simulated usage.
func (r *Runtime) ContainerStats(ctx context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	if err := r.enter(ctx, "ContainerStats"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[req.ContainerId]
	if !ok {
		return nil, notFound("container", req.ContainerId)
	}
	r.refresh(c)
	return &runtimeapi.ContainerStatsResponse{Stats: r.containerStats(c, r.clock.Now().UnixNano())}, nil
}

// ListContainerStats implements RuntimeService: the running containers'
// simulated usage.
func (r *Runtime) ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	if err := r.enter(ctx, "ListContainerStats"); err != nil {
		return nil, err
	}
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now().UnixNano()
	out := make([]*runtimeapi.ContainerStats, 0, len(r.containers))
	for _, c := range r.containers {
		r.refresh(c)
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		if f != nil && (f.Id != "" && f.Id != c.id || f.PodSandboxId != "" && f.PodSandboxId != c.sandboxID || !matchLabels(c.labels, f.LabelSelector)) {
			continue
		}
		out = append(out, r.containerStats(c, now))
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: out}, nil
}

// sandboxStats sums a sandbox's running containers. Callers hold r.mu.
func (r *Runtime) sandboxStats(s *sandbox, now int64) *runtimeapi.PodSandboxStats {
	cpu := &runtimeapi.CpuUsage{Timestamp: now, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{}, UsageNanoCores: &runtimeapi.UInt64Value{}}
	mem := &runtimeapi.MemoryUsage{Timestamp: now, WorkingSetBytes: &runtimeapi.UInt64Value{}, UsageBytes: &runtimeapi.UInt64Value{}, RssBytes: &runtimeapi.UInt64Value{}}
	linux := &runtimeapi.LinuxPodSandboxStats{Cpu: cpu, Memory: mem}
	for _, id := range s.containers {
		c := r.containers[id]
		if c == nil {
			continue
		}
		r.refresh(c)
		if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			continue
		}
		cs := r.containerStats(c, now)
		cpu.UsageCoreNanoSeconds.Value += cs.Cpu.UsageCoreNanoSeconds.Value
		cpu.UsageNanoCores.Value += cs.Cpu.UsageNanoCores.Value
		mem.WorkingSetBytes.Value += cs.Memory.WorkingSetBytes.Value
		mem.UsageBytes.Value += cs.Memory.UsageBytes.Value
		mem.RssBytes.Value += cs.Memory.RssBytes.Value
		linux.Containers = append(linux.Containers, cs)
	}
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{Id: s.id, Metadata: s.metadata(),
			Labels: s.labels, Annotations: s.annotations},
		Linux: linux,
	}
}

// PodSandboxStats implements RuntimeService.
func (r *Runtime) PodSandboxStats(ctx context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	if err := r.enter(ctx, "PodSandboxStats"); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sandboxes[req.PodSandboxId]
	if !ok {
		return nil, notFound("sandbox", req.PodSandboxId)
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: r.sandboxStats(s, r.clock.Now().UnixNano())}, nil
}

// ListPodSandboxStats implements RuntimeService: the ready sandboxes, each
// the sum of its running containers.
func (r *Runtime) ListPodSandboxStats(ctx context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	if err := r.enter(ctx, "ListPodSandboxStats"); err != nil {
		return nil, err
	}
	f := req.GetFilter()
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now().UnixNano()
	out := make([]*runtimeapi.PodSandboxStats, 0, len(r.sandboxes))
	for _, s := range r.sandboxes {
		if s.state != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		if f != nil && (f.Id != "" && f.Id != s.id || !matchLabels(s.labels, f.LabelSelector)) {
			continue
		}
		out = append(out, r.sandboxStats(s, now))
	}
	return &runtimeapi.ListPodSandboxStatsResponse{Stats: out}, nil
}
