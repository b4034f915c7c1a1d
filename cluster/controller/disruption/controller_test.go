package disruption_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller/disruption"
	"github.com/kstep-dev/kstep/internal/testenv"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The disruption controller keeps a budget's status from its pods, and
// pods/eviction spends it: 429 naming the budget when it allows nothing,
// 201 (the pod deleted, the disruption taken) when it allows one, 201 for a
// pod no budget covers, 500 for a pod two budgets cover; maxUnavailable
// counts from the pods' controller's replicas.
func TestEvictionHonoursBudgets(t *testing.T) {
	etcdURL, _ := testenv.Etcd(t)
	api := testenv.StartAPIServer(t, etcdURL, nil)
	cs := kubernetes.NewForConfigOrDie(api.Config)
	testenv.StartNodes(t, cs, testenv.NodeSpec{Name: "n1"})
	cc := testenv.ControllerContext(t, api.Config)
	testenv.RunController(t, disruption.New(cc), cc)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	rs, err := cs.AppsV1().ReplicaSets("default").Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "app"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name string, labels map[string]string, owned bool) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: "n1",
			Containers: []corev1.Container{{Name: "c", Image: "app"}}}}
		if owned {
			p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
		}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	web := map[string]string{"app": "web"}
	for _, n := range []string{"web-0", "web-1", "web-2"} {
		pod(n, web, true)
	}
	pod("loner", map[string]string{"app": "loner"}, false)
	evict := func(name string) error {
		return cs.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}})
	}
	status := func(name string, want func(policyv1.PodDisruptionBudgetStatus) bool) policyv1.PodDisruptionBudgetStatus {
		t.Helper()
		var st policyv1.PodDisruptionBudgetStatus
		testenv.Eventually(t, 20*time.Second, "budget "+name+"'s status", func() (bool, error) {
			p, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			st = p.Status
			return p.Status.ObservedGeneration == p.Generation && want(st), nil
		})
		return st
	}

	pdb, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(3)), Selector: &metav1.LabelSelector{MatchLabels: web}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := status("web", func(s policyv1.PodDisruptionBudgetStatus) bool { return s.CurrentHealthy == 3 })
	if st.DesiredHealthy != 3 || st.ExpectedPods != 3 || st.DisruptionsAllowed != 0 {
		t.Errorf("minAvailable 3 of 3: %+v", st)
	}
	err = evict("web-0")
	var se *apierrors.StatusError
	if !apierrors.IsTooManyRequests(err) || !errorAs(err, &se) || len(se.ErrStatus.Details.Causes) == 0 ||
		!strings.Contains(se.ErrStatus.Details.Causes[0].Message, "The disruption budget web needs 3 healthy pods and has 3 currently") {
		t.Fatalf("eviction against a full budget: %v (%+v), want 429 naming the budget", err, se)
	}

	// The budget loosens: one disruption allowed, taken by one eviction.
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(2))
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Update(ctx, pdbWithRV(t, cs, pdb), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	status("web", func(s policyv1.PodDisruptionBudgetStatus) bool { return s.DisruptionsAllowed == 1 })
	if err := evict("web-0"); err != nil {
		t.Fatalf("eviction with a disruption allowed: %v", err)
	}
	if p, err := cs.CoreV1().Pods("default").Get(ctx, "web-0", metav1.GetOptions{}); err == nil && p.DeletionTimestamp == nil {
		t.Error("the evicted pod is not being deleted")
	}
	if err := evict("web-1"); !apierrors.IsTooManyRequests(err) {
		t.Errorf("second eviction: %v, want 429 (the first took the only disruption)", err)
	}
	st = status("web", func(s policyv1.PodDisruptionBudgetStatus) bool { return s.CurrentHealthy == 2 })
	if st.DisruptionsAllowed != 0 {
		t.Errorf("after the eviction: %+v", st)
	}

	// No budget: deleted at once.
	if err := evict("loner"); err != nil {
		t.Errorf("eviction of a pod no budget covers: %v", err)
	}

	// maxUnavailable counts from the ReplicaSet's 3 replicas.
	if err := cs.PolicyV1().PodDisruptionBudgets("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web-max"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: web}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st = status("web-max", func(s policyv1.PodDisruptionBudgetStatus) bool { return s.ExpectedPods == 3 })
	if st.DesiredHealthy != 2 || st.CurrentHealthy != 2 || st.DisruptionsAllowed != 0 {
		t.Errorf("maxUnavailable 1 of 3 replicas, 2 healthy: %+v", st)
	}

	// Two budgets over one pod: upstream refuses with a 500.
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web-too"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(0)), Selector: &metav1.LabelSelector{MatchLabels: web}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := evict("web-1"); !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "more than one PodDisruptionBudget") {
		t.Errorf("eviction under two budgets: %v, want 500", err)
	}

	// Bad budgets are refused.
	bad := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromString("120%")), MaxUnavailable: ptr.To(intstr.FromInt32(1))}}
	_, err = cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, bad, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "cannot be both set") || !strings.Contains(err.Error(), "greater than 100%") {
		t.Errorf("invalid budget: %v", err)
	}
}

func pdbWithRV(t *testing.T, cs kubernetes.Interface, want *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
	t.Helper()
	cur, err := cs.PolicyV1().PodDisruptionBudgets(want.Namespace).Get(t.Context(), want.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec = want.Spec
	return cur
}

func errorAs(err error, se **apierrors.StatusError) bool {
	s, ok := err.(*apierrors.StatusError)
	if ok {
		*se = s
	}
	return ok
}
