package nodelifecycle

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/internal/testenv"
)

// TestFullDisruptionEvictsNothing: when every node stops renewing its Lease
// at once (what an etcd out of space or every apiserver unreachable looks
// like), the nodes are declared Ready=Unknown and kept free of new pods, but
// no NoExecute taint is set and no pod is evicted, neither then nor when
// the nodes renew again one after the other. A node that then dies alone is
// judged as a lone dead node: tainted, its pod evicted.
func TestFullDisruptionEvictsNothing(t *testing.T) {
	etcdURL, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, etcdURL, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	nodes := testenv.StartNodes(t, cs, testenv.NodeSpec{Name: "n1"}, testenv.NodeSpec{Name: "n2"})
	cc := testenv.ControllerContext(t, api.Config)
	cc.Options.NodeMonitorGracePeriod = 3 * time.Second
	cc.Options.NodeMonitorPeriod = 100 * time.Millisecond
	ctx := t.Context()
	one := int64(1)
	for _, n := range []string{"n1", "n2"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "on-" + n, Namespace: "default"}, Spec: corev1.PodSpec{
			NodeName:    n,
			Containers:  []corev1.Container{{Name: "c", Image: "app"}},
			Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &one}},
		}}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testenv.RunController(t, New(cc), cc)

	taints := func(name string) (unknown, noExecute, noSchedule bool) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := readyCondition(n); c != nil && c.Status == corev1.ConditionUnknown {
			unknown = true
		}
		for _, tt := range n.Spec.Taints {
			if tt.Key == corev1.TaintNodeUnreachable {
				noExecute = noExecute || tt.Effect == corev1.TaintEffectNoExecute
				noSchedule = noSchedule || tt.Effect == corev1.TaintEffectNoSchedule
			}
		}
		return
	}
	// exists: not evicted (an evicted pod on a dead node stays, terminating,
	// until its kubelet or the pod GC finishes it).
	exists := func(name string) bool {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil && p.DeletionTimestamp == nil
	}

	nodes.Pause("n1")
	nodes.Pause("n2")
	testenv.Eventually(t, 20*time.Second, "both nodes Ready=Unknown and unschedulable", func() (bool, error) {
		u1, _, s1 := taints("n1")
		u2, _, s2 := taints("n2")
		return u1 && u2 && s1 && s2, nil
	})
	// Far past the grace period plus the pods' 1 s toleration.
	testenv.Consistently(t, 4*time.Second, "no NoExecute taint, no eviction", func() (bool, error) {
		_, x1, _ := taints("n1")
		_, x2, _ := taints("n2")
		return !x1 && !x2 && exists("on-n1") && exists("on-n2"), nil
	})

	// The outage ends: n2 renews first, n1 1.5 s later. Leaving full
	// disruption gives n1 a full grace period (3 s) from then, so it is
	// never condemned; judged by its old heartbeat, it would be tainted at
	// once and its pod evicted after its 1 s toleration, before it renews.
	if err := nodes.Resume(ctx, "n2"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := nodes.Resume(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	testenv.Consistently(t, 5*time.Second, "after the outage: no NoExecute taint, no eviction", func() (bool, error) {
		_, x1, _ := taints("n1")
		_, x2, _ := taints("n2")
		return !x1 && !x2 && exists("on-n1") && exists("on-n2"), nil
	})

	// A lone dead node is still one: tainted, its pod evicted.
	nodes.Pause("n1")
	testenv.Eventually(t, 20*time.Second, "n1, alone dead, tainted NoExecute and its pod evicted", func() (bool, error) {
		_, x1, _ := taints("n1")
		return x1 && !exists("on-n1"), nil
	})
	if !exists("on-n2") {
		t.Error("the pod of the healthy node was evicted")
	}
}
