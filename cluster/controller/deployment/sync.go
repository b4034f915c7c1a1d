package deployment

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// snapshot is what one sync works on: a private copy of the Deployment
// (its status and annotations are rewritten as the sync goes) and the
// caches' view of its ReplicaSets and their pods.
type snapshot struct {
	d      *appsv1.Deployment
	rsList []*appsv1.ReplicaSet        // claimed: controlled by d and matching its selector
	pods   map[types.UID][]*corev1.Pod // by controlling ReplicaSet, terminating ones included
	active activePods                  // per ReplicaSet: pods neither finished nor terminating
	// newRS has d's template (nil until created); oldRSs are the others.
	newRS  *appsv1.ReplicaSet
	oldRSs []*appsv1.ReplicaSet
}

// all is the old ReplicaSets and the new one (possibly nil), in a fresh
// slice.
func (s *snapshot) all() []*appsv1.ReplicaSet {
	return append(append([]*appsv1.ReplicaSet(nil), s.oldRSs...), s.newRS)
}

// sync reconciles one Deployment: claim its ReplicaSets, then either
// report status only (being deleted), scale proportionally (paused, or
// replicas changed), or take one step of its strategy.
func (dc *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := dc.dLister.Deployments(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // its ReplicaSets are the garbage collector's
	}
	if err != nil {
		return err
	}
	d := cached.DeepCopy()

	if d.Spec.Selector == nil || reflect.DeepEqual(*d.Spec.Selector, metav1.LabelSelector{}) {
		dc.event(d, corev1.EventTypeWarning, "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			_, err := dc.client.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
			return err
		}
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil // validation refuses these; nothing sane to do
	}

	all, err := dc.rsLister.ReplicaSets(ns).List(labels.Everything())
	if err != nil {
		return err
	}
	rsList, err := dc.claimReplicaSets(ctx, d, sel, all)
	if err != nil {
		return err
	}
	pods, err := dc.podsByReplicaSet(d, sel, rsList)
	if err != nil {
		return err
	}
	s := &snapshot{d: d, rsList: rsList, pods: pods, active: countActive(pods), oldRSs: findOldReplicaSets(d, rsList)}

	if d.DeletionTimestamp != nil {
		s.newRS = findNewReplicaSet(d, rsList)
		return dc.syncStatus(ctx, d, s.all(), s.newRS)
	}
	if pausedCondition(d, dc.now()) {
		if err := dc.updateStatus(ctx, d); err != nil {
			return err
		}
	}
	if s.newRS, err = dc.syncNewReplicaSet(ctx, s); err != nil {
		return err
	}
	if d.Spec.Paused || isScalingEvent(d, s.all()) {
		return dc.syncScale(ctx, s)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		return dc.rolloutRecreate(ctx, s)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return dc.rolloutRolling(ctx, s)
	}
	return fmt.Errorf("deployment %s: unknown strategy %q", key, d.Spec.Strategy.Type)
}

// syncScale handles a paused Deployment or a scaling event: resize the
// ReplicaSets proportionally, no rollout.
func (dc *Controller) syncScale(ctx context.Context, s *snapshot) error {
	d := s.d
	for _, step := range planScale(d, s.newRS, s.oldRSs) {
		if _, err := dc.scaleReplicaSet(ctx, step.rs, step.size, d); err != nil {
			return err // the Deployment is requeued; the next sync plans again
		}
	}
	if d.Spec.Paused {
		if err := dc.cleanupOldReplicaSets(ctx, s.oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncStatus(ctx, d, s.all(), s.newRS)
}

// syncNewReplicaSet finds the new ReplicaSet (nil if none yet) and brings
// its annotations, revision (highest of the old ones plus one, never
// lowered) and minReadySeconds up to date, then the Deployment's revision.
func (dc *Controller) syncNewReplicaSet(ctx context.Context, s *snapshot) (*appsv1.ReplicaSet, error) {
	d := s.d
	existing := findNewReplicaSet(d, s.rsList)
	if existing == nil {
		return nil, nil
	}
	rs := existing.DeepCopy()
	annotated := setNewReplicaSetAnnotations(d, rs, nextRevision(s.oldRSs), true)
	if annotated || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
		rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
		out, err := dc.client.AppsV1().ReplicaSets(rs.Namespace).Update(ctx, rs, metav1.UpdateOptions{})
		if err != nil {
			return nil, errorf(err, "update new replicaset %s", rs.Name)
		}
		rs = out
	}
	changed := setDeploymentRevision(d, rs.Annotations[RevisionAnnotation])
	if hasProgressDeadline(d) && getCondition(d.Status, appsv1.DeploymentProgressing) == nil {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonFoundNewReplicaSet,
			fmt.Sprintf("Found new replica set %q", rs.Name), dc.now()))
		changed = true
	}
	if changed {
		if err := dc.updateStatus(ctx, d); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

func nextRevision(oldRSs []*appsv1.ReplicaSet) string {
	return strconv.FormatInt(maxRevision(oldRSs)+1, 10)
}

// createNewReplicaSet creates the ReplicaSet for d's template, sized by the
// strategy, and records the revision and NewReplicaSetCreated on d.
func (dc *Controller) createNewReplicaSet(ctx context.Context, s *snapshot) (*appsv1.ReplicaSet, error) {
	d := s.d
	newRevision := nextRevision(s.oldRSs)
	rs := newReplicaSetFor(d)
	size, err := newRSReplicas(d, append(append([]*appsv1.ReplicaSet(nil), s.oldRSs...), rs), rs, s.active)
	if err != nil {
		return nil, err
	}
	rs.Spec.Replicas = ptr.To(size)
	setNewReplicaSetAnnotations(d, rs, newRevision, false)
	created, err := dc.client.AppsV1().ReplicaSets(d.Namespace).Create(ctx, rs, metav1.CreateOptions{})
	existed := false
	switch {
	case apierrors.IsAlreadyExists(err):
		// Our own earlier create not yet in the cache, or a hash collision.
		cur, getErr := dc.client.AppsV1().ReplicaSets(d.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
		if getErr != nil {
			return nil, errorf(getErr, "get existing replicaset %s", rs.Name)
		}
		if ref := metav1.GetControllerOf(cur); ref != nil && ref.UID == d.UID && equalIgnoreHash(&d.Spec.Template, &cur.Spec.Template) {
			created, existed = cur, true
			break
		}
		// Someone else's ReplicaSet has our name: change the hash input and
		// try again on the next sync.
		d.Status.CollisionCount = ptr.To(ptr.Deref(d.Status.CollisionCount, 0) + 1)
		if uerr := dc.updateStatus(ctx, d); uerr == nil {
			dc.log.Info("replicaset name collision, collisionCount raised", "deployment", d.Namespace+"/"+d.Name,
				"replicaset", rs.Name, "collisionCount", *d.Status.CollisionCount)
		}
		return nil, errorf(err, "create replicaset %s", rs.Name)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		if hasProgressDeadline(d) {
			setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonReplicaSetCreateError, msg, dc.now()))
			_ = dc.updateStatus(ctx, d) // the create failure is the error to report
		}
		dc.event(d, corev1.EventTypeWarning, ReasonReplicaSetCreateError, "%s", msg)
		return nil, errorf(err, "create replicaset %s", rs.Name)
	}
	if !existed && size > 0 {
		dc.event(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d", created.Name, size)
	}
	changed := setDeploymentRevision(d, newRevision)
	if !existed && hasProgressDeadline(d) {
		setCondition(&d.Status, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewReplicaSetCreated,
			fmt.Sprintf("Created new replica set %q", created.Name), dc.now()))
		changed = true
	}
	if changed {
		if err := dc.updateStatus(ctx, d); err != nil {
			return nil, err
		}
	}
	return created, nil
}

// resize sets rs's replicas (and its replica annotations) when the size
// differs; it reports whether it wrote.
func (dc *Controller) resize(ctx context.Context, rs *appsv1.ReplicaSet, size int32, d *appsv1.Deployment) (bool, error) {
	if rs == nil || rsReplicas(rs) == size {
		return false, nil
	}
	return dc.scaleReplicaSet(ctx, rs, size, d)
}

// scaleReplicaSet writes rs's replicas and its replica annotations when
// either is out of date, through an Update carrying the cached
// resourceVersion: on a stale cache the apiserver answers 409 and the
// Deployment is retried. It reports whether the size changed.
func (dc *Controller) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, size int32, d *appsv1.Deployment) (bool, error) {
	desired, maxReplicas := dReplicas(d), dReplicas(d)+maxSurge(d)
	sizeChanged := rsReplicas(rs) != size
	if !sizeChanged && !replicasAnnotationsNeedUpdate(rs, desired, maxReplicas) {
		return false, nil
	}
	from := rsReplicas(rs)
	cp := rs.DeepCopy()
	cp.Spec.Replicas = ptr.To(size)
	setReplicasAnnotations(cp, desired, maxReplicas)
	if _, err := dc.client.AppsV1().ReplicaSets(cp.Namespace).Update(ctx, cp, metav1.UpdateOptions{}); err != nil {
		return false, errorf(err, "scale replicaset %s from %d to %d", rs.Name, from, size)
	}
	if sizeChanged {
		dir := "up"
		if size < from {
			dir = "down"
		}
		dc.event(d, corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d", dir, rs.Name, from, size)
	}
	return sizeChanged, nil
}

// cleanupOldReplicaSets deletes the old ReplicaSets beyond
// revisionHistoryLimit (cleanupCandidates).
func (dc *Controller) cleanupOldReplicaSets(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) error {
	for _, rs := range cleanupCandidates(oldRSs, d) {
		err := dc.client.AppsV1().ReplicaSets(rs.Namespace).Delete(ctx, rs.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &rs.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			// Stop at the first failure rather than pile on a struggling
			// apiserver; the next sync goes on.
			return errorf(err, "delete old replicaset %s", rs.Name)
		}
	}
	return nil
}

// cleanupCandidates are the old ReplicaSets to delete: of those not being
// deleted, the lowest revisions beyond revisionHistoryLimit, and of these
// only the empty ones (no pods asked for or reported) whose status is of
// their current generation.
func cleanupCandidates(oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) []*appsv1.ReplicaSet {
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	var alive []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := len(alive) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	sortByRevision(alive)
	var out []*appsv1.ReplicaSet
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas == 0 && rsReplicas(rs) == 0 && rs.Generation <= rs.Status.ObservedGeneration {
			out = append(out, rs)
		}
	}
	return out
}

// syncStatus writes the counts and Available (no Progressing change): the
// status of a paused or scaling Deployment.
func (dc *Controller) syncStatus(ctx context.Context, d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	st := calculateStatus(d, allRSs, newRS, dc.now())
	if apiequality.Semantic.DeepEqual(d.Status, st) {
		return nil
	}
	d.Status = st
	return dc.updateStatus(ctx, d)
}

// syncRolloutStatus writes the status after a rollout step; if nothing
// changed it schedules the check of the progress deadline.
func (dc *Controller) syncRolloutStatus(ctx context.Context, d *appsv1.Deployment, allRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	now := dc.now()
	st := rolloutStatus(d, allRSs, newRS, now)
	if apiequality.Semantic.DeepEqual(d.Status, st) {
		switch after := progressCheckAfter(d, &st, now); {
		case after == 0:
			dc.queue.AddRateLimited(mustKey(d))
		case after > 0:
			dc.queue.AddAfter(mustKey(d), after+time.Second) // a second against clock skew of the timer
		}
		return nil
	}
	d.Status = st
	return dc.updateStatus(ctx, d)
}

// updateStatus writes d's status (and annotations: the status subresource
// takes both, as upstream) and keeps d current with what was stored, so
// later writes of the same sync carry the new resourceVersion.
func (dc *Controller) updateStatus(ctx context.Context, d *appsv1.Deployment) error {
	out, err := dc.client.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	if err != nil {
		return errorf(err, "update status of deployment %s", d.Name)
	}
	*d = *out
	return nil
}

func mustKey(d *appsv1.Deployment) string { return d.Namespace + "/" + d.Name }
