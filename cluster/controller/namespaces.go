package controller

import (
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// NamespaceActive reports whether the cached namespace exists and is not
// being deleted: what a controller that puts an object in every namespace
// (the default ServiceAccount, kube-root-ca.crt) checks first. A
// terminating one is being emptied by the namespace controller, and
// creating in it would fight that (the apiserver refuses it anyway).
func NamespaceActive(namespaces corelisters.NamespaceLister, name string) (bool, error) {
	ns, err := namespaces.Get(name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return ns.DeletionTimestamp == nil && ns.Status.Phase != corev1.NamespaceTerminating, nil
}

// NamespaceOf is a namespace event handler's key: the namespace's name.
func NamespaceOf(obj any) (string, bool) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return "", false
	}
	return ns.Name, true
}

// ObjectNamespace is a namespace-keyed controller's key for an object's
// event: the namespace the object (or a deletion's tombstone) is in.
func ObjectNamespace(obj any) (string, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return m.GetNamespace(), true
}
