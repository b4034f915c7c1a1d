package apiserver_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kstep-dev/kstep/cluster/apiserver"
)

// TestSchedulingGatedCondition: a pod created with scheduling gates gets
// upstream's PodScheduled=False SchedulingGated condition whatever status
// the client sent; one without gates, or bound, does not.
func TestSchedulingGatedCondition(t *testing.T) {
	e := newEnv(t)
	ctx := ctxT(t)
	pods := e.cs.CoreV1().Pods("default")
	pod := func(name string, gated bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.kstep.local/app:v1"}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}}
		if gated {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
		}
		return p
	}
	got, err := pods.Create(ctx, pod("gated", true), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonSchedulingGated, Message: apiserver.SchedulingGatedMessage}}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0] != want[0] {
		t.Errorf("gated pod conditions %+v, want %+v", got.Status.Conditions, want)
	}
	if apiserver.SchedulingGatedMessage != "Scheduling is blocked due to non-empty scheduling gates" {
		t.Errorf("message %q is not upstream's", apiserver.SchedulingGatedMessage)
	}
	plain, err := pods.Create(ctx, pod("plain", false), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Status.Conditions) != 0 {
		t.Errorf("ungated pod conditions %+v, want none", plain.Status.Conditions)
	}
}
