// Package namespace is the namespace controller: it empties a namespace
// being deleted and then lets it go.
//
// A Namespace with a deletionTimestamp (phase Terminating, set by the
// apiserver) and the `kubernetes` spec finalizer is emptied through the
// API: every namespaced resource kstep serves (contents.go) is deleted
// with deletecollection, or a delete per object where the resource has no
// deletecollection (services), with propagationPolicy Background. Deletion
// is the ordinary kind: a bound pod goes through its grace period and the
// kubelet ends it, an object with finalizers waits for them. The namespace
// is rechecked with backoff (RecheckMin..RecheckMax) until a pass finds
// every resource empty; then the `kubernetes` finalizer is removed with
// PUT namespaces/<n>/finalize, or, on an apiserver that does not serve that
// subresource (kstep's today), with an update of the namespace. With no
// finalizer left, the apiserver deletes it.
//
// It owns: the deletion of a terminating namespace's content and the
// `kubernetes` spec finalizer. It writes only through the apiserver.
//
// It must not touch active namespaces, other finalizers (metadata
// finalizers are their owners'; orphan and foregroundDeletion on a
// Namespace are the garbage collector's), or the namespace's status: the
// kstep apiserver deletes a terminating Namespace on any write once its
// metadata.finalizers are empty, whatever spec.finalizers says, so a status
// write here would drop the namespace with its content still in etcd.
package namespace
