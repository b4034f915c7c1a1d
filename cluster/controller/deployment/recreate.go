package deployment

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rolloutRecreate is the Recreate strategy: every old ReplicaSet to zero,
// wait until none of their pods runs (terminating ones included), only then
// create or grow the new ReplicaSet. Old and new pods never coexist.
func (dc *Controller) rolloutRecreate(ctx context.Context, s *snapshot) error {
	// The new ReplicaSet is created only below, once the old pods are gone:
	// created earlier it would be sized at once.
	d := s.d
	newRS, oldRSs, allRSs := s.newRS, s.oldRSs, s.all()

	scaled := false
	for _, rs := range filterActive(oldRSs) {
		if _, err := dc.resize(ctx, rs, 0, d); err != nil {
			return err
		}
		scaled = true
	}
	if scaled {
		return dc.syncRolloutStatus(ctx, d, allRSs, newRS)
	}

	if oldPodsRunning(newRS, oldRSs, s.pods) {
		// The pod handler requeues us as old pods go.
		return dc.syncRolloutStatus(ctx, d, allRSs, newRS)
	}

	if newRS == nil {
		rs, err := dc.createNewReplicaSet(ctx, s)
		if err != nil {
			return err
		}
		s.newRS, newRS, allRSs = rs, rs, s.all()
	}
	if _, err := dc.resize(ctx, newRS, dReplicas(d), d); err != nil {
		return err
	}
	if deploymentComplete(d, &d.Status) {
		if err := dc.cleanupOldReplicaSets(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, d, allRSs, newRS)
}

// oldPodsRunning reports whether any old ReplicaSet reports pods or any
// pod of theirs is not finished; a pod being deleted still runs until it
// is gone. Pods in phase Unknown are counted: they may be running.
func oldPodsRunning(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet, pods map[types.UID][]*corev1.Pod) bool {
	if actualReplicas(oldRSs) > 0 {
		return true
	}
	for uid, list := range pods {
		if newRS != nil && uid == newRS.UID {
			continue
		}
		for _, p := range list {
			if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				return true
			}
		}
	}
	return false
}
