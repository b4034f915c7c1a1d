package garbagecollector

import (
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The decisions of the collector, free of I/O: what one object's owners'
// states mean for it, and the patches that carry the decisions out.

// ownerState is what the collector knows of one owner a dependent names.
type ownerState int

const (
	// ownerSolid: the owner exists and is not waiting for its dependents
	// (or it cannot be verified, such as a kind the collector does not
	// follow). It keeps the dependent.
	ownerSolid ownerState = iota
	// ownerWaiting: the owner exists, being deleted in the foreground
	// (deletionTimestamp and the foregroundDeletion finalizer). It waits
	// for its dependents to go.
	ownerWaiting
	// ownerDangling: a live read found no object of that name, or one
	// with another UID. The reference points at nothing.
	ownerDangling
)

func (s ownerState) String() string {
	switch s {
	case ownerSolid:
		return "solid"
	case ownerWaiting:
		return "waiting"
	case ownerDangling:
		return "dangling"
	}
	return "unknown"
}

// stateOf is the state of an owner the collector found (in its cache or by
// a live read) with the UID the reference names.
func stateOf(owner metav1.Object) ownerState {
	if owner.GetDeletionTimestamp() != nil && hasFinalizer(owner, metav1.FinalizerDeleteDependents) {
		return ownerWaiting
	}
	return ownerSolid
}

// dependentsState is what the collector knows of the dependents of the
// object it judges, from the graph.
type dependentsState struct {
	// blocking: a dependent's reference blocks the object's deletion
	// (dependent.blocking).
	blocking bool
	// waiting: one of those blocking dependents is itself being deleted in
	// the foreground, waiting for its own dependents. The object may sit on
	// a cycle of blocking references that would wait on itself forever.
	waiting bool
}

// verdict is what happens to one dependent.
type verdict struct {
	// cut are the owner UIDs whose references are removed: owners that are
	// gone, or that wait for dependents while a solid owner keeps this one.
	cut []types.UID
	// unblock are the owner UIDs whose references lose blockOwnerDeletion
	// before the deletion: owners waiting on this object, when it is about
	// to wait in turn on a dependent that already waits (a possible cycle).
	unblock []types.UID
	// del, when set, deletes the dependent with this propagation policy.
	del *metav1.DeletionPropagation
}

// judge decides a dependent's fate from its owner references, the state of
// each (states[i] is refs[i]'s), and what its own dependents are doing.
//
//   - A solid owner keeps the object; references to dangling and waiting
//     owners are cut, so neither a vanished owner lingers nor a foreground
//     owner waits for an object it cannot delete.
//   - Otherwise, with an owner waiting in the foreground, the object is
//     deleted; in the foreground itself when something blocks on it, so the
//     wait propagates down the chain. When one of those blocking
//     dependents already waits for its own dependents, the wait may have
//     come full circle (a ring of ownerReferences, the object owning
//     itself through others): the references to the waiting owners are
//     first unblocked, so they stop waiting for this object and the ring
//     is broken where it closes. Like upstream's, this guess can be wrong
//     (the dependent may wait for reasons of its own); then an owner
//     finishes before this object is gone, never the reverse: nothing is
//     deleted that would not have been.
//   - Otherwise every owner is gone: the object is deleted in background.
func judge(refs []metav1.OwnerReference, states []ownerState, deps dependentsState) verdict {
	var solid, waiting, dangling, unblock []types.UID
	for i, r := range refs {
		switch states[i] {
		case ownerSolid:
			solid = append(solid, r.UID)
		case ownerWaiting:
			waiting = append(waiting, r.UID)
			if blocks(r) {
				unblock = append(unblock, r.UID)
			}
		case ownerDangling:
			dangling = append(dangling, r.UID)
		}
	}
	switch {
	case len(refs) == 0:
		return verdict{}
	case len(solid) > 0:
		return verdict{cut: append(dangling, waiting...)}
	case len(waiting) > 0 && deps.blocking:
		v := verdict{del: policy(metav1.DeletePropagationForeground)}
		if deps.waiting {
			v.unblock = unblock
		}
		return v
	default:
		return verdict{del: policy(metav1.DeletePropagationBackground)}
	}
}

// blocks reports whether a reference holds its owner's foreground deletion.
func blocks(r metav1.OwnerReference) bool {
	return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
}

// none reports a verdict that leaves the object alone.
func (v verdict) none() bool { return len(v.cut) == 0 && len(v.unblock) == 0 && v.del == nil }

func policy(p metav1.DeletionPropagation) *metav1.DeletionPropagation { return &p }

func hasFinalizer(obj metav1.Object, f string) bool {
	return slices.Contains(obj.GetFinalizers(), f)
}

// without returns list minus every s, never nil (a merge patch of null and
// of [] both clear the list; [] says so plainly).
func without(list []string, s string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// finalizerRemovable guards the removal of the collector's own finalizer.
// A Namespace keeps it until the namespace controller has emptied it and
// removed the `kubernetes` finalizer: the kstep apiserver deletes a
// terminating Namespace whose metadata.finalizers are empty on any write,
// whatever spec.finalizers says, which would leave its content behind.
// Upstream the order does not matter; here it does.
func finalizerRemovable(obj metav1.Object) bool {
	if ns, ok := obj.(*corev1.Namespace); ok {
		return len(ns.Spec.Finalizers) == 0
	}
	return true
}

// cutOwnersPatch is a strategic merge patch deleting the references to the
// given owners by UID (ownerReferences merge on uid). It is idempotent and
// needs no resourceVersion: removing a reference to a UID that is gone, or
// being orphaned, is right for whatever object holds the name.
func cutOwnersPatch(uids []types.UID) []byte {
	refs := make([]map[string]string, len(uids))
	for i, u := range uids {
		refs[i] = map[string]string{"$patch": "delete", "uid": string(u)}
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs}})
	return b
}

// finalizersPatch is a JSON merge patch setting the finalizers, guarded by
// the resourceVersion they were computed from: a concurrent change of the
// list is a 409, not a lost finalizer.
func finalizersPatch(resourceVersion string, finalizers []string) []byte {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion,
		"finalizers":      finalizers,
	}})
	return b
}

// unblockPatch is a strategic merge patch setting blockOwnerDeletion to
// false on obj's references to the given owners (ownerReferences merge on
// uid; each is sent whole, as upstream does), guarded by the
// resourceVersion the verdict was judged on. The collector never sets the
// field back to true, so a reference is unblocked at most once.
func unblockPatch(resourceVersion string, refs []metav1.OwnerReference, owners []types.UID) []byte {
	out := []metav1.OwnerReference{}
	for _, r := range refs {
		if slices.Contains(owners, r.UID) && blocks(r) {
			r.BlockOwnerDeletion = ptr.To(false)
			out = append(out, r)
		}
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion,
		"ownerReferences": out,
	}})
	return b
}
