package replicationcontroller

import (
	"context"

	"github.com/kstep-dev/kstep/cluster/controller/replicaset"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

var rcKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")

// owners shows ReplicationControllers to the ReplicaSet controller as
// ReplicaSets, and writes their status back as ReplicationControllers'.
type owners struct {
	inf    cache.SharedIndexInformer
	client kubernetes.Interface
}

var _ replicaset.Owners = owners{}

func (owners) Kind() schema.GroupVersionKind         { return rcKind }
func (o owners) Informer() cache.SharedIndexInformer { return o.inf }

func (owners) ReplicaSet(obj any) *appsv1.ReplicaSet {
	return toReplicaSet(obj.(*corev1.ReplicationController))
}

func (o owners) Get(ctx context.Context, namespace, name string) (metav1.Object, error) {
	rc, err := o.client.CoreV1().ReplicationControllers(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return rc, nil
}

// UpdateStatus compares in a ReplicationController's terms: it has no
// terminatingReplicas, so a status that differs only there is no write.
func (o owners) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) (runtime.Object, error) {
	want := toRCStatus(st)
	if apiequality.Semantic.DeepEqual(toRCStatus(rs.Status), want) {
		return nil, nil
	}
	got, err := o.client.CoreV1().ReplicationControllers(rs.Namespace).UpdateStatus(ctx, fromReplicaSet(rs, want), metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// EventObject names the ReplicationController, as upstream's Events do.
func (owners) EventObject(rs *appsv1.ReplicaSet) runtime.Object {
	return &corev1.ObjectReference{Kind: rcKind.Kind, APIVersion: rcKind.GroupVersion().String(),
		Namespace: rs.Namespace, Name: rs.Name, UID: rs.UID, ResourceVersion: rs.ResourceVersion}
}

// toReplicaSet is upstream's Convert_v1_ReplicationController_To_apps_ReplicaSet
// for the fields the controller reads. It shares rc's maps and slices (the
// result is read-only, as rc is in the cache); a nil template, which
// validation refuses, becomes an empty one.
func toReplicaSet(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: rc.ObjectMeta,
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        rc.Spec.Replicas,
			MinReadySeconds: rc.Spec.MinReadySeconds,
			Selector:        &metav1.LabelSelector{MatchLabels: rc.Spec.Selector},
		},
		Status: appsv1.ReplicaSetStatus{
			Replicas:             rc.Status.Replicas,
			FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
			ReadyReplicas:        rc.Status.ReadyReplicas,
			AvailableReplicas:    rc.Status.AvailableReplicas,
			ObservedGeneration:   rc.Status.ObservedGeneration,
		},
	}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template
	}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type: appsv1.ReplicaSetConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return rs
}

// fromReplicaSet is the way back, for the body of a status write: the
// apiserver keeps the stored spec on /status, so only the metadata's
// resourceVersion and the status matter, but the body is a whole object.
func fromReplicaSet(rs *appsv1.ReplicaSet, st corev1.ReplicationControllerStatus) *corev1.ReplicationController {
	tmpl := rs.Spec.Template
	return &corev1.ReplicationController{
		ObjectMeta: rs.ObjectMeta,
		Spec: corev1.ReplicationControllerSpec{
			Replicas:        rs.Spec.Replicas,
			MinReadySeconds: rs.Spec.MinReadySeconds,
			Selector:        rs.Spec.Selector.MatchLabels,
			Template:        &tmpl,
		},
		Status: st,
	}
}

// toRCStatus drops what a ReplicationController's status lacks
// (terminatingReplicas); the condition types are the same strings
// (ReplicaFailure).
func toRCStatus(st appsv1.ReplicaSetStatus) corev1.ReplicationControllerStatus {
	out := corev1.ReplicationControllerStatus{
		Replicas:             st.Replicas,
		FullyLabeledReplicas: st.FullyLabeledReplicas,
		ReadyReplicas:        st.ReadyReplicas,
		AvailableReplicas:    st.AvailableReplicas,
		ObservedGeneration:   st.ObservedGeneration,
	}
	for _, c := range st.Conditions {
		out.Conditions = append(out.Conditions, corev1.ReplicationControllerCondition{
			Type: corev1.ReplicationControllerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return out
}
