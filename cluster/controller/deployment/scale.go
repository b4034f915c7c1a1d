package deployment

import (
	"math"

	appsv1 "k8s.io/api/apps/v1"
)

// Scaling a Deployment (spec.replicas changed) in the middle of a rollout,
// or while it is paused, resizes every active ReplicaSet in proportion
// instead of hastening the rollout: growing only the new ReplicaSet would
// put more replicas on a template not yet proven, shrinking only old ones
// would lower availability.

// isScalingEvent reports whether d's replicas differ from what an active
// ReplicaSet was last sized for (DesiredReplicasAnnotation).
func isScalingEvent(d *appsv1.Deployment, rss []*appsv1.ReplicaSet) bool {
	for _, rs := range filterActive(rss) {
		if desired, ok := intAnnotation(rs, DesiredReplicasAnnotation); ok && desired != dReplicas(d) {
			return true
		}
	}
	return false
}

// findActiveOrLatest returns the one active ReplicaSet, or the newest one
// if none is active; nil if several are active.
func findActiveOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	active := filterActive(append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		newest := append([]*appsv1.ReplicaSet(nil), oldRSs...)
		sortOldestFirst(newest)
		return newest[len(newest)-1]
	case 1:
		return active[0]
	default:
		return nil
	}
}

// isSaturated: the new ReplicaSet has all of d's replicas, was sized for
// them, and all are available.
func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, ok := intAnnotation(rs, DesiredReplicasAnnotation)
	return ok && rsReplicas(rs) == dReplicas(d) && desired == dReplicas(d) && rs.Status.AvailableReplicas == dReplicas(d)
}

// planScale sizes the ReplicaSets for d's replicas (upstream's scale):
//   - one active ReplicaSet (or none: the newest) takes all replicas;
//   - a saturated new ReplicaSet leaves the old ones nothing;
//   - otherwise (RollingUpdate) replicas+maxSurge minus what the active
//     ReplicaSets have is spread over them in proportion to their share of
//     the max-replicas they were sized for, largest first; the rounding
//     leftover goes to the largest.
//
// Every active ReplicaSet appears in the plan, even at its current size:
// writing it refreshes its replica annotations, which ends the scaling
// event. A nil plan means nothing to do.
func planScale(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) []rsSize {
	if rs := findActiveOrLatest(newRS, oldRSs); rs != nil {
		if rsReplicas(rs) == dReplicas(d) {
			return nil
		}
		return []rsSize{{rs, dReplicas(d)}}
	}
	if isSaturated(d, newRS) {
		var plan []rsSize
		for _, rs := range filterActive(oldRSs) {
			plan = append(plan, rsSize{rs, 0})
		}
		return plan
	}
	if !isRollingUpdate(d) {
		return nil
	}
	active := filterActive(append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS))
	var allowed int32
	if dReplicas(d) > 0 {
		allowed = dReplicas(d) + maxSurge(d)
	}
	toAdd := allowed - specReplicas(active)
	switch {
	case toAdd > 0:
		sortBySizeNewer(active)
	case toAdd < 0:
		sortBySizeOlder(active)
	}
	sizes := make([]int32, len(active))
	var added int32
	for i, rs := range active {
		p := proportion(rs, d, toAdd, added)
		sizes[i] = rsReplicas(rs) + p
		added += p
	}
	if len(active) > 0 && toAdd != 0 {
		sizes[0] = max(sizes[0]+toAdd-added, 0)
	}
	plan := make([]rsSize, len(active))
	for i, rs := range active {
		plan[i] = rsSize{rs, sizes[i]}
	}
	return plan
}

// proportion is rs's share of toAdd, given added already handed out: its
// fraction, clamped so the total never overshoots toAdd.
func proportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	f := fraction(rs, d)
	if toAdd > 0 {
		return min(f, toAdd-added)
	}
	return max(f, toAdd-added)
}

// fraction is how many replicas rs gains (or loses) so that its share of
// d's replicas+maxSurge equals its share of the max-replicas it was sized
// for. Without that annotation d's status.replicas stands in; without
// either there is no base and rs gets no share (the leftover goes to the
// largest ReplicaSet).
func fraction(rs *appsv1.ReplicaSet, d *appsv1.Deployment) int32 {
	if dReplicas(d) == 0 {
		return -rsReplicas(rs)
	}
	maxNow := dReplicas(d) + maxSurge(d)
	maxBefore, ok := intAnnotation(rs, MaxReplicasAnnotation)
	if !ok || maxBefore == 0 {
		maxBefore = d.Status.Replicas
	}
	if maxBefore == 0 {
		return 0
	}
	size := float64(rsReplicas(rs)) * float64(maxNow) / float64(maxBefore)
	return int32(math.Round(size)) - rsReplicas(rs)
}
