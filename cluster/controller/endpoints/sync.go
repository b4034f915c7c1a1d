package endpoints

import (
	"context"
	"fmt"

	"github.com/kstep-dev/kstep/cluster/controller"
	"github.com/kstep-dev/kstep/cluster/trace"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// sync makes the Endpoints of one Service say what its pods are: created,
// updated only when something changed, deleted with the Service.
func (e *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := e.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return e.deleteOrphan(ctx, ns, name)
	}
	if err != nil {
		return err
	}
	if len(svc.Spec.Selector) == 0 {
		return nil // its Endpoints are its owner's to write
	}
	if svc.DeletionTimestamp != nil {
		return nil // going: its deletion takes the Endpoints
	}
	pods, err := controller.PodsSelectedBy(e.pods, ns, svc.Spec.Selector)
	if err != nil {
		return err
	}
	want, wantLabels := subsets(svc, pods), desiredLabels(svc)

	obj, exists, err := e.written.GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: wantLabels}, Subsets: want}
		got, err := e.client.CoreV1().Endpoints(ns).Create(ctx, ep, metav1.CreateOptions{})
		if err != nil {
			// AlreadyExists: someone else created it; the retry updates.
			return e.failed(svc, "creating", err)
		}
		e.written.Wrote(got)
		e.stamp(nil, want)
		return nil
	}
	cur := obj.(*corev1.Endpoints)
	if apiequality.Semantic.DeepEqual(cur.Subsets, want) && labels.Equals(cur.Labels, wantLabels) {
		return nil
	}
	ep := cur.DeepCopy()
	ep.Subsets, ep.Labels = want, wantLabels
	got, err := e.client.CoreV1().Endpoints(ns).Update(ctx, ep, metav1.UpdateOptions{})
	if err != nil {
		// A 409: someone else wrote it; a 404: it was deleted and the
		// informer's delete will let the retry create it. Requeued.
		return e.failed(svc, "updating", err)
	}
	e.written.Wrote(got)
	e.stamp(cur.Subsets, want)
	return nil
}

// stamp emits endpoints.updated for each pod the acknowledged write put in
// addresses.
func (e *Controller) stamp(prev, next []corev1.EndpointSubset) {
	if e.tracer == nil {
		return
	}
	at := e.now()
	for _, ref := range newlyReady(prev, next) {
		e.tracer.EmitAt(at, trace.EndpointsUpdated, "Pod", ref.Namespace, ref.Name, ref.UID)
	}
}

func (e *Controller) failed(svc *corev1.Service, what string, err error) error {
	if e.recorder != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		e.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %s/%s: %v", svc.Namespace, svc.Name, err)
	}
	return fmt.Errorf("%s endpoints %s/%s: %w", what, svc.Namespace, svc.Name, err)
}

// deleteOrphan deletes the Endpoints of a Service that is gone. The
// Service's absence from the cache is confirmed live first: a cache behind
// a just-created Service must not cost it its Endpoints.
func (e *Controller) deleteOrphan(ctx context.Context, ns, name string) error {
	ep, err := e.endpoints.Endpoints(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = e.client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil // the Service exists; its own event brings it here
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("checking service %s/%s: %w", ns, name, err)
	}
	uid := ep.UID
	err = e.client.CoreV1().Endpoints(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting endpoints %s/%s: %w", ns, name, err)
	}
	return nil
}
