package controller

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// OwnerQueue is the work queue of a controller whose objects of one kind
// control pods (Jobs, DaemonSets, StatefulSets): it holds the owners' keys,
// added on every change of an owner and of a pod an owner of that kind
// controls. A pod's arrival is one creation observed in the owner's
// expectations, an owner's deletion forgets them.
type OwnerQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	Exp  *Expectations
	kind schema.GroupVersionKind
}

// NewOwnerQueue builds the queue of the controller name for owners of kind
// and registers its handlers on the owners' and the pods' informers.
func NewOwnerQueue(c *Context, name string, kind schema.GroupVersionKind, owners, pods cache.SharedIndexInformer) *OwnerQueue {
	q := &OwnerQueue{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name}),
		Exp:  NewExpectations(c.Options.ExpectationsTTL, c.Now),
		kind: kind,
	}
	_, _ = owners.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    q.Enqueue,
		UpdateFunc: func(_, cur any) { q.Enqueue(cur) },
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				q.Exp.Forget(key)
			}
		},
	})
	_, _ = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, ok := q.OwnerKey(obj); ok {
				q.Exp.Observed(key, 1, 0)
				q.Add(key)
			}
		},
		UpdateFunc: func(old, cur any) {
			if o, c := old.(*corev1.Pod), cur.(*corev1.Pod); o.ResourceVersion == c.ResourceVersion {
				return
			}
			if key, ok := q.OwnerKey(cur); ok {
				q.Add(key)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if key, ok := q.OwnerKey(obj); ok {
				q.Add(key)
			}
		},
	})
	return q
}

// Enqueue adds an owner's key.
func (q *OwnerQueue) Enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		q.Add(key)
	}
}

// OwnerKey is the key of the owner of the queue's kind that controls the
// pod obj, if one does.
func (q *OwnerQueue) OwnerKey(obj any) (string, bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return "", false
	}
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil || ref.Kind != q.kind.Kind || ref.APIVersion != q.kind.GroupVersion().String() {
		return "", false
	}
	return pod.Namespace + "/" + ref.Name, true
}
