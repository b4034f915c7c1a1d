package deployment

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The RollingUpdate strategy. The decisions are pure functions of the
// ReplicaSets as the caches show them; rolloutRolling writes them.
//
// The two bounds, for replicas R, surge S and unavailability U:
//   - pods: the ReplicaSets are never asked for more than R+S pods, and a
//     new pod is asked for only once the pods it replaces are on their way
//     out (committedPods);
//   - availability: old pods are removed only while more than R-U pods are
//     available, counting the new ReplicaSet's unavailable pods against
//     the budget, and never on a ReplicaSet status that is behind a
//     scale-down (it still counts the pods being deleted).

// resolveFenceposts turns maxSurge and maxUnavailable into pod counts for
// desired replicas: surge rounds up, unavailability rounds down, and if
// both come to zero unavailability is 1 so a rollout can always move.
func resolveFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	zero := intstr.FromInt32(0)
	surge, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxSurge, zero), int(desired), true)
	if err != nil {
		return 0, 0, fmt.Errorf("maxSurge: %w", err)
	}
	unavailable, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxUnavailable, zero), int(desired), false)
	if err != nil {
		return 0, 0, fmt.Errorf("maxUnavailable: %w", err)
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

func isRollingUpdate(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

// maxSurge is d's surge in pods; 0 unless RollingUpdate. Validation keeps
// the values parseable; an unparseable one counts as 0.
func maxSurge(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || d.Spec.Strategy.RollingUpdate == nil {
		return 0
	}
	s, _, _ := resolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, dReplicas(d))
	return s
}

// maxUnavailable is d's unavailability budget in pods, at most replicas;
// 0 unless RollingUpdate with replicas.
func maxUnavailable(d *appsv1.Deployment) int32 {
	if !isRollingUpdate(d) || dReplicas(d) == 0 {
		return 0
	}
	ru := d.Spec.Strategy.RollingUpdate
	if ru == nil {
		ru = &appsv1.RollingUpdateDeployment{}
	}
	_, u, _ := resolveFenceposts(ru.MaxSurge, ru.MaxUnavailable, dReplicas(d))
	return min(u, dReplicas(d))
}

// newRSReplicas is the size the new ReplicaSet may grow to now (upstream's
// NewRSNewReplicas). RollingUpdate: up to replicas+maxSurge pods in all,
// never beyond replicas. Recreate: replicas.
//
// Upstream counts the other ReplicaSets by spec.replicas alone, so a new
// pod can be created before the old pod it replaces has been deleted (the
// two ReplicaSet syncs race). Counting committedPods instead waits until
// the old ReplicaSet's controller reports, and our pod cache shows, the
// old pods gone or terminating: the pod bound holds for a watcher too.
func newRSReplicas(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, active activePods) (int32, error) {
	switch d.Spec.Strategy.Type {
	case appsv1.RollingUpdateDeploymentStrategyType:
		var committed int32
		for _, rs := range allRSs {
			if rs == nil {
				continue
			}
			if rs == newRS {
				committed += rsReplicas(rs)
			} else {
				committed += committedPods(rs, active)
			}
		}
		maxTotal := dReplicas(d) + maxSurge(d)
		if committed >= maxTotal {
			return rsReplicas(newRS), nil
		}
		up := min(maxTotal-committed, dReplicas(d)-rsReplicas(newRS))
		return rsReplicas(newRS) + max(up, 0), nil
	case appsv1.RecreateDeploymentStrategyType:
		return dReplicas(d), nil
	default:
		return 0, fmt.Errorf("deployment strategy %q is not supported", d.Spec.Strategy.Type)
	}
}

// rsSize is one planned write: rs to size.
type rsSize struct {
	rs   *appsv1.ReplicaSet
	size int32
}

// planScaleDownOld decides how far the old ReplicaSets shrink in one step
// (upstream's reconcileOldReplicaSets with cleanupUnhealthyReplicas and
// scaleDownOldReplicaSetsForRollingUpdate). Old ReplicaSets are taken
// oldest first; first their unavailable pods go, within
//
//	maxScaledDown = all spec replicas - (replicas - maxUnavailable) - new RS's unavailable pods,
//
// then available pods beyond replicas-maxUnavailable. Only changed sizes
// are returned. oldRSs must be the active old ReplicaSets.
func planScaleDownOld(d *appsv1.Deployment, allRSs, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) []rsSize {
	if specReplicas(oldRSs) == 0 {
		return nil
	}
	minAvailable := dReplicas(d) - maxUnavailable(d)
	var newUnavailable int32
	if newRS != nil {
		newUnavailable = rsReplicas(newRS) - newRS.Status.AvailableReplicas
	}
	maxScaledDown := specReplicas(allRSs) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return nil
	}
	// A ReplicaSet reporting more available pods than it is asked for has a
	// status from before its last scale-down: the pods being deleted still
	// count. Upstream's cleanup refuses to go on in that case, and so do we.
	for _, rs := range allRSs {
		if rs != nil && rs.Status.AvailableReplicas > rsReplicas(rs) {
			return nil
		}
	}
	old := append([]*appsv1.ReplicaSet(nil), oldRSs...)
	sortOldestFirst(old)
	sizes := make([]int32, len(old))
	for i, rs := range old {
		sizes[i] = rsReplicas(rs)
	}

	// Unavailable pods first: removing them costs no availability.
	var cleaned int32
	for i, rs := range old {
		if cleaned >= maxScaledDown {
			break
		}
		unhealthy := sizes[i] - rs.Status.AvailableReplicas
		if sizes[i] == 0 || unhealthy <= 0 {
			continue
		}
		n := min(maxScaledDown-cleaned, unhealthy)
		sizes[i] -= n
		cleaned += n
	}

	// Then available pods, while more than minAvailable are available.
	if available := availableReplicas(allRSs); available > minAvailable {
		budget := available - minAvailable
		var scaled int32
		for i := range old {
			if scaled >= budget {
				break
			}
			if sizes[i] == 0 {
				continue
			}
			n := min(sizes[i], budget-scaled)
			sizes[i] -= n
			scaled += n
		}
	}

	var plan []rsSize
	for i, rs := range old {
		if sizes[i] != rsReplicas(rs) {
			plan = append(plan, rsSize{rs, sizes[i]})
		}
	}
	return plan
}

// rolloutRolling moves a RollingUpdate one step: grow the new ReplicaSet
// if the surge allows, else shrink old ones if availability allows, and
// report status.
func (dc *Controller) rolloutRolling(ctx context.Context, s *snapshot) error {
	d := s.d
	if s.newRS == nil {
		rs, err := dc.createNewReplicaSet(ctx, s)
		if err != nil {
			return err
		}
		s.newRS = rs
	}
	newRS, oldRSs, allRSs := s.newRS, s.oldRSs, s.all()

	scaled, err := dc.reconcileNewReplicaSet(ctx, s, allRSs, newRS)
	if err != nil {
		return err
	}
	if scaled {
		return dc.syncRolloutStatus(ctx, d, allRSs, newRS)
	}

	plan := planScaleDownOld(d, allRSs, filterActive(oldRSs), newRS)
	for _, step := range plan {
		if _, err := dc.resize(ctx, step.rs, step.size, d); err != nil {
			return err
		}
	}
	if len(plan) > 0 {
		return dc.syncRolloutStatus(ctx, d, allRSs, newRS)
	}

	if deploymentComplete(d, &d.Status) {
		if err := dc.cleanupOldReplicaSets(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, d, allRSs, newRS)
}

// reconcileNewReplicaSet sizes the new ReplicaSet: down to replicas if it
// is above, up as far as newRSReplicas allows.
func (dc *Controller) reconcileNewReplicaSet(ctx context.Context, s *snapshot, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	d := s.d
	want := dReplicas(d)
	if rsReplicas(newRS) < want {
		n, err := newRSReplicas(d, allRSs, newRS, s.active)
		if err != nil {
			return false, err
		}
		want = n
	}
	return dc.resize(ctx, newRS, want, d)
}
