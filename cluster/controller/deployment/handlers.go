package deployment

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// Event handlers: each resolves an event to the Deployments it concerns and
// enqueues their keys. Nothing else happens here.

func (dc *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	dc.queue.Add(key)
}

// unwrap returns the object of a delete event, also from a tombstone.
func unwrap[T any](obj any) (T, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	v, ok := obj.(T)
	return v, ok
}

// resolve returns the Deployment a controller reference points to, if it
// is a Deployment this cache knows under that UID.
func (dc *Controller) resolve(namespace string, ref *metav1.OwnerReference) *appsv1.Deployment {
	if ref == nil || ref.Kind != deploymentKind.Kind {
		return nil
	}
	d, err := dc.dLister.Deployments(namespace).Get(ref.Name)
	if err != nil || d.UID != ref.UID {
		return nil
	}
	return d
}

// deploymentsSelecting returns the Deployments whose selector matches rs's
// labels: candidates to adopt an orphan.
func (dc *Controller) deploymentsSelecting(rs *appsv1.ReplicaSet) []*appsv1.Deployment {
	ds, err := dc.dLister.Deployments(rs.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*appsv1.Deployment
	for _, d := range ds {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(rs.Labels)) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func (dc *Controller) addReplicaSet(obj any) {
	rs, ok := obj.(*appsv1.ReplicaSet)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOf(rs); ref != nil {
		if d := dc.resolve(rs.Namespace, ref); d != nil {
			dc.enqueue(d)
		}
		return
	}
	if rs.DeletionTimestamp != nil {
		return
	}
	for _, d := range dc.deploymentsSelecting(rs) {
		dc.enqueue(d)
	}
}

func (dc *Controller) updateReplicaSet(oldObj, curObj any) {
	old, ok1 := oldObj.(*appsv1.ReplicaSet)
	cur, ok2 := curObj.(*appsv1.ReplicaSet)
	if !ok1 || !ok2 || cur.ResourceVersion == old.ResourceVersion {
		return // a resync: nothing changed
	}
	curRef, oldRef := metav1.GetControllerOf(cur), metav1.GetControllerOf(old)
	refChanged := !reflect.DeepEqual(curRef, oldRef)
	if refChanged && oldRef != nil {
		if d := dc.resolve(old.Namespace, oldRef); d != nil {
			dc.enqueue(d) // released or taken: its old owner recounts
		}
	}
	if curRef != nil {
		if d := dc.resolve(cur.Namespace, curRef); d != nil {
			dc.enqueue(d)
		}
		return
	}
	if refChanged || !reflect.DeepEqual(cur.Labels, old.Labels) {
		for _, d := range dc.deploymentsSelecting(cur) {
			dc.enqueue(d)
		}
	}
}

func (dc *Controller) deleteReplicaSet(obj any) {
	rs, ok := unwrap[*appsv1.ReplicaSet](obj)
	if !ok {
		return
	}
	if d := dc.resolve(rs.Namespace, metav1.GetControllerOf(rs)); d != nil {
		dc.enqueue(d)
	}
}

// Pods matter when they go: a Recreate rollout waits until the old ones are
// gone, and a RollingUpdate grows the new ReplicaSet only once the pods it
// replaces are terminating (committedPods). Pod creation and readiness
// reach us through the ReplicaSets' status.

func (dc *Controller) updatePod(oldObj, curObj any) {
	old, ok1 := oldObj.(*corev1.Pod)
	cur, ok2 := curObj.(*corev1.Pod)
	if !ok1 || !ok2 {
		return
	}
	leaving := old.DeletionTimestamp == nil && cur.DeletionTimestamp != nil
	finished := old.Status.Phase != cur.Status.Phase && (cur.Status.Phase == corev1.PodSucceeded || cur.Status.Phase == corev1.PodFailed)
	if leaving || finished {
		dc.enqueueForPod(cur)
	}
}

func (dc *Controller) deletePod(obj any) {
	if p, ok := unwrap[*corev1.Pod](obj); ok {
		dc.enqueueForPod(p)
	}
}

// enqueueForPod enqueues the Deployment owning the pod's ReplicaSet.
func (dc *Controller) enqueueForPod(p *corev1.Pod) {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return
	}
	rs, err := dc.rsLister.ReplicaSets(p.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return
	}
	if d := dc.resolve(rs.Namespace, metav1.GetControllerOf(rs)); d != nil {
		dc.enqueue(d)
	}
}
