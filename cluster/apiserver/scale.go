package apiserver

import (
	"net/http"

	"github.com/kstep-dev/kstep/cluster/apiserver/validation"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The scale subresource (autoscaling/v1 Scale) is a view of spec.replicas
// and status.replicas; writing it writes spec.replicas of the owner object,
// with the owner's resourceVersion as the Scale's.

func newScale(m *metav1.ObjectMeta, spec, status int32, selector string) *autoscalingv1.Scale {
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: scaleGVK.GroupVersion().String(), Kind: scaleGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp},
		Spec:   autoscalingv1.ScaleSpec{Replicas: spec},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: selector},
	}
}

// setReplicas writes a Scale's spec.replicas into its owner.
func setReplicas(obj runtime.Object, n int32) {
	switch o := obj.(type) {
	case *appsv1.ReplicaSet:
		o.Spec.Replicas = &n
	case *appsv1.Deployment:
		o.Spec.Replicas = &n
	case *appsv1.StatefulSet:
		o.Spec.Replicas = &n
	case *corev1.ReplicationController:
		o.Spec.Replicas = &n
	}
}

func validateScale(sc *autoscalingv1.Scale) error {
	if errs := validation.ValidateCreate(sc); len(errs) > 0 {
		return newInvalid(scaleGVK.GroupKind(), sc.Name, errs)
	}
	return nil
}

// writeScale runs a scale write: next turns the current Scale into the
// desired one.
func (q *request) writeScale(next func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error)) error {
	// The owner's spec is what changes: the main resource's rules apply.
	obj, err := q.mutate(q.ri.Name, "", func(cur runtime.Object) (runtime.Object, error) {
		sc, err := toScale(cur)
		if err != nil {
			return nil, err
		}
		want, err := next(sc.(*autoscalingv1.Scale))
		if err != nil {
			return nil, err
		}
		if err := validateScale(want); err != nil {
			return nil, err
		}
		if err := q.checkRV(want.ResourceVersion, cur, q.ri.Name); err != nil {
			return nil, err
		}
		setReplicas(cur, want.Spec.Replicas)
		return cur, nil
	})
	if err != nil {
		return err
	}
	sc, err := toScale(obj)
	if err != nil {
		return err
	}
	q.s.writeObject(q.w, q.r, http.StatusOK, q.res, sc)
	return nil
}

func (q *request) updateScale() error {
	data, mt, err := q.body()
	if err != nil {
		return err
	}
	body := &autoscalingv1.Scale{}
	if err := q.decodeBody(data, mt, body, scaleGVK); err != nil {
		return err
	}
	if err := q.checkNames(&body.ObjectMeta); err != nil {
		return err
	}
	return q.writeScale(func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error) { return body, nil })
}
