package apiserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kstep-dev/kstep/cluster/storage"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// systemNamespaces exist in every cluster from the first boot.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

func (s *Server) namespaces() *resource {
	return s.resources[corev1.SchemeGroupVersion.WithResource("namespaces")]
}

// bootstrap creates the system namespaces if absent. Every apiserver runs
// it; creation is a transaction on absence, so racing apiservers are fine.
func (s *Server) bootstrap(ctx context.Context) {
	ns := s.namespaces()
	for _, name := range systemNamespaces {
		for ctx.Err() == nil {
			obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
			prepareForCreate(ns, obj, metav1.NewTime(s.now()))
			val, err := encodeStored(ns, obj)
			if err == nil {
				_, err = s.store.Create(ctx, ns.key("", name), val)
			}
			if err == nil || errors.Is(err, storage.ErrExists) {
				break
			}
			s.log.Warn("creating system namespace", "namespace", name, "err", err)
			sleep(ctx, 200*time.Millisecond)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// namespaceWritable refuses writes into a namespace that does not exist
// (404) or is being deleted (403). The namespace cache answers the common
// case; a miss is checked against etcd, since the cache may lag a namespace
// created a moment ago.
func (s *Server) namespaceWritable(ctx context.Context, name string) error {
	ns := s.namespaces()
	gr := ns.gvr.GroupResource()
	c := s.cacher(ns)
	// A create after this apiserver answered a namespace's deletion sees
	// it Terminating (upstream's NamespaceLifecycle looks such a namespace
	// up live): the cache may not have had it yet.
	if rev := s.nsMarked.Load(); rev > c.RV() {
		if err := c.WaitFor(ctx, rev); err != nil {
			return apierrors.NewTimeoutError(fmt.Sprintf("namespace %s: %v", name, err), 1)
		}
	}
	var obj *corev1.Namespace
	if e, ok := c.Get(ns.key("", name)); ok {
		obj = e.Object().(*corev1.Namespace)
	} else {
		kv, err := s.store.Get(ctx, ns.key("", name))
		if err != nil {
			return storageError(err, gr, name)
		}
		o, err := decodeStored(ns, kv.Value, kv.ModRev)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		obj = o.(*corev1.Namespace)
	}
	if obj.Status.Phase == corev1.NamespaceTerminating || obj.DeletionTimestamp != nil {
		msg := fmt.Sprintf("namespace %s is being terminated", name)
		err := apierrors.NewForbidden(gr, name, fmt.Errorf("unable to create new content in namespace %s because it is being terminated", name))
		// As upstream's NamespaceLifecycle: the cause tells a controller
		// this refusal from any other 403 (a ResourceQuota's, RBAC's).
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes,
			metav1.StatusCause{Type: corev1.NamespaceTerminatingCause, Message: msg, Field: "metadata.namespace"})
		return err
	}
	return nil
}

// namespaceMarked records that this apiserver marked a namespace
// Terminating at rev.
func (s *Server) namespaceMarked(rev int64) {
	for {
		cur := s.nsMarked.Load()
		if rev <= cur || s.nsMarked.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// namespaceFinalized reports whether a Namespace being deleted may go:
// nothing holds it, neither an object finalizer nor a spec finalizer (the
// namespace controller removes "kubernetes" once the namespace is empty).
func namespaceFinalized(ns *corev1.Namespace) bool {
	return len(ns.Finalizers) == 0 && len(ns.Spec.Finalizers) == 0
}
