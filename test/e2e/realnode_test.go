package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/node"
	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// pidOf finds the process whose command line contains every part.
func pidOf(t *testing.T, parts ...string) int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(cmd, p)
		}
		if ok {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			return pid
		}
	}
	return 0
}

// runtimeState lists a node's ready sandboxes and running containers
// through CRI, straight from its containerd.
func runtimeState(t *testing.T, dir string) (sandboxes, containers []string) {
	t.Helper()
	sandboxes, containers, err := tryRuntimeState(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sandboxes, containers
}

func tryRuntimeState(dir string) (sandboxes, containers []string, err error) {
	return listRuntime(dir, false)
}

// listRuntime lists sandboxes and containers; all=false keeps only ready
// sandboxes and running containers.
func listRuntime(dir string, all bool) (sandboxes, containers []string, err error) {
	conn, err := node.DialCRI(node.Paths(dir).Endpoint())
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sf := &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}
	cf := &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}
	if all {
		sf, cf = nil, nil
	}
	sb, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: sf})
	if err != nil {
		return nil, nil, fmt.Errorf("CRI ListPodSandbox on %s: %w", dir, err)
	}
	for _, s := range sb.Items {
		sandboxes = append(sandboxes, s.Id)
	}
	cs, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: cf})
	if err != nil {
		return nil, nil, fmt.Errorf("CRI ListContainers on %s: %w", dir, err)
	}
	for _, c := range cs.Containers {
		containers = append(containers, c.Id)
	}
	return sandboxes, containers, nil
}

// Real nodes: containerd + runc + CNI + kstep's kubelet, under kstep up.
func TestRealNodes(t *testing.T) {
	inLane(t, realNodes)
	bin := binary(t)
	if os.Geteuid() != 0 {
		t.Skip("real nodes need root")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(bin), "containerd")); err != nil {
		t.Skip("bin/containerd is missing: run make build")
	}
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	cfg.Binary, cfg.StateDir, cfg.RealNodes = bin, t.TempDir(), 2
	p, err := process.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	up(t, p, cfg.StateDir, 8*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cs := clientFor(t, p.Kubeconfig(), "kstep")
	nodeDir := func(n string) string { return filepath.Join(cfg.StateDir, "nodes", n) }

	rs := rsOf("real", 6, "")
	c := &rs.Spec.Template.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
	c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}}
	start := time.Now()
	if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ready := func() bool {
		pods, _ := podsOf(t, cs, "real")
		if len(pods) != 6 || !allReady(pods) {
			return false
		}
		for _, p := range pods {
			if p.Status.PodIP == "" {
				return false
			}
		}
		return true
	}
	took := testenv.Eventually(t, 4*time.Minute, "6 Ready pods on real nodes", ready)
	t.Logf("6 pods Ready with IPs on 2 real nodes %v after the ReplicaSet was created", took)
	_ = start

	pods, byNode := podsOf(t, cs, "real")
	checkFiveConditions(t, pods)
	for n, want := range byNode {
		sb, ctrs := runtimeState(t, nodeDir(n))
		if len(sb) != want || len(ctrs) != want {
			t.Fatalf("%s: CRI shows %d ready sandboxes and %d running containers, the apiserver %d pods", n, len(sb), len(ctrs), want)
		}
	}
	checkPodIO(t, p.Kubeconfig(), "node-0")
	for _, pod := range pods {
		resp, err := http.Get("http://" + pod.Status.PodIP + ":8080/healthz")
		if err != nil {
			t.Fatalf("GET pod %s at %s: %v", pod.Name, pod.Status.PodIP, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("pod %s /healthz: %d", pod.Name, resp.StatusCode)
		}
	}

	// SIGKILL a kubelet (through the provider, as the chaos engine does):
	// kstep node starts it again; it adopts what runs.
	victim := pods[0].Spec.NodeName
	sbBefore, ctrsBefore := runtimeState(t, nodeDir(victim))
	kubelet := pidOf(t, " kubelet ", "--node-name "+victim)
	if kubelet == 0 {
		kubelet = pidOf(t, " kubelet ", "--node-name="+victim)
	}
	if kubelet == 0 {
		t.Fatalf("no kubelet process for %s", victim)
	}
	if err := p.Signal(ctx, victim, "kubelet", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "a new kubelet", func() bool {
		pid := pidOf(t, " kubelet ", victim)
		return pid != 0 && pid != kubelet
	})
	time.Sleep(5 * time.Second) // a duplicating kubelet would have started containers by now
	sbAfter, ctrsAfter := runtimeState(t, nodeDir(victim))
	slices.Sort(sbBefore)
	slices.Sort(sbAfter)
	slices.Sort(ctrsBefore)
	slices.Sort(ctrsAfter)
	if fmt.Sprint(sbAfter) != fmt.Sprint(sbBefore) || fmt.Sprint(ctrsAfter) != fmt.Sprint(ctrsBefore) {
		t.Fatalf("after the kubelet restart: sandboxes %v → %v, containers %v → %v", sbBefore, sbAfter, ctrsBefore, ctrsAfter)
	}
	testenv.Eventually(t, time.Minute, "pods Ready after the kubelet restart", ready)

	// SIGKILL a containerd: kstep node starts it again; pods return Ready.
	other := "node-0"
	if victim == other {
		other = "node-1"
	}
	ctrd := pidOf(t, "containerd --config", nodeDir(other))
	if ctrd == 0 {
		t.Fatalf("no containerd process for %s", other)
	}
	if err := p.Signal(ctx, other, "containerd", syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "containerd back and answering CRI", func() bool {
		pid := pidOf(t, "containerd --config", nodeDir(other))
		_, _, err := tryRuntimeState(nodeDir(other))
		return pid != 0 && pid != ctrd && err == nil
	})
	testenv.Eventually(t, 2*time.Minute, "pods Ready after the containerd restart", ready)

	// SIGKILL the whole node: like a machine losing power (and like a node
	// container killed on docker), its pods go with it; no shim of it is
	// left. Started again, it runs its pods anew.
	if pidOf(t, "containerd-shim", nodeDir(victim)) == 0 {
		t.Fatalf("%s runs no shim before the kill", victim)
	}
	if err := p.Stop(ctx, victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if pid := pidOf(t, "containerd-shim", nodeDir(victim)); pid != 0 {
		t.Fatalf("shim %d of %s outlived the node's SIGKILL", pid, victim)
	}
	if err := p.Start(ctx, victim); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 3*time.Minute, "pods Ready after the node came back", ready)

	// Deleting the ReplicaSet removes containers and sandboxes.
	if err := cs.AppsV1().ReplicaSets("default").Delete(ctx, "real", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "no sandbox or container left, in any state", func() bool {
		for _, n := range []string{"node-0", "node-1"} {
			sb, ctrs, err := listRuntime(nodeDir(n), true)
			if err != nil || len(sb)+len(ctrs) > 0 {
				return false
			}
		}
		return true
	})

	// kstep down --purge: nothing is left of the cluster, its nodes' data
	// included (nodes/node-0 was, #56 6d).
	if err := p.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Purge(); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(cfg.StateDir, "*")); len(left) > 0 {
		t.Errorf("left in the state directory after Purge: %q", left)
	}
}
