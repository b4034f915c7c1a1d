package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/provider"
	"github.com/kstep-dev/kstep/cluster/provider/process"
	"github.com/kstep-dev/kstep/internal/testenv"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The whole chain on hollow nodes, as processes: 200 hollow kubelets (one
// watch each), 2 controller-managers, 2 schedulers, 2 apiservers, 3 etcd;
// 20 ReplicaSets of 100 become 2,000 Ready pods with IPs.
func TestHollowNodesEndToEnd(t *testing.T) {
	inLane(t, hollowProcs)
	cfg := provider.Spec{Topology: provider.DefaultTopology(), ReadyTimeout: time.Minute, StopGrace: 10 * time.Second}
	cfg.Binary = binary(t)
	cfg.StateDir = t.TempDir()
	cfg.HollowNodes = 200
	p, err := process.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	up(t, p, cfg.StateDir, 5*time.Minute)
	checkActorProcs(t, p, cfg.ActorProcs)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs := clientFor(t, p.Kubeconfig(), "kstep")
	testenv.Eventually(t, time.Minute, "200 Ready nodes", func() bool {
		l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		ready := 0
		for _, n := range l.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == 200
	})
	start := time.Now()
	for i := range 20 {
		if _, err := cs.AppsV1().ReplicaSets("default").Create(ctx, rsOf(fmt.Sprintf("h%02d", i), 100, ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Converged means exactly the 2,000 pods, every one Ready with an IP
	// and none terminating. Counting Ready pods alone is not enough: on a
	// machine loaded enough that some hollow nodes miss their Lease for
	// the grace period, node lifecycle evicts their pods, and until the
	// evicted ones are gone they still count as Ready beside their
	// replacements, which have not yet been scheduled.
	var pods []corev1.Pod
	took := testenv.Eventually(t, 4*time.Minute, "2,000 Ready pods and no others", func() bool {
		l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil || len(l.Items) != 2000 {
			return false
		}
		for _, p := range l.Items {
			if p.DeletionTimestamp != nil || p.Status.PodIP == "" || !allReady([]corev1.Pod{p}) {
				return false
			}
		}
		pods = l.Items
		return true
	})
	t.Logf("2,000 pods Ready on 200 hollow nodes %v after the first ReplicaSet (%.0f pods/s)", took, 2000/time.Since(start).Seconds())
	checkFiveConditions(t, pods)
}

// checkFiveConditions: every pod carries the five conditions upstream's
// kubelet writes, all True for a Ready pod, PodReadyToStartContainers no
// earlier than PodScheduled.
func checkFiveConditions(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	bad := 0
	for _, p := range pods {
		at := map[corev1.PodConditionType]metav1.Time{}
		for _, c := range p.Status.Conditions {
			if c.Status == corev1.ConditionTrue {
				at[c.Type] = c.LastTransitionTime
			}
		}
		ok := len(at) == 5
		for _, ct := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			_, has := at[ct]
			ok = ok && has
		}
		if ok && at[corev1.PodReadyToStartContainers].Time.Before(at[corev1.PodScheduled].Time) {
			ok = false
		}
		if !ok {
			if bad < 3 {
				t.Errorf("pod %s/%s: conditions %+v, want the five True, PodReadyToStartContainers not before PodScheduled", p.Namespace, p.Name, p.Status.Conditions)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d pods lack the five conditions", bad, len(pods))
	}
}
