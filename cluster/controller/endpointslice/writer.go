package endpointslice

import (
	"context"
	"fmt"
	"sync"

	"github.com/kstep-dev/kstep/cluster/controller"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// writer is what both controllers share between a plan and the
// apiserver: the view of one manager's slices of a Service that includes
// its own acknowledged writes the informer has not delivered yet (created,
// updated, deleted), and the sending of a plan.
type writer struct {
	client    kubernetes.Interface
	managedBy string
	// written layers the slice informer with the slices this controller
	// created or updated; deleted holds the UIDs it deleted that the
	// informer may still show (forgotten on the informer's delete).
	written *controller.WriteCache
	mu      sync.Mutex
	deleted map[types.UID]bool
}

func newWriter(c *controller.Context, managedBy string, onSlice func(*discoveryv1.EndpointSlice)) (*writer, cache.SharedIndexInformer) {
	inf := c.Informers.Discovery().V1().EndpointSlices().Informer()
	controller.MustIndex(inf, controller.EndpointSlicesByService)
	w := &writer{client: c.Client, managedBy: managedBy,
		written: controller.NewWriteCache(inf, true), deleted: map[types.UID]bool{}}
	mine := func(obj any) (*discoveryv1.EndpointSlice, bool) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		s, ok := obj.(*discoveryv1.EndpointSlice)
		return s, ok && s.Labels[discoveryv1.LabelManagedBy] == managedBy
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if s, ok := mine(obj); ok {
				onSlice(s)
			}
		},
		UpdateFunc: func(_, obj any) {
			if s, ok := mine(obj); ok {
				onSlice(s)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			s, ok := obj.(*discoveryv1.EndpointSlice)
			if !ok {
				return
			}
			w.mu.Lock()
			delete(w.deleted, s.UID)
			w.mu.Unlock()
			if s.Labels[discoveryv1.LabelManagedBy] == managedBy {
				onSlice(s)
			}
		},
	})
	return w, inf
}

// serviceKey is the key of the Service a slice belongs to ("" for none).
func serviceKey(s *discoveryv1.EndpointSlice) string {
	if n := s.Labels[discoveryv1.LabelServiceName]; n != "" {
		return s.Namespace + "/" + n
	}
	return ""
}

// slicesOf returns this manager's slices of Service ns/name as they are
// after its own acknowledged writes.
func (w *writer) slicesOf(ns, name string) ([]*discoveryv1.EndpointSlice, error) {
	objs, err := w.written.ByIndex(controller.EndpointSlicesByService, ns+"/"+name)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*discoveryv1.EndpointSlice
	for _, o := range objs {
		s, ok := o.(*discoveryv1.EndpointSlice)
		if ok && s.Labels[discoveryv1.LabelManagedBy] == w.managedBy && !w.deleted[s.UID] {
			out = append(out, s)
		}
	}
	return out, nil
}

// apply sends p in order, calling wrote with every slice the apiserver
// acknowledged creating or updating. The first failure ends it: the retry
// plans again from what was acknowledged.
func (w *writer) apply(ctx context.Context, p plan, wrote func(*discoveryv1.EndpointSlice)) error {
	for _, s := range p.create {
		got, err := w.client.DiscoveryV1().EndpointSlices(s.Namespace).Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating endpointslice for %s: %w", serviceKey(s), err)
		}
		w.written.Wrote(got)
		wrote(got)
	}
	for _, s := range p.update {
		got, err := w.client.DiscoveryV1().EndpointSlices(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("updating endpointslice %s/%s: %w", s.Namespace, s.Name, err)
		}
		w.written.Wrote(got)
		wrote(got)
	}
	for _, s := range p.delete {
		if err := w.deleteSlice(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) deleteSlice(ctx context.Context, s *discoveryv1.EndpointSlice) error {
	uid := s.UID
	w.mu.Lock()
	w.deleted[uid] = true
	w.mu.Unlock()
	err := w.client.DiscoveryV1().EndpointSlices(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		w.mu.Lock()
		delete(w.deleted, uid)
		w.mu.Unlock()
		return fmt.Errorf("deleting endpointslice %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// deleteAll deletes this manager's slices of Service ns/name.
func (w *writer) deleteAll(ctx context.Context, ns, name string) error {
	have, err := w.slicesOf(ns, name)
	if err != nil {
		return err
	}
	for _, s := range have {
		if err := w.deleteSlice(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// deleteOrphans deletes this manager's slices of a Service the cache no
// longer holds, once the apiserver confirms it is gone: a cache behind a
// just-created Service must not cost it its slices.
func (w *writer) deleteOrphans(ctx context.Context, ns, name string) error {
	have, err := w.slicesOf(ns, name)
	if err != nil || len(have) == 0 {
		return err
	}
	_, err = w.client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil // it exists; its own event brings it here
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("checking service %s/%s: %w", ns, name, err)
	}
	return w.deleteAll(ctx, ns, name)
}

// template is the metadata of svc's slices with labels.
func sliceTemplate(svc *corev1.Service, labels map[string]string) template {
	return template{
		namespace: svc.Namespace, generateName: svc.Name + "-", labels: labels,
		owner: *metav1.NewControllerRef(svc, corev1.SchemeGroupVersion.WithKind("Service")),
	}
}
