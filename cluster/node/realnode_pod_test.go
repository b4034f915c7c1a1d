package node

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/kstep-dev/kstep/cluster/images"
)

// TestRealNodePod drives one real node through CRI as a kubelet would: pull
// app:v1 from kstep's registry, run a sandbox (CNI gives it an address on
// the node's subnet), create and start kstep-app under the RuntimeDefault
// seccomp profile, reach it over HTTP from the host; then kill containerd
// and stop the node while the pod runs (the container must keep serving and
// be found again), and remove the pod (no veth may be left on the bridge).
func TestRealNodePod(t *testing.T) {
	rn := startRealNode(t, testIndex)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	timed := func(what string, f func() error) {
		t.Helper()
		began := time.Now()
		if err := f(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s: %v", what, time.Since(began).Round(time.Millisecond))
	}

	var imageRef string
	timed("PullImage "+images.AppV1, func() error {
		resp, err := rn.img.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: images.AppV1}})
		imageRef = resp.GetImageRef()
		return err
	})
	if !strings.HasPrefix(imageRef, "sha256:") {
		t.Errorf("PullImage: image ref %q", imageRef)
	}

	var p pod
	sbCfg := sandboxConfig("web-0", rn.dir+"/pods")
	timed("RunPodSandbox", func() error {
		resp, err := rn.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg})
		p.sandboxID = resp.GetPodSandboxId()
		return err
	})
	st, err := rn.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: p.sandboxID})
	if err != nil {
		t.Fatal(err)
	}
	if p.ip, err = netip.ParseAddr(st.GetStatus().GetNetwork().GetIp()); err != nil {
		t.Fatalf("sandbox address: %v", err)
	}
	if cidr := rn.Config().PodCIDR(); !cidr.Contains(p.ip) {
		t.Fatalf("sandbox address %s outside the node's subnet %s", p.ip, cidr)
	}
	t.Logf("sandbox %s has address %s", p.sandboxID[:12], p.ip)

	timed("CreateContainer", func() error {
		resp, err := rn.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
			PodSandboxId: p.sandboxID, Config: appContainerConfig(images.AppV1), SandboxConfig: sbCfg})
		p.containerID = resp.GetContainerId()
		return err
	})
	timed("StartContainer", func() error {
		_, err := rn.rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: p.containerID})
		return err
	})

	base := "http://" + p.ip.String() + ":8080"
	timed("GET /healthz answers 200", func() error {
		_, err := httpGet(base+"/healthz", 15*time.Second)
		return err
	})
	if body, err := httpGet(base+"/", time.Second); err != nil || !strings.Contains(body, "web-0") || !strings.Contains(body, "v1") {
		t.Errorf("GET /: %q, %v; want the pod's hostname and v1", body, err)
	}
	pid, err := containerPID(ctx, rn.rt, p.containerID)
	if err != nil {
		t.Fatal(err)
	}
	if mode, err := seccompMode(pid); err != nil || mode != "2" {
		t.Errorf("container pid %d: Seccomp %q (%v), want 2 (a filter: RuntimeDefault applied by runc)", pid, mode, err)
	}
	if ports := bridgePorts(rn.Config().Bridge()); len(ports) != 1 {
		t.Errorf("bridge %s ports %v, want one veth", rn.Config().Bridge(), ports)
	}

	t.Run("containerd killed", func(t *testing.T) {
		old := rn.ContainerdPID()
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if _, err := httpGet(base+"/healthz", 5*time.Second); err != nil {
			t.Errorf("pod unreachable while containerd is down: %v", err)
		}
		began := time.Now()
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := WaitCRI(wctx, rn.conn); err != nil {
			t.Fatal(err)
		}
		if now := rn.ContainerdPID(); now == old || now == 0 {
			t.Errorf("containerd pid %d after kill, was %d", now, old)
		}
		t.Logf("containerd answers CRI again %v after SIGKILL", time.Since(began).Round(time.Millisecond))
		cs, err := rn.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: p.containerID})
		if err != nil || cs.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("container after containerd restart: %v, %v", cs.GetStatus().GetState(), err)
		}
	})

	t.Run("node stopped and started", func(t *testing.T) {
		if err := rn.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := httpGet(base+"/healthz", 5*time.Second); err != nil {
			t.Errorf("pod unreachable with the node stopped: the shim should outlive containerd: %v", err)
		}
		n, err := Start(ctx, rn.Config(), WithLog(slog.New(slog.NewTextHandler(testWriter{t}, nil))))
		if err != nil {
			t.Fatal(err)
		}
		rn.Node = n
		list, err := rn.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Id != p.sandboxID || list.Items[0].State != runtimeapi.PodSandboxState_SANDBOX_READY {
			t.Errorf("pods after the node's restart: %v, want %s ready", list.Items, p.sandboxID[:12])
		}
	})

	timed("StopPodSandbox", func() error {
		_, err := rn.rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.sandboxID})
		return err
	})
	timed("RemovePodSandbox", func() error {
		_, err := rn.rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.sandboxID})
		return err
	})
	if ports := bridgePorts(rn.Config().Bridge()); len(ports) != 0 {
		t.Errorf("bridge %s still has %v after RemovePodSandbox", rn.Config().Bridge(), ports)
	}
	if list, err := rn.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{}); err != nil || len(list.Items) != 0 {
		t.Errorf("pods after removal: %v, %v", list.GetItems(), err)
	}
	if _, err := httpGet(base+"/healthz", 200*time.Millisecond); err == nil {
		t.Errorf("%s still answers after the pod's removal", base)
	}
}
