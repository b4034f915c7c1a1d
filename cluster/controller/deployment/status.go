package deployment

import (
	"fmt"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition reasons, upstream's strings: `kubectl rollout status` and users'
// scripts read them.
const (
	// Progressing=True
	ReasonNewReplicaSetCreated   = "NewReplicaSetCreated"
	ReasonFoundNewReplicaSet     = "FoundNewReplicaSet"
	ReasonReplicaSetUpdated      = "ReplicaSetUpdated"
	ReasonNewReplicaSetAvailable = "NewReplicaSetAvailable"
	// Progressing=False
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	ReasonReplicaSetCreateError    = "ReplicaSetCreateError"
	// Progressing=Unknown
	ReasonDeploymentPaused  = "DeploymentPaused"
	ReasonDeploymentResumed = "DeploymentResumed"
	// Available
	ReasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
)

func newCondition(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	ts := metav1.NewTime(now)
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: ts, LastTransitionTime: ts}
}

func getCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// setCondition replaces the condition of c's type unless status and reason
// are unchanged; the transition time survives an unchanged status.
func setCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := getCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}

func removeCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	var out []appsv1.DeploymentCondition
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	st.Conditions = out
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func hasRevisionHistoryLimit(d *appsv1.Deployment) bool {
	return d.Spec.RevisionHistoryLimit != nil && *d.Spec.RevisionHistoryLimit != math.MaxInt32
}

// calculateStatus derives the counts from the ReplicaSets' statuses and
// sets Available: at least replicas-maxUnavailable available pods.
func calculateStatus(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, now time.Time) appsv1.DeploymentStatus {
	available := availableReplicas(allRSs)
	unavailable := max(specReplicas(allRSs)-available, 0)
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            actualReplicas(allRSs),
		UpdatedReplicas:     actualReplicas([]*appsv1.ReplicaSet{newRS}),
		ReadyReplicas:       readyReplicas(allRSs),
		AvailableReplicas:   available,
		UnavailableReplicas: unavailable,
		TerminatingReplicas: terminatingReplicas(allRSs),
		CollisionCount:      d.Status.CollisionCount,
		Conditions:          append([]appsv1.DeploymentCondition(nil), d.Status.Conditions...),
	}
	if available >= dReplicas(d)-maxUnavailable(d) {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, ReasonMinimumReplicasAvailable, "Deployment has minimum availability.", now))
	} else {
		setCondition(&st, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, ReasonMinimumReplicasUnavailable, "Deployment does not have minimum availability.", now))
	}
	return st
}

// deploymentComplete: every replica updated, available, and no other;
// and the status is of the current generation.
func deploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	r := dReplicas(d)
	return st.UpdatedReplicas == r && st.Replicas == r && st.AvailableReplicas == r && st.ObservedGeneration >= d.Generation
}

// deploymentProgressing: compared with d's recorded status, more pods are
// updated, ready or available, or fewer old ones remain.
func deploymentProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas ||
		st.AvailableReplicas > old.AvailableReplicas
}

// deploymentTimedOut: no progress recorded for progressDeadlineSeconds.
func deploymentTimedOut(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	c := getCondition(*st, appsv1.DeploymentProgressing)
	if c == nil || c.Reason == ReasonNewReplicaSetAvailable {
		return false
	}
	if c.Reason == ReasonProgressDeadlineExceeded {
		return true
	}
	return !now.Before(progressDeadline(d, c))
}

// progressDeadline is when a rollout that recorded progress in c has gone
// progressDeadlineSeconds without any. c.LastUpdateTime is stored at whole
// seconds (truncated), so the progress it records happened up to a second
// after it: counting from the end of that second, the deadline is never
// reported early, at worst a second late. Counting from the stored time it
// fired as early as 1.07 s into a 2 s deadline.
func progressDeadline(d *appsv1.Deployment, c *appsv1.DeploymentCondition) time.Time {
	return c.LastUpdateTime.Truncate(time.Second).Add(time.Second + time.Duration(*d.Spec.ProgressDeadlineSeconds)*time.Second)
}

// rolloutStatus is the status after a rollout step (upstream's
// syncRolloutStatus): the counts, then Progressing — NewReplicaSetAvailable
// once complete, ReplicaSetUpdated on progress, ProgressDeadlineExceeded
// after a deadline without — and ReplicaFailure copied from the
// ReplicaSets, the new one's first.
func rolloutStatus(d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, now time.Time) appsv1.DeploymentStatus {
	st := calculateStatus(d, allRSs, newRS, now)
	if !hasProgressDeadline(d) {
		removeCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	done := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == ReasonNewReplicaSetAvailable
	if hasProgressDeadline(d) && !done {
		what := fmt.Sprintf("Deployment %q", d.Name)
		if newRS != nil {
			what = fmt.Sprintf("ReplicaSet %q", newRS.Name)
		}
		switch {
		case deploymentComplete(d, &st):
			setCondition(&st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetAvailable, what+" has successfully progressed.", now))
		case deploymentProgressing(d, &st):
			// Progress refreshes lastUpdateTime even with an unchanged
			// reason, which setCondition would not: replace it here.
			c := newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, what+" is progressing.", now)
			if cur != nil {
				if cur.Status == corev1.ConditionTrue {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(&st, appsv1.DeploymentProgressing)
			}
			setCondition(&st, c)
		case deploymentTimedOut(d, &st, now):
			setCondition(&st, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceeded, what+" has timed out progressing.", now))
		}
	}
	if f := replicaFailure(allRSs, newRS); f != nil {
		setCondition(&st, *f)
	} else {
		removeCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	return st
}

// replicaFailure turns a ReplicaSet's ReplicaFailure condition into the
// Deployment's, preferring the new ReplicaSet's.
func replicaFailure(allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
	for _, rs := range append([]*appsv1.ReplicaSet{newRS}, allRSs...) {
		if rs == nil {
			continue
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return &appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: c.Status, Reason: c.Reason,
					Message: c.Message, LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime}
			}
		}
	}
	return nil
}

// progressCheckAfter says when d must be looked at again to notice a
// missed progress deadline: -1 never (no deadline, no Progressing
// condition, complete, or already timed out), else the time left, 0 if
// less than a second is.
func progressCheckAfter(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) time.Duration {
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil {
		return -1
	}
	if deploymentComplete(d, st) || cur.Reason == ReasonProgressDeadlineExceeded {
		return -1
	}
	after := progressDeadline(d, cur).Sub(now)
	if after < time.Second {
		return 0
	}
	return after
}

// pausedCondition updates Progressing for a pause or a resume (Unknown,
// so that time spent paused never counts against the deadline); it does
// not overwrite a reported timeout. It reports a change.
func pausedCondition(d *appsv1.Deployment, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	cur := getCondition(d.Status, appsv1.DeploymentProgressing)
	if cur != nil && cur.Reason == ReasonProgressDeadlineExceeded {
		return false
	}
	paused := cur != nil && cur.Reason == ReasonDeploymentPaused
	switch {
	case d.Spec.Paused && !paused:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonDeploymentPaused, "Deployment is paused", now))
		return true
	case !d.Spec.Paused && paused:
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonDeploymentResumed, "Deployment is resumed", now))
		return true
	}
	return false
}
