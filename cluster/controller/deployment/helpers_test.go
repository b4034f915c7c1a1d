package deployment

import (
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Builders for the pure-function tests.

var t0 = time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC)

// rolling is a RollingUpdate Deployment; surge and unavailable are ints or
// percent strings ("25%").
func rolling(replicas int32, surge, unavailable any) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "d-uid", Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.kstep.local/app:v1"}}},
			},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ios(surge), MaxUnavailable: ios(unavailable)}},
			RevisionHistoryLimit:    ptr.To[int32](10),
			ProgressDeadlineSeconds: ptr.To[int32](600),
		},
	}
}

func ios(v any) *intstr.IntOrString {
	switch x := v.(type) {
	case int:
		return ptr.To(intstr.FromInt32(int32(x)))
	case string:
		return ptr.To(intstr.FromString(x))
	}
	panic(fmt.Sprintf("ios(%v)", v))
}

// rs is a ReplicaSet asked for replicas with available of them available
// (and as many active and ready), created age steps after t0: a larger
// age is newer.
func rs(name string, replicas, available int32, age int) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid"),
			CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Minute))},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas)},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: available, AvailableReplicas: available,
			ObservedGeneration: 1},
	}
}

// sized records the replica annotations rs got when d was sized desired.
func sized(r *appsv1.ReplicaSet, desired, maxReplicas int32) *appsv1.ReplicaSet {
	setReplicasAnnotations(r, desired, maxReplicas)
	return r
}

func withRevision(r *appsv1.ReplicaSet, rev int) *appsv1.ReplicaSet {
	if r.Annotations == nil {
		r.Annotations = map[string]string{}
	}
	r.Annotations[RevisionAnnotation] = strconv.Itoa(rev)
	return r
}
