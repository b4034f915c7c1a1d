package kubelet

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/trace"
	"github.com/kstep-dev/kstep/internal/testenv"
)

func TestPodRunsAndBecomesReady(t *testing.T) {
	c := testenv.StartCluster(t)
	h := startHollow(t, c, "node-a", nil, nil)
	createPod(t, c, newPod("web", "node-a"))
	p := waitPod(t, c, "web", 10*time.Second, "ready", podReady)

	if p.Status.Phase != corev1.PodRunning {
		t.Errorf("phase %s, want Running", p.Status.Phase)
	}
	ip, err := netip.ParseAddr(p.Status.PodIP)
	if err != nil || !h.sim.PodCIDR().Contains(ip) {
		t.Errorf("podIP %q not in the node's range %v", p.Status.PodIP, h.sim.PodCIDR())
	}
	if len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != p.Status.PodIP {
		t.Errorf("podIPs %v", p.Status.PodIPs)
	}
	if p.Status.HostIP != h.sim.NodeIP().String() || p.Status.StartTime == nil {
		t.Errorf("hostIP %q startTime %v", p.Status.HostIP, p.Status.StartTime)
	}
	for _, ct := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		cond := findCondition(p.Status.Conditions, ct)
		if cond == nil || cond.Status != corev1.ConditionTrue || cond.LastTransitionTime.IsZero() {
			t.Errorf("condition %s = %+v", ct, cond)
		}
	}
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("containerStatuses %+v", p.Status.ContainerStatuses)
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.State.Running == nil || !cs.Ready || cs.Started == nil || !*cs.Started || cs.RestartCount != 0 ||
		!strings.HasPrefix(cs.ContainerID, "kstep-sim://") || !strings.HasPrefix(cs.ImageID, "sha256:") {
		t.Errorf("container status %+v", cs)
	}

	want := []string{trace.PodObservedKubelet, trace.PodSandboxReady, trace.PodImagePulled, trace.PodContainerStarted,
		trace.PodProbeReady, trace.PodStatusPersisted}
	testenv.Eventually(t, 5*time.Second, "every step stamped", func() (bool, error) { return len(steps(h.trace, "web")) >= len(want), nil }, fastPoll)
	if got := steps(h.trace, "web"); !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
}

func TestLeaseAndNodeStatus(t *testing.T) {
	c := testenv.StartCluster(t)
	startHollow(t, c, "node-l", nil, nil)
	ctx := context.Background()
	n, err := c.Client.CoreV1().Nodes().Get(ctx, "node-l", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc := findNodeCondition(n, corev1.NodeReady)
	if rc == nil || rc.Status != corev1.ConditionTrue {
		t.Errorf("Ready condition %+v", rc)
	}
	if q := n.Status.Capacity[corev1.ResourcePods]; q.Value() != 110 {
		t.Errorf("pods capacity %v", q.String())
	}
	if n.Status.NodeInfo.ContainerRuntimeVersion != "kstep-sim://v1" || n.Labels[corev1.LabelHostname] != "node-l" {
		t.Errorf("nodeInfo %+v labels %v", n.Status.NodeInfo, n.Labels)
	}
	var first time.Time
	testenv.Eventually(t, 5*time.Second, "lease", func() (bool, error) {
		l, err := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "node-l", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		first = l.Spec.RenewTime.Time
		return *l.Spec.HolderIdentity == "node-l" && len(l.OwnerReferences) == 1, nil
	}, fastPoll)
	testenv.Eventually(t, 5*time.Second, "lease renewal", func() (bool, error) {
		l, err := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, "node-l", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return l.Spec.RenewTime.After(first), nil
	}, fastPoll)
}

func findNodeCondition(n *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}
