package simruntime

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// startOne runs one sandbox with one started container and returns their ids.
func startOne(t *testing.T, r *Runtime, res *runtimeapi.LinuxContainerResources, env ...*runtimeapi.KeyValue) (string, string) {
	t.Helper()
	ctx := context.Background()
	sb, err := r.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "d", Uid: "u"}, LogDirectory: "/var/log/pods/d_p_u",
		Labels:       map[string]string{"node": "n"},
		PortMappings: []*runtimeapi.PortMapping{{ContainerPort: 8080}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "img:v1"}}); err != nil {
		t.Fatal(err)
	}
	c, err := r.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "img:v1"},
		LogPath: "app/0.log", Labels: map[string]string{"node": "n"}, Envs: env,
		Linux: &runtimeapi.LinuxContainerConfig{Resources: res}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}
	return sb.PodSandboxId, c.ContainerId
}

func TestSimulatedStats(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, err := New("n", NodeCIDR(3), Config{}, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// 500m requested (shares 512), 1 cpu limit, 256Mi limit.
	sb, id := startOne(t, r, &runtimeapi.LinuxContainerResources{CpuShares: 512, CpuQuota: 100000, CpuPeriod: 100000, MemoryLimitInBytes: 256 << 20})
	read := func() *runtimeapi.ContainerStats {
		t.Helper()
		l, err := r.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{LabelSelector: map[string]string{"node": "n"}}})
		if err != nil || len(l.Stats) != 1 || l.Stats[0].Attributes.Id != id {
			t.Fatalf("stats %v, %v", l, err)
		}
		return l.Stats[0]
	}
	var lastCPU, lastWS uint64
	for i := 0; i < 5; i++ {
		clk.Step(20 * time.Second)
		s := read()
		cores := s.Cpu.UsageNanoCores.Value
		if cores < 150e6 || cores > 350e6 {
			t.Fatalf("%d nanocores for 500m requested", cores)
		}
		total, ws := s.Cpu.UsageCoreNanoSeconds.Value, s.Memory.WorkingSetBytes.Value
		if total <= lastCPU || ws <= lastWS || ws > 256<<20*4/10 || ws < 256<<20*6/10*4/10 {
			t.Fatalf("step %d: cpu %d (was %d), working set %d (was %d)", i, total, lastCPU, ws, lastWS)
		}
		if want := uint64(float64(cores) * float64(20*(i+1))); total < want*99/100 || total > want*101/100 {
			t.Fatalf("cumulative %d after %ds at %d nanocores", total, 20*(i+1), cores)
		}
		lastCPU, lastWS = total, ws
	}
	ps, err := r.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{})
	if err != nil || len(ps.Stats) != 1 || ps.Stats[0].Attributes.Metadata.Uid != "u" || len(ps.Stats[0].Linux.Containers) != 1 {
		t.Fatalf("sandbox stats %v, %v", ps, err)
	}
	if got := ps.Stats[0].Linux.Memory.WorkingSetBytes.Value; got != lastWS {
		t.Fatalf("sandbox working set %d, its container's %d", got, lastWS)
	}
	// Stopped: no stats for the container, the sandbox is gone from the list.
	if _, err := r.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	l, _ := r.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	ps, _ = r.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{})
	if len(l.Stats) != 0 || len(ps.Stats) != 0 {
		t.Fatalf("stats of stopped: %v %v", l, ps)
	}
}

func TestSimulatedLogAndNoStreams(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	r, err := New("n", NodeCIDR(3), Config{StartDelay: Model{Dist: "fixed", Value: 2 * time.Second}}, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, id := startOne(t, r, nil, &runtimeapi.KeyValue{Key: "SIM_EXIT_AFTER", Value: []byte("10s")}, &runtimeapi.KeyValue{Key: "SIM_EXIT_CODE", Value: []byte("3")})
	st, err := r.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status.LogPath != "/var/log/pods/d_p_u/app/0.log" {
		t.Fatalf("log path %q: want the sandbox's log directory joined, as containerd", st.Status.LogPath)
	}
	read := func() string {
		t.Helper()
		f, err := r.OpenLog(st.Status.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, ok := f.(io.Seeker); !ok {
			t.Fatal("the log cannot seek, as a file can")
		}
		b, _ := io.ReadAll(f)
		return string(b)
	}
	ts := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339Nano) }
	if got := read(); strings.Count(got, "\n") != 1 {
		t.Fatalf("log at start: %q: what is logged later is not there yet", got)
	}
	clk.Step(5 * time.Millisecond)
	if got, want := read(), ts(0)+` stdout F kstep-sim: container "app" (attempt 0) started on hollow node n`+"\n"+
		ts(time.Millisecond)+" stdout F image img:v1 ("+imageRef("img:v1")+")\n"; got != want {
		t.Fatalf("log before ready:\n%s\nwant\n%s", got, want)
	}
	clk.Step(3*time.Second - 5*time.Millisecond)
	if got := read(); !strings.HasSuffix(got, ts(2*time.Second+2*time.Millisecond)+" stdout F listening on :8080\n") {
		t.Fatalf("log when ready:\n%s", got)
	}
	clk.Step(10 * time.Second)
	if got := read(); !strings.HasSuffix(got, ts(10*time.Second)+" stdout F work done after 10s, exiting with code 3\n") || strings.Count(got, "\n") != 4 {
		t.Fatalf("log after exit:\n%s", got)
	}
	if _, err := r.OpenLog("/var/log/pods/other/0.log"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unknown path: %v", err)
	}
	for name, call := range map[string]func() error{
		"Exec":        func() error { _, err := r.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: id}); return err },
		"Attach":      func() error { _, err := r.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: id}); return err },
		"PortForward": func() error { _, err := r.PortForward(ctx, &runtimeapi.PortForwardRequest{}); return err },
	} {
		if err := call(); status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "containers run no processes") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
