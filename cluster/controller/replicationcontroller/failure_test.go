package replicationcontroller_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kstep-dev/kstep/cluster/controller/replicationcontroller"
	"github.com/kstep-dev/kstep/cluster/controller/resourcequota"
	"github.com/kstep-dev/kstep/internal/testenv"
)

// Upstream's conformance spec "should surface a failure condition on a
// common issue like exceeded quota": a ResourceQuota of two pods, a
// ReplicationController of three. The third create is refused (403, the
// quota's) and the status says so with ReplicaFailure; scaled to two, the
// condition goes. A namespace that is being deleted refuses creates with
// a 403 too, but with its own cause, and that one the controller leaves
// alone.
func TestFailureConditionOnExceededQuota(t *testing.T) {
	c := testenv.StartControllerCluster(t, "rc", replicationcontroller.New, resourcequota.New)
	ns := c.Namespace(t)
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "condition-test"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}}
	if _, err := c.Client.CoreV1().ResourceQuotas(ns).Create(c.Ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the quota's status", func() bool {
		got, err := c.Client.CoreV1().ResourceQuotas(ns).Get(c.Ctx, q.Name, metav1.GetOptions{})
		return err == nil && got.Status.Hard.Pods().Cmp(resource.MustParse("2")) == 0
	})
	rc, err := c.Client.CoreV1().ReplicationControllers(ns).Create(c.Ctx, newRC("condition-test", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	failure := func() *corev1.ReplicationControllerCondition {
		got, err := c.Client.CoreV1().ReplicationControllers(ns).Get(c.Ctx, rc.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, cond := range got.Status.Conditions {
			if cond.Type == corev1.ReplicationControllerReplicaFailure {
				return &got.Status.Conditions[i]
			}
		}
		return nil
	}
	testenv.Eventually(t, 30*time.Second, "a ReplicaFailure condition", func() bool {
		f := failure()
		return f != nil && f.Status == corev1.ConditionTrue && f.Reason == "FailedCreate"
	})
	t.Logf("ReplicaFailure: %s", failure().Message)

	if _, err := c.Client.CoreV1().ReplicationControllers(ns).Patch(c.Ctx, rc.Name, types.MergePatchType,
		[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the ReplicaFailure condition gone", func() bool { return failure() == nil })
}
