package replicationcontroller

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func sampleRC() *corev1.ReplicationController {
	at := metav1.NewTime(time.Unix(1e9, 0))
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "rc-uid", ResourceVersion: "7", Generation: 3,
			Labels: map[string]string{"app": "web"}},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](4), MinReadySeconds: 5, Selector: map[string]string{"app": "web"},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "fe"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}},
		Status: corev1.ReplicationControllerStatus{Replicas: 4, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 2,
			Conditions: []corev1.ReplicationControllerCondition{{Type: corev1.ReplicationControllerReplicaFailure, Status: corev1.ConditionTrue,
				LastTransitionTime: at, Reason: "FailedCreate", Message: "quota"}}},
	}
}

// The ReplicaSet the sync sees has every field it reads, and the way back
// gives the ReplicationController it came from.
func TestConversion(t *testing.T) {
	rc := sampleRC()
	rs := toReplicaSet(rc)
	want := &appsv1.ReplicaSet{
		ObjectMeta: rc.ObjectMeta,
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](4), MinReadySeconds: 5,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: *rc.Spec.Template},
		Status: appsv1.ReplicaSetStatus{Replicas: 4, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 2,
			Conditions: []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
				LastTransitionTime: rc.Status.Conditions[0].LastTransitionTime, Reason: "FailedCreate", Message: "quota"}}},
	}
	if d := cmp.Diff(want, rs); d != "" {
		t.Fatalf("toReplicaSet (-want +got):\n%s", d)
	}
	if d := cmp.Diff(rc, fromReplicaSet(rs, toRCStatus(rs.Status))); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
	if got := (owners{}).EventObject(rs).(*corev1.ObjectReference); *got != (corev1.ObjectReference{Kind: "ReplicationController",
		APIVersion: "v1", Namespace: "ns", Name: "web", UID: "rc-uid", ResourceVersion: "7"}) {
		t.Fatalf("event object %+v", got)
	}
	if rs := toReplicaSet(&corev1.ReplicationController{}); rs.Spec.Selector == nil || len(rs.Spec.Template.Labels) != 0 {
		t.Fatalf("bare rc: %+v", rs.Spec)
	}
}

// A ReplicationController has no terminatingReplicas: a status that
// differs from the stored one only there is not written.
func TestUpdateStatusComparesAsAReplicationController(t *testing.T) {
	rc := sampleRC()
	cs := fake.NewClientset(rc)
	o := owners{client: cs}
	rs := toReplicaSet(rc)
	st := *rs.Status.DeepCopy()
	st.TerminatingReplicas = ptr.To[int32](2)
	got, err := o.UpdateStatus(context.Background(), rs, st)
	if err != nil || got != nil {
		t.Fatalf("UpdateStatus = %v, %v; want nothing written", got, err)
	}
	if n := len(cs.Actions()); n != 0 {
		t.Fatalf("%d requests, want none", n)
	}

	st.ReadyReplicas, st.Conditions = 4, nil
	st.AvailableReplicas = 4
	got, err = o.UpdateStatus(context.Background(), rs, st)
	if err != nil || got == nil {
		t.Fatalf("UpdateStatus = %v, %v", got, err)
	}
	stored, err := cs.CoreV1().ReplicationControllers("ns").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := stored.Status; s.ReadyReplicas != 4 || s.AvailableReplicas != 4 || len(s.Conditions) != 0 || s.Replicas != 4 {
		t.Fatalf("stored status %+v", s)
	}
	if a := cs.Actions(); len(a) < 1 || a[0].GetVerb() != "update" || a[0].GetSubresource() != "status" {
		t.Fatalf("actions %v, want an update of status", a)
	}
}
