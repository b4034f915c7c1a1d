package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kstep-dev/kstep/cluster/kubelet"
)

// summary serves /stats/summary: cpu and memory of the node, its pods and
// their containers (what metrics-server and kstep's metrics API read).
func (s *Server) summary(w http.ResponseWriter, r *http.Request) {
	k := nodeOf(r)
	sum, err := s.buildSummary(r.Context(), k)
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	writeJSON(w, sum)
}

func uint64p(v *runtimeapi.UInt64Value) *uint64 {
	if v == nil {
		return nil
	}
	x := v.Value
	return &x
}

func (s *Server) buildSummary(ctx context.Context, k *kubelet.Kubelet) (*statsapi.Summary, error) {
	sel := k.RuntimeSelector()
	sbs, err := k.Runtime().ListPodSandboxStats(ctx, sel)
	if err != nil && ctx.Err() == nil {
		// An older runtime (Unimplemented), or one that cannot measure a
		// sandbox: containerd refuses every sandbox's stats when one
		// has no cgroup parent (a kubelet without --cgroup-parent). The
		// pods from their sandboxes, their usage the sum of their
		// containers'.
		if status.Code(err) != codes.Unimplemented {
			s.log.Debug("sandbox stats unavailable; summing the containers'", "node", k.NodeName(), "err", err)
		}
		sbs, err = sandboxesWithoutStats(ctx, k, sel)
	}
	if err != nil {
		return nil, err
	}
	cstats, err := k.Runtime().ListContainerStats(ctx, sel)
	if err != nil {
		return nil, err
	}
	containers, err := k.Runtime().ListContainers(ctx, sel)
	if err != nil {
		return nil, err
	}
	type cinfo struct {
		running bool
		created int64
	}
	cs := make(map[string]cinfo, len(containers))
	for _, c := range containers {
		cs[c.Id] = cinfo{running: c.State == runtimeapi.ContainerState_CONTAINER_RUNNING, created: c.CreatedAt}
	}
	byPod := map[string][]statsapi.ContainerStats{}
	live := map[string]bool{}
	for _, st := range cstats {
		a := st.GetAttributes()
		ci, ok := cs[a.GetId()]
		if !ok || !ci.running {
			continue
		}
		live[a.GetId()] = true
		uid := a.GetLabels()[kubelet.PodUIDLabel]
		byPod[uid] = append(byPod[uid], statsapi.ContainerStats{
			Name:      a.GetMetadata().GetName(),
			StartTime: metav1.NewTime(time.Unix(0, ci.created)),
			CPU:       s.cpuStats(k.NodeName()+"/"+a.GetId(), st.GetCpu()),
			Memory:    memStats(st.GetMemory()),
		})
	}
	pods := map[string]*corev1Pod{}
	for _, p := range k.Pods() {
		pods[string(p.UID)] = &corev1Pod{start: p.CreationTimestamp, startTime: p.Status.StartTime}
	}
	sum := &statsapi.Summary{Pods: make([]statsapi.PodStats, 0, len(sbs))}
	now := time.Now()
	var nodeCPU, nodeCPUTotal, nodeWS, nodeUsage, nodeRSS uint64
	for _, sb := range sbs {
		a := sb.GetAttributes()
		md := a.GetMetadata()
		if md == nil {
			continue
		}
		ps := statsapi.PodStats{
			PodRef:    statsapi.PodReference{Name: md.Name, Namespace: md.Namespace, UID: md.Uid},
			StartTime: metav1.NewTime(now),
		}
		if p := pods[md.Uid]; p != nil {
			ps.StartTime = p.start
			if p.startTime != nil {
				ps.StartTime = *p.startTime
			}
		}
		if l := sb.GetLinux(); l != nil {
			ps.CPU = s.cpuStats(k.NodeName()+"/pod/"+a.GetId(), l.GetCpu())
			ps.Memory = memStats(l.GetMemory())
		}
		ps.Containers = byPod[md.Uid]
		sort.Slice(ps.Containers, func(i, j int) bool { return ps.Containers[i].Name < ps.Containers[j].Name })
		if ps.CPU == nil && len(ps.Containers) > 0 {
			ps.CPU, ps.Memory = sumContainers(ps.Containers, now)
		}
		if ps.CPU != nil {
			nodeCPU += deref(ps.CPU.UsageNanoCores)
			nodeCPUTotal += deref(ps.CPU.UsageCoreNanoSeconds)
		}
		if ps.Memory != nil {
			nodeWS += deref(ps.Memory.WorkingSetBytes)
			nodeUsage += deref(ps.Memory.UsageBytes)
			nodeRSS += deref(ps.Memory.RSSBytes)
		}
		sum.Pods = append(sum.Pods, ps)
	}
	s.cpu.forget(k.NodeName(), live, sbs)
	sort.Slice(sum.Pods, func(i, j int) bool {
		a, b := sum.Pods[i].PodRef, sum.Pods[j].PodRef
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	sum.Node = statsapi.NodeStats{NodeName: k.NodeName(), StartTime: metav1.NewTime(k.StartTime())}
	if k.Hollow() {
		ts := metav1.NewTime(now)
		sum.Node.CPU = &statsapi.CPUStats{Time: ts, UsageNanoCores: &nodeCPU, UsageCoreNanoSeconds: &nodeCPUTotal}
		sum.Node.Memory = &statsapi.MemoryStats{Time: ts, WorkingSetBytes: &nodeWS, UsageBytes: &nodeUsage, RSSBytes: &nodeRSS}
		return sum, nil
	}
	cpu, mem, boot, err := s.host.sample(ctx)
	if err != nil {
		return nil, fmt.Errorf("node stats: %w", err)
	}
	sum.Node.CPU, sum.Node.Memory = cpu, mem
	if !boot.IsZero() {
		sum.Node.StartTime = metav1.NewTime(boot)
	}
	return sum, nil
}

func sandboxesWithoutStats(ctx context.Context, k *kubelet.Kubelet, sel map[string]string) ([]*runtimeapi.PodSandboxStats, error) {
	list, err := k.Runtime().ListPodSandbox(ctx, sel)
	if err != nil {
		return nil, err
	}
	var out []*runtimeapi.PodSandboxStats
	for _, sb := range list {
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			out = append(out, &runtimeapi.PodSandboxStats{Attributes: &runtimeapi.PodSandboxAttributes{Id: sb.Id, Metadata: sb.Metadata, Labels: sb.Labels}})
		}
	}
	return out, nil
}

type corev1Pod struct {
	start     metav1.Time
	startTime *metav1.Time
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

func sumContainers(cs []statsapi.ContainerStats, now time.Time) (*statsapi.CPUStats, *statsapi.MemoryStats) {
	var nano, total, ws, usage, rss uint64
	for _, c := range cs {
		if c.CPU != nil {
			nano += deref(c.CPU.UsageNanoCores)
			total += deref(c.CPU.UsageCoreNanoSeconds)
		}
		if c.Memory != nil {
			ws += deref(c.Memory.WorkingSetBytes)
			usage += deref(c.Memory.UsageBytes)
			rss += deref(c.Memory.RSSBytes)
		}
	}
	ts := metav1.NewTime(now)
	return &statsapi.CPUStats{Time: ts, UsageNanoCores: &nano, UsageCoreNanoSeconds: &total},
		&statsapi.MemoryStats{Time: ts, WorkingSetBytes: &ws, UsageBytes: &usage, RSSBytes: &rss}
}

// cpuStats converts CRI cpu usage; a runtime that reports only the
// cumulative usage gets its rate from the previous sample of id.
func (s *Server) cpuStats(id string, c *runtimeapi.CpuUsage) *statsapi.CPUStats {
	if c == nil {
		return nil
	}
	out := &statsapi.CPUStats{Time: metav1.NewTime(time.Unix(0, c.Timestamp)), UsageCoreNanoSeconds: uint64p(c.UsageCoreNanoSeconds),
		UsageNanoCores: uint64p(c.UsageNanoCores)}
	if c.Timestamp == 0 {
		out.Time = metav1.Now()
	}
	if (out.UsageNanoCores == nil || *out.UsageNanoCores == 0) && out.UsageCoreNanoSeconds != nil {
		if rate, ok := s.cpu.rate(id, out.Time.Time, *out.UsageCoreNanoSeconds); ok {
			out.UsageNanoCores = &rate
		}
	}
	return out
}

func memStats(m *runtimeapi.MemoryUsage) *statsapi.MemoryStats {
	if m == nil {
		return nil
	}
	out := &statsapi.MemoryStats{Time: metav1.NewTime(time.Unix(0, m.Timestamp)), WorkingSetBytes: uint64p(m.WorkingSetBytes),
		UsageBytes: uint64p(m.UsageBytes), RSSBytes: uint64p(m.RssBytes), AvailableBytes: uint64p(m.AvailableBytes),
		PageFaults: uint64p(m.PageFaults), MajorPageFaults: uint64p(m.MajorPageFaults)}
	if m.Timestamp == 0 {
		out.Time = metav1.Now()
	}
	return out
}

// rates remembers the last cumulative cpu sample per container or pod, to
// derive a rate when the runtime gives none.
type rates struct {
	mu   sync.Mutex
	last map[string]cpuSample
}

type cpuSample struct {
	at    time.Time
	total uint64
	rate  uint64
}

func newRates() *rates { return &rates{last: map[string]cpuSample{}} }

// minRateInterval is the shortest interval a rate is computed over; a
// sooner sample gets the previous rate.
const minRateInterval = 500 * time.Millisecond

func (r *rates) rate(id string, at time.Time, total uint64) (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, ok := r.last[id]
	if !ok {
		r.last[id] = cpuSample{at: at, total: total}
		return 0, false
	}
	dt := at.Sub(prev.at)
	if dt < minRateInterval {
		return prev.rate, prev.rate > 0
	}
	rate := uint64(0)
	if total >= prev.total {
		rate = uint64(float64(total-prev.total) / dt.Seconds())
	}
	r.last[id] = cpuSample{at: at, total: total, rate: rate}
	return rate, true
}

// forget drops the samples of node's containers and sandboxes gone
// (keys are node/id and node/pod/id).
func (r *rates) forget(node string, containers map[string]bool, sbs []*runtimeapi.PodSandboxStats) {
	keep := make(map[string]bool, len(containers)+len(sbs))
	for id := range containers {
		keep[node+"/"+id] = true
	}
	for _, sb := range sbs {
		keep[node+"/pod/"+sb.GetAttributes().GetId()] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.last {
		if strings.HasPrefix(id, node+"/") && !keep[id] {
			delete(r.last, id)
		}
	}
}

// hostStats reads the node's cpu and memory: its cgroup v2 root when it
// has its own (a node in a container, whose /sys/fs/cgroup is its
// cgroup namespace's), else the host's /proc.
type hostStats struct {
	proc, cgroup string
	mu           sync.Mutex
	last         cpuSample
}

func newHostStats(proc, cgroup string) *hostStats { return &hostStats{proc: proc, cgroup: cgroup} }

// userHZ is the unit of /proc/stat (USER_HZ, 100 on every Linux kstep runs on).
const userHZ = 100

// cpuTotal is the cumulative cpu time used, in nanoseconds.
func (h *hostStats) cpuTotal() (uint64, error) {
	if b, err := os.ReadFile(filepath.Join(h.cgroup, "cpu.stat")); err == nil && h.ownCgroup() {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
				n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("cpu.stat: %w", err)
				}
				return n * 1000, nil
			}
		}
	}
	f, err := os.Open(filepath.Join(h.proc, "stat"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 || fs[0] != "cpu" {
			continue
		}
		// user nice system idle iowait irq softirq steal [guest guest_nice]:
		// busy is all but idle and iowait (guest time is in user already).
		var busy uint64
		for i, v := range fs[1:min(len(fs), 9)] {
			if i == 3 || i == 4 {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: %w", err)
			}
			busy += n
		}
		return busy * (1e9 / userHZ), nil
	}
	return 0, fmt.Errorf("/proc/stat: no cpu line")
}

// ownCgroup reports whether the cgroup root is a container's (it has
// memory.current, which the host's root cgroup lacks).
func (h *hostStats) ownCgroup() bool {
	_, err := os.Stat(filepath.Join(h.cgroup, "memory.current"))
	return err == nil
}

func readKV(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, l := range strings.Split(string(b), "\n") {
		fs := strings.Fields(l)
		if len(fs) < 2 {
			continue
		}
		if n, err := strconv.ParseUint(fs[1], 10, 64); err == nil {
			out[strings.TrimSuffix(fs[0], ":")] = n
		}
	}
	return out, nil
}

func (h *hostStats) memory(now time.Time) (*statsapi.MemoryStats, error) {
	ts := metav1.NewTime(now)
	if h.ownCgroup() {
		b, err := os.ReadFile(filepath.Join(h.cgroup, "memory.current"))
		if err != nil {
			return nil, err
		}
		cur, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("memory.current: %w", err)
		}
		st, _ := readKV(filepath.Join(h.cgroup, "memory.stat"))
		ws := cur - min(st["inactive_file"], cur)
		rss := st["anon"]
		return &statsapi.MemoryStats{Time: ts, UsageBytes: &cur, WorkingSetBytes: &ws, RSSBytes: &rss}, nil
	}
	mi, err := readKV(filepath.Join(h.proc, "meminfo"))
	if err != nil {
		return nil, err
	}
	total, avail, free := mi["MemTotal"]*1024, mi["MemAvailable"]*1024, mi["MemFree"]*1024
	if total == 0 {
		return nil, fmt.Errorf("meminfo: no MemTotal")
	}
	ws, usage := total-min(avail, total), total-min(free, total)
	return &statsapi.MemoryStats{Time: ts, UsageBytes: &usage, WorkingSetBytes: &ws, AvailableBytes: &avail}, nil
}

// bootTime is the host's boot time from /proc/stat's btime.
func (h *hostStats) bootTime() time.Time {
	kv, err := readKV(filepath.Join(h.proc, "stat"))
	if err != nil || kv["btime"] == 0 {
		return time.Time{}
	}
	return time.Unix(int64(kv["btime"]), 0)
}

// sample reads the node's usage; its cpu rate is over the time since the
// previous sample (at least minRateInterval: the first sample waits that
// long for a second).
func (h *hostStats) sample(ctx context.Context) (*statsapi.CPUStats, *statsapi.MemoryStats, time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	total, err := h.cpuTotal()
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	now := time.Now()
	if h.last.at.IsZero() {
		h.last = cpuSample{at: now, total: total}
		t := time.NewTimer(minRateInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, time.Time{}, ctx.Err()
		case <-t.C:
		}
		if total, err = h.cpuTotal(); err != nil {
			return nil, nil, time.Time{}, err
		}
		now = time.Now()
	}
	rate := h.last.rate
	if dt := now.Sub(h.last.at); dt >= minRateInterval {
		rate = 0
		if total >= h.last.total {
			rate = uint64(float64(total-h.last.total) / dt.Seconds())
		}
		h.last = cpuSample{at: now, total: total, rate: rate}
	}
	mem, err := h.memory(now)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	return &statsapi.CPUStats{Time: metav1.NewTime(now), UsageNanoCores: &rate, UsageCoreNanoSeconds: &total}, mem, h.bootTime(), nil
}
