package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// controlPlane brings up 3 etcd, 2 apiservers, 2 controller-managers and 2
// schedulers as processes, and n stand-in nodes (kubelets arrive later).
func controlPlane(t *testing.T, nodes int, cmArgs ...string) (*process.Provider, *kubernetes.Clientset, *testenv.Nodes) {
	t.Helper()
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	cfg.Binary = binary(t)
	cfg.StateDir = t.TempDir()
	cfg.ControllerManagerArgs = cmArgs
	p, err := process.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	up(t, p, cfg.StateDir, 2*time.Minute)
	cs := clientFor(t, p.Kubeconfig(), "kstep")
	var specs []testenv.NodeSpec
	for i := range nodes {
		specs = append(specs, testenv.NodeSpec{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%2)}})
	}
	return p, cs, testenv.StartNodes(t, cs, specs...)
}

func rsOf(name string, replicas int32, cpu string) *appsv1.ReplicaSet {
	l := map[string]string{"app": name}
	c := corev1.Container{Name: "app", Image: "registry.kstep.local/app:v1"}
	if cpu != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}},
	}
}

// podsOf returns the active pods with label app=name, by node.
func podsOf(t *testing.T, cs kubernetes.Interface, name string) (active []corev1.Pod, byNode map[string]int) {
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		t.Fatal(err)
	}
	byNode = map[string]int{}
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			active = append(active, p)
			byNode[p.Spec.NodeName]++
		}
	}
	return active, byNode
}

func allBound(pods []corev1.Pod) bool {
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			return false
		}
	}
	return true
}

func TestReplicaSetsOnTheControlPlane(t *testing.T) {
	inLane(t, hollowProcs)
	p, cs, _ := controlPlane(t, 5)
	ctx := context.Background()
	rss := cs.AppsV1().ReplicaSets("default")
	if _, err := rss.Create(ctx, rsOf("web", 50, "100m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	took := testenv.Eventually(t, time.Minute, "50 bound pods", func() bool {
		pods, _ := podsOf(t, cs, "web")
		return len(pods) == 50 && allBound(pods)
	})
	_, byNode := podsOf(t, cs, "web")
	t.Logf("50 pods bound in %v, spread %v", took, byNode)
	for n, c := range byNode {
		if c < 8 || c > 12 {
			t.Errorf("LeastAllocated should spread 50 pods over 5 equal nodes evenly; %s has %d (%v)", n, c, byNode)
		}
	}
	// Deleted pods are replaced.
	pods, _ := podsOf(t, cs, "web")
	for _, p := range pods[:5] {
		if err := cs.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, time.Minute, "replacements", func() bool {
		pods, _ := podsOf(t, cs, "web")
		return len(pods) == 50 && allBound(pods)
	})
	for _, n := range []int32{10, 80} {
		if _, err := rss.Patch(ctx, "web", types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)), metav1.PatchOptions{}, "scale"); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, fmt.Sprint(n, " bound pods"), func() bool {
			pods, _ := podsOf(t, cs, "web")
			return len(pods) == int(n) && allBound(pods)
		})
	}
	// Background deletion: the pods go with the ReplicaSet.
	if err := rss.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "pods deleted with their ReplicaSet", func() bool {
		l, _ := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return len(l.Items) == 0
	})
	// Orphan deletion, through kubectl: the pods stay and lose their owner.
	if _, err := rss.Create(ctx, rsOf("orph", 4, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "4 pods", func() bool { pods, _ := podsOf(t, cs, "orph"); return len(pods) == 4 })
	k := kubectl{t: t, path: kubectlPath(t), conf: p.Kubeconfig()}
	k.run("delete", "rs", "orph", "--cascade=orphan")
	testenv.Eventually(t, time.Minute, "the orphaned ReplicaSet gone", func() bool {
		_, err := rss.Get(ctx, "orph", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	pods, _ = podsOf(t, cs, "orph")
	if len(pods) != 4 {
		t.Fatalf("orphaned pods: %d, want 4", len(pods))
	}
	for _, p := range pods {
		if len(p.OwnerReferences) != 0 {
			t.Errorf("pod %s still has owners %v", p.Name, p.OwnerReferences)
		}
	}
}

// leaseHolder reads who holds a kube-system lease.
func leaseHolder(cs kubernetes.Interface, name string) string {
	l, err := cs.CoordinationV1().Leases("kube-system").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// SIGKILL the leading controller-manager while a ReplicaSet scales up, and
// the leading scheduler while pods are pending: the standbys finish the work.
func TestLeaderFailover(t *testing.T) {
	inLane(t, hollowProcs)
	p, cs, _ := controlPlane(t, 3)
	ctx := context.Background()
	testenv.Eventually(t, 30*time.Second, "a controller-manager leader", func() bool { return leaseHolder(cs, "kstep-controller-manager") != "" })
	testenv.Eventually(t, 30*time.Second, "a scheduler leader", func() bool { return leaseHolder(cs, "kstep-scheduler") != "" })

	// Controller-manager: kill the leader right after the scale-up starts.
	cmLeader := leaseHolder(cs, "kstep-controller-manager")
	if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, rsOf("fo", 200, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the scale-up to start", func() bool { pods, _ := podsOf(t, cs, "fo"); return len(pods) > 0 })
	killed := time.Now()
	if err := p.Stop(ctx, cmLeader, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	before, _ := podsOf(t, cs, "fo")
	took := testenv.Eventually(t, 30*time.Second, "a new controller-manager leader", func() bool {
		h := leaseHolder(cs, "kstep-controller-manager")
		return h != "" && h != cmLeader
	})
	testenv.Eventually(t, 2*time.Minute, "200 pods", func() bool { pods, _ := podsOf(t, cs, "fo"); return len(pods) == 200 })
	t.Logf("controller-manager failover: leader %s killed with %d/200 pods; new leader after %v; all 200 pods %v after the kill",
		cmLeader, len(before), took, time.Since(killed))

	// Scheduler: kill the leader while pods are pending.
	schedLeader := leaseHolder(cs, "kstep-scheduler")
	if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, rsOf("pend", 100, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	killed = time.Now()
	if err := p.Stop(ctx, schedLeader, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	took = testenv.Eventually(t, 30*time.Second, "a new scheduler leader", func() bool {
		h := leaseHolder(cs, "kstep-scheduler")
		return h != "" && h != schedLeader
	})
	testenv.Eventually(t, 2*time.Minute, "100 bound pods", func() bool {
		pods, _ := podsOf(t, cs, "pend")
		return len(pods) == 100 && allBound(pods)
	})
	t.Logf("scheduler failover: leader %s killed; new leader after %v; all 100 pods bound %v after the kill", schedLeader, took, time.Since(killed))
	// The killed actors come back as standbys.
	for _, a := range []string{cmLeader, schedLeader} {
		if err := p.Start(ctx, a); err != nil {
			t.Fatalf("restart %s: %v", a, err)
		}
	}
}

// A node that stops renewing its Lease becomes Ready=Unknown and tainted
// within the grace period; its pods are evicted after the toleration and
// come back Ready elsewhere.
func TestNodeLifecycle(t *testing.T) {
	inLane(t, hollowProcs)
	_, cs, nodes := controlPlane(t, 3)
	ctx := context.Background()
	if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, rsOf("nl", 9, ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "9 running pods", func() bool {
		pods, _ := podsOf(t, cs, "nl")
		return len(pods) == 9 && allBound(pods) && allReady(pods)
	})
	_, byNode := podsOf(t, cs, "nl")
	victim := "node-0"
	if byNode[victim] == 0 {
		t.Fatalf("no pod on %s: %v", victim, byNode)
	}
	nodes.Pause(victim)
	paused := time.Now()
	detect := testenv.Eventually(t, 30*time.Second, "Ready=Unknown and the unreachable taint", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, victim, metav1.GetOptions{})
		if err != nil {
			return false
		}
		unknown, tainted := false, false
		for _, c := range n.Status.Conditions {
			unknown = unknown || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown)
		}
		for _, tt := range n.Spec.Taints {
			tainted = tainted || (tt.Key == corev1.TaintNodeUnreachable && tt.Effect == corev1.TaintEffectNoExecute)
		}
		return unknown && tainted
	})
	// kstep's defaults aim at detection within 10 s; the figure is logged,
	// not asserted (shared machines are noisy).
	testenv.Eventually(t, time.Minute, "9 Ready pods off the dead node", func() bool {
		pods, byNode := podsOf(t, cs, "nl")
		return len(pods) == 9 && byNode[victim] == 0 && allBound(pods) && allReady(pods)
	})
	t.Logf("node lifecycle: Ready=Unknown + taint %v after the lease stopped; pods Ready elsewhere %v after", detect, time.Since(paused))
}

func allReady(pods []corev1.Pod) bool {
	for _, p := range pods {
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		if !ready {
			return false
		}
	}
	return true
}
