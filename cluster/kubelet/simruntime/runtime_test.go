package simruntime

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kstep-dev/kstep/cluster/kubelet/prober"
)

func TestLifecycleAndProbes(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, err := New("n", NodeCIDR(3), Config{StartDelay: Model{Dist: "fixed", Value: 2 * time.Second}}, clk)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if r.NodeIP().String() != "240.0.3.1" {
		t.Errorf("node IP %v", r.NodeIP())
	}
	sbCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "d", Uid: "u"}, Labels: map[string]string{"a": "b"}}
	sb, err := r.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg}); status.Code(err) != codes.AlreadyExists {
		t.Errorf("second sandbox of one attempt: %v", err)
	}
	st, _ := r.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.PodSandboxId})
	if st.Status.Network.Ip != "240.0.3.2" {
		t.Errorf("pod IP %s", st.Status.Network.Ip)
	}
	cc := &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "img:v1"},
		Envs: []*runtimeapi.KeyValue{{Key: "SIM_UNHEALTHY_AFTER", Value: []byte("5s")}}}
	if _, err := r.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cc}); status.Code(err) != codes.NotFound {
		t.Errorf("create before pull: %v", err)
	}
	if _, err := r.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "img:v1"}}); err != nil {
		t.Fatal(err)
	}
	c, err := r.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: cc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}
	probe := func() prober.Result {
		res, _ := r.HTTPGet(ctx, prober.HTTPRequest{ContainerID: c.ContainerId})
		return res
	}
	if probe() != prober.Failure {
		t.Error("probe passed during the start delay")
	}
	clk.Step(2 * time.Second)
	if probe() != prober.Success {
		t.Error("probe failed after the start delay")
	}
	clk.Step(3 * time.Second)
	if probe() != prober.Failure {
		t.Error("probe passed after SIM_UNHEALTHY_AFTER")
	}
	if _, err := r.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId}); err != nil {
		t.Fatal(err)
	}
	cs, _ := r.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.ContainerId})
	if cs.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED || cs.Status.ExitCode != 137 {
		t.Errorf("after sandbox stop: %v %d", cs.Status.State, cs.Status.ExitCode)
	}
	if r.ips.free() != 253 {
		t.Errorf("IP not released: %d free", r.ips.free())
	}
	_, _ = r.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.PodSandboxId})
	if ready, notReady := r.Sandboxes(); ready+notReady != 0 {
		t.Error("sandbox not removed")
	}
}

func TestModeledExit(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	r, _ := New("n", NodeCIDR(0), Config{}, clk)
	ctx := context.Background()
	sb, _ := r.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Uid: "u"}}})
	_, _ = r.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "i"}})
	c, _ := r.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "a"}, Image: &runtimeapi.ImageSpec{Image: "i"},
		Envs: []*runtimeapi.KeyValue{{Key: "SIM_EXIT_AFTER", Value: []byte("1")}, {Key: "SIM_EXIT_CODE", Value: []byte("3")}}}})
	_, _ = r.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId})
	clk.Step(1500 * time.Millisecond)
	l, _ := r.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if len(l.Containers) != 1 || l.Containers[0].State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("%v", l.Containers)
	}
	cs, _ := r.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.ContainerId})
	if cs.Status.ExitCode != 3 || cs.Status.FinishedAt != time.Unix(1001, 0).UnixNano() || cs.Status.Reason != "Error" {
		t.Errorf("%+v", cs.Status)
	}
}

func TestFailureInjection(t *testing.T) {
	r, _ := New("n", NodeCIDR(0), Config{Failures: map[string]float64{"PullImage": 0.5}, Seed: 7}, nil)
	fails := 0
	for i := 0; i < 1000; i++ {
		if _, err := r.PullImage(context.Background(), &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "i"}}); err != nil {
			fails++
		}
	}
	if fails < 400 || fails > 600 {
		t.Errorf("%d of 1000 failed at rate 0.5", fails)
	}
}

func TestModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	u := Model{Dist: "uniform", Min: time.Second, Max: 2 * time.Second}
	ln := Model{Dist: "lognormal", Median: 100 * time.Millisecond, Sigma: 0.5}
	below := 0
	for i := 0; i < 2000; i++ {
		if d := u.Sample(rng); d < time.Second || d >= 2*time.Second {
			t.Fatalf("uniform drew %v", d)
		}
		if ln.Sample(rng) < 100*time.Millisecond {
			below++
		}
	}
	if below < 900 || below > 1100 {
		t.Errorf("lognormal: %d of 2000 below the median", below)
	}
	if (Model{Dist: "fixed", Value: time.Second}).Sample(rng) != time.Second || (Model{}).Sample(rng) != 0 {
		t.Error("fixed/none")
	}
}

func TestLoadProfile(t *testing.T) {
	for _, name := range []string{"zero", "realistic", "flaky"} {
		if _, err := LoadProfile(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	path := filepath.Join(t.TempDir(), "p.yaml")
	_ = os.WriteFile(path, []byte(`
latency:
  RunPodSandbox: {dist: lognormal, median: 300ms, sigma: 0.3}
  "*": {dist: fixed, value: 1ms}
failures: {StartContainer: 0.1}
startDelay: {dist: uniform, min: 1s, max: 2s}
`), 0o644)
	c, err := LoadProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Latency["RunPodSandbox"].Median != 300*time.Millisecond || c.Failures["StartContainer"] != 0.1 || c.StartDelay.Max != 2*time.Second {
		t.Errorf("%+v", c)
	}
	_ = os.WriteFile(path, []byte("latency: {X: {dist: gamma}}\n"), 0o644)
	if _, err := LoadProfile(path); err == nil {
		t.Error("unknown distribution accepted")
	}
	if _, err := LoadProfile("no-such-profile"); err == nil {
		t.Error("missing file accepted")
	}
}

func TestNodeCIDR(t *testing.T) {
	if NodeCIDR(0).String() != "240.0.0.0/24" || NodeCIDR(1).String() != "240.0.1.0/24" || NodeCIDR(257).String() != "240.1.1.0/24" {
		t.Errorf("%v %v", NodeCIDR(0), NodeCIDR(257))
	}
	if !HollowRange.Contains(NodeCIDR(1<<20 - 1).Addr()) {
		t.Error("out of range")
	}
}

// TestJobContainersFinish: a Job's container (its sandbox labelled as the
// Job controller labels pods) exits 0 after JobDuration; any other
// container keeps running.
func TestJobContainersFinish(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	r, _ := New("n", NodeCIDR(0), Config{JobDuration: Model{Dist: "fixed", Value: 3 * time.Second}}, clk)
	ctx := context.Background()
	_, _ = r.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "i"}})
	start := func(uid string, labels map[string]string) string {
		sc := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Uid: uid}, Labels: labels}
		sb, err := r.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sc})
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, SandboxConfig: sc, Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "a"}, Image: &runtimeapi.ImageSpec{Image: "i"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
			t.Fatal(err)
		}
		return c.ContainerId
	}
	job := start("j", map[string]string{"batch.kubernetes.io/job-name": "pi"})
	svc := start("s", map[string]string{"app": "web"})
	state := func(id string) *runtimeapi.ContainerStatus {
		cs, err := r.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			t.Fatal(err)
		}
		return cs.Status
	}
	clk.Step(2 * time.Second)
	if s := state(job); s.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("job container after 2s of 3: %v", s.State)
	}
	clk.Step(2 * time.Second)
	if s := state(job); s.State != runtimeapi.ContainerState_CONTAINER_EXITED || s.ExitCode != 0 || s.Reason != "Completed" ||
		s.FinishedAt != time.Unix(1003, 0).UnixNano() {
		t.Fatalf("job container after 4s: %+v", s)
	}
	clk.Step(time.Hour)
	if s := state(svc); s.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("a service's container: %v", s.State)
	}
}
