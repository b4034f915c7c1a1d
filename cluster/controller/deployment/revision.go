package deployment

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// The annotations a Deployment and its ReplicaSets carry. kubectl reads
// them: `rollout history` lists ReplicaSets by RevisionAnnotation and
// `rollout undo` copies a ReplicaSet's template (and its non-skipped
// annotations) back into the Deployment.
const (
	// RevisionAnnotation numbers a rollout: the new ReplicaSet gets the
	// highest revision of the others plus one, and the Deployment mirrors
	// its new ReplicaSet's.
	RevisionAnnotation = "deployment.kubernetes.io/revision"
	// RevisionHistoryAnnotation lists the revisions a ReplicaSet had before
	// a rollback made it new again.
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	// DesiredReplicasAnnotation is the Deployment's spec.replicas when the
	// ReplicaSet was last sized; a difference marks a scaling event.
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	// MaxReplicasAnnotation is replicas+maxSurge at that time: the base of
	// proportional scaling.
	MaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"

	// deprecatedRollbackTo is extensions/v1beta1's rollback request; never
	// copied between objects.
	deprecatedRollbackTo = "deprecated.deployment.rollback.to"
	// maxRevisionHistoryChars bounds RevisionHistoryAnnotation.
	maxRevisionHistoryChars = 2000
)

// annotationsToSkip are never copied from a Deployment to its ReplicaSets
// (they belong to one object) — the same set kubectl skips on undo.
var annotationsToSkip = map[string]bool{
	corev1.LastAppliedConfigAnnotation: true,
	RevisionAnnotation:                 true,
	RevisionHistoryAnnotation:          true,
	DesiredReplicasAnnotation:          true,
	MaxReplicasAnnotation:              true,
	deprecatedRollbackTo:               true,
}

// revision parses RevisionAnnotation; absent is 0.
func revision(rs *appsv1.ReplicaSet) (int64, error) {
	v, ok := rs.Annotations[RevisionAnnotation]
	if !ok {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}

// maxRevision is the highest parseable revision among rss.
func maxRevision(rss []*appsv1.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		if v, err := revision(rs); err == nil && v > m {
			m = v
		}
	}
	return m
}

// copyDeploymentAnnotations copies d's annotations, but the skipped ones,
// onto rs and reports a change.
func copyDeploymentAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		if annotationsToSkip[k] {
			continue
		}
		if cur, ok := rs.Annotations[k]; ok && cur == v {
			continue
		}
		rs.Annotations[k] = v
		changed = true
	}
	return changed
}

// setNewReplicaSetAnnotations brings the new ReplicaSet's annotations up
// to date: d's annotations, the revision (raised to newRevision, never
// lowered; a raised one that existed before is a rollback and goes into
// the revision history), and for a ReplicaSet being created the replica
// annotations. It reports whether anything changed.
func setNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	changed := copyDeploymentAnnotations(d, rs)
	old, had := rs.Annotations[RevisionAnnotation]
	oldRev, err := strconv.ParseInt(old, 10, 64)
	if err != nil {
		if old != "" {
			return false // someone else's value: leave it alone
		}
		oldRev = 0
	}
	newRev, err := strconv.ParseInt(newRevision, 10, 64)
	if err != nil {
		return false
	}
	if oldRev < newRev {
		rs.Annotations[RevisionAnnotation] = newRevision
		changed = true
		if had {
			appendRevisionHistory(rs, old)
		}
	}
	if !exists && setReplicasAnnotations(rs, dReplicas(d), dReplicas(d)+maxSurge(d)) {
		changed = true
	}
	return changed
}

// appendRevisionHistory records old in rs's revision history, dropping the
// oldest entries to stay within maxRevisionHistoryChars.
func appendRevisionHistory(rs *appsv1.ReplicaSet, old string) {
	hist := rs.Annotations[RevisionHistoryAnnotation]
	if hist == "" {
		rs.Annotations[RevisionHistoryAnnotation] = old
		return
	}
	revs := strings.Split(hist, ",")
	total := len(hist) + len(old) + 1
	start := 0
	for total > maxRevisionHistoryChars && start < len(revs) {
		total -= len(revs[start]) + 1
		start++
	}
	if total <= maxRevisionHistoryChars {
		rs.Annotations[RevisionHistoryAnnotation] = strings.Join(append(revs[start:], old), ",")
	}
}

// setDeploymentRevision sets d's revision annotation, reporting a change.
func setDeploymentRevision(d *appsv1.Deployment, rev string) bool {
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	if d.Annotations[RevisionAnnotation] == rev {
		return false
	}
	d.Annotations[RevisionAnnotation] = rev
	return true
}

// setReplicasAnnotations records desired and max replicas on rs.
func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range map[string]string{
		DesiredReplicasAnnotation: strconv.Itoa(int(desired)),
		MaxReplicasAnnotation:     strconv.Itoa(int(maxReplicas)),
	} {
		if rs.Annotations[k] != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

// intAnnotation parses an int32 annotation.
func intAnnotation(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}
