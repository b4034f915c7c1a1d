package garbagecollector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// sync looks at one object twice: as an owner (it is being deleted and
// holds the orphan or foregroundDeletion finalizer, which are the
// collector's to honour and remove) and as a dependent (its owners may be
// gone or waiting for it).
func (gc *Controller) sync(ctx context.Context, key objectKey) error {
	k, ok := gc.graph.byGK[key.gk]
	if !ok {
		return nil
	}
	obj, ok := k.cached(key.namespace, key.name)
	if !ok {
		return nil // deleted: the delete event enqueued its owners and dependents
	}
	if obj.GetDeletionTimestamp() != nil {
		switch {
		case hasFinalizer(obj, metav1.FinalizerOrphanDependents):
			return gc.orphanDependents(ctx, k, obj)
		case hasFinalizer(obj, metav1.FinalizerDeleteDependents):
			return gc.deleteDependents(ctx, k, obj)
		}
		return nil // on its way out; its owners are no longer its concern
	}
	return gc.collect(ctx, k, obj)
}

// collect deletes a dependent whose owners are all gone or waiting, or cuts
// its references to them when another owner still holds it.
func (gc *Controller) collect(ctx context.Context, k *kind, cached metav1.Object) error {
	if len(cached.GetOwnerReferences()) == 0 {
		return nil
	}
	v, err := gc.judge(ctx, cached)
	if err != nil || v.none() {
		return err
	}
	// Act only on what the apiserver holds now: the cache may still show a
	// reference that was just cut (an orphaning owner's patch, whose event
	// is behind the owner's deletion).
	c := k.client(cached.GetNamespace())
	obj, err := c.get(ctx, cached.GetName())
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s %s/%s: %w", k, cached.GetNamespace(), cached.GetName(), err)
	case obj.GetUID() != cached.GetUID() || obj.GetDeletionTimestamp() != nil:
		return nil // another object now, or on its way out: its own events bring it back
	}
	if v, err = gc.judge(ctx, obj); err != nil || v.none() {
		return err
	}
	if len(v.cut) > 0 {
		_, err := c.patch(ctx, obj.GetName(), types.StrategicMergePatchType, cutOwnersPatch(v.cut))
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s/%s: removing references to owners %v: %w", k, obj.GetNamespace(), obj.GetName(), v.cut, err)
		}
		gc.log.Debug("cut owner references", "kind", k.String(), "namespace", obj.GetNamespace(), "name", obj.GetName(), "owners", v.cut)
	}
	if v.del == nil {
		return nil
	}
	if len(v.unblock) > 0 {
		// Unblock before deleting: once this object waits in the foreground
		// for a dependent that waits, its owners must no longer wait for it.
		// The patch is pinned to the version judged; the deletion is then
		// pinned to the version patched, which differs from it by these
		// flags alone.
		patched, err := c.patch(ctx, obj.GetName(), types.StrategicMergePatchType, unblockPatch(obj.GetResourceVersion(), obj.GetOwnerReferences(), v.unblock))
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("%s %s/%s: unblocking references to owners %v: %w", k, obj.GetNamespace(), obj.GetName(), v.unblock, err)
		}
		gc.log.Debug("unblocked owner references", "kind", k.String(), "namespace", obj.GetNamespace(), "name", obj.GetName(), "owners", v.unblock)
		obj = patched
	}
	// The preconditions pin the version judged: a reference cut or added
	// since is a 409 and a fresh look, never a wrong deletion.
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err = c.delete(ctx, obj.GetName(), metav1.DeleteOptions{
		PropagationPolicy: v.del,
		Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s/%s: deleting (%s): %w", k, obj.GetNamespace(), obj.GetName(), *v.del, err)
	}
	gc.log.Debug("deleted dependent", "kind", k.String(), "namespace", obj.GetNamespace(), "name", obj.GetName(), "propagation", *v.del)
	return nil
}

// judge finds the state of every owner of obj and decides its fate.
func (gc *Controller) judge(ctx context.Context, obj metav1.Object) (verdict, error) {
	refs := obj.GetOwnerReferences()
	states := make([]ownerState, len(refs))
	for i, r := range refs {
		s, err := gc.ownerState(ctx, obj, r)
		if err != nil {
			return verdict{}, err
		}
		states[i] = s
	}
	deps, err := gc.graph.dependentsState(obj.GetUID())
	if err != nil {
		return verdict{}, err
	}
	return judge(refs, states, deps), nil
}

// ownerState finds the owner a reference names. The cache answers when it
// holds the owner; when it does not, or holds another UID under that name,
// a live read decides, since a cache behind a just-created owner must never
// get a dependent deleted.
func (gc *Controller) ownerState(ctx context.Context, dep metav1.Object, ref metav1.OwnerReference) (ownerState, error) {
	k, ok := gc.graph.ownerKind(ref)
	if !ok || (k.namespaced && dep.GetNamespace() == "") {
		// A kind the collector does not follow, or a namespaced owner of a
		// cluster-scoped object (invalid): nothing can prove it gone.
		return ownerSolid, nil
	}
	ns := k.scope(dep.GetNamespace())
	if owner, ok := k.cached(ns, ref.Name); ok && owner.GetUID() == ref.UID {
		return stateOf(owner), nil
	}
	owner, err := k.client(ns).get(ctx, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return ownerDangling, nil
	case err != nil:
		return 0, fmt.Errorf("verifying owner %s %s/%s: %w", k, ns, ref.Name, err)
	case owner.GetUID() != ref.UID:
		return ownerDangling, nil
	}
	return stateOf(owner), nil
}

// orphanDependents honours the orphan finalizer: every dependent loses its
// reference to the owner, then the finalizer goes (and with it, when it is
// the last, the owner).
func (gc *Controller) orphanDependents(ctx context.Context, k *kind, owner metav1.Object) error {
	deps, err := gc.graph.dependents(owner.GetUID())
	if err != nil {
		return err
	}
	patch := cutOwnersPatch([]types.UID{owner.GetUID()})
	for _, d := range deps {
		_, err := d.kind.client(d.obj.GetNamespace()).patch(ctx, d.obj.GetName(), types.StrategicMergePatchType, patch)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("orphaning %s %s/%s from %s %s: %w", d.kind, d.obj.GetNamespace(), d.obj.GetName(), k, owner.GetName(), err)
		}
	}
	return gc.removeFinalizer(ctx, k, owner, metav1.FinalizerOrphanDependents)
}

// deleteDependents honours the foregroundDeletion finalizer: every
// dependent is looked at (each sees this owner waiting and is deleted, or
// cut loose when another owner keeps it), and the finalizer goes once no
// dependent that blocks the owner's deletion remains. Their deletions
// enqueue the owner again.
func (gc *Controller) deleteDependents(ctx context.Context, k *kind, owner metav1.Object) error {
	deps, err := gc.graph.dependents(owner.GetUID())
	if err != nil {
		return err
	}
	blocking := 0
	for _, d := range deps {
		if d.blocking() {
			blocking++
		}
		if d.obj.GetDeletionTimestamp() == nil {
			gc.queue.Add(d.key())
		}
	}
	if blocking > 0 {
		return nil
	}
	return gc.removeFinalizer(ctx, k, owner, metav1.FinalizerDeleteDependents)
}

// removeFinalizer removes finalizer f from the owner, read live: the
// patch carries the resourceVersion it was computed from.
func (gc *Controller) removeFinalizer(ctx context.Context, k *kind, owner metav1.Object, f string) error {
	c := k.client(owner.GetNamespace())
	live, err := c.get(ctx, owner.GetName())
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s %s/%s: %w", k, owner.GetNamespace(), owner.GetName(), err)
	case live.GetUID() != owner.GetUID() || !hasFinalizer(live, f):
		return nil
	case !finalizerRemovable(live):
		return nil // its next update enqueues it again
	}
	_, err = c.patch(ctx, live.GetName(), types.MergePatchType, finalizersPatch(live.GetResourceVersion(), without(live.GetFinalizers(), f)))
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer %s from %s %s/%s: %w", f, k, owner.GetNamespace(), owner.GetName(), err)
	}
	gc.log.Debug("removed finalizer", "kind", k.String(), "namespace", owner.GetNamespace(), "name", owner.GetName(), "finalizer", f)
	return nil
}
