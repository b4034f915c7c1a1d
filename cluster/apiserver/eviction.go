package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// maxDisruptedPods bounds a budget's status.disruptedPods: evictions the
// disruption controller has not seen through yet (upstream's
// MaxDisruptedPodSize).
const maxDisruptedPods = 2000

// evict serves pods/eviction (policy/v1 Eviction), upstream's semantics: a
// pod no PodDisruptionBudget covers, or one that does not count toward a
// budget (being deleted, Pending, finished), is deleted at once; a pod
// covered by one budget is deleted only if the budget allows a disruption,
// which the eviction takes (status.disruptionsAllowed − 1, the pod in
// status.disruptedPods) in the same compare-and-swap that checks it;
// otherwise 429 naming the budget. An unready pod is deleted without
// taking a disruption when the budget is healthy (IfHealthyBudget, the
// default) or its policy is AlwaysAllow. More than one budget is a 500, as
// upstream.
func (q *request) evict() error {
	data, mt, err := q.body()
	if err != nil {
		return err
	}
	ev := &policyv1.Eviction{}
	if err := q.decodeBody(data, mt, ev, evictionGVK); err != nil {
		return err
	}
	if ev.Name != "" && ev.Name != q.ri.Name {
		return badRequest("name in URL does not match name in Eviction object")
	}
	if ev.Namespace != "" && ev.Namespace != q.ri.Namespace {
		return badRequest("namespace in URL does not match namespace in Eviction object")
	}
	opts := ev.DeleteOptions
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	// The query's dryRun and the Eviction's deleteOptions.dryRun: either,
	// or both when they agree (upstream's propagateDryRun).
	if err := validDryRun("DeleteOptions", opts.DryRun); err != nil {
		return err
	}
	switch {
	case len(opts.DryRun) == 0:
		opts.DryRun = q.dryRun
	case len(q.dryRun) == 0:
		q.dryRun = opts.DryRun
	case !slices.Equal(q.dryRun, opts.DryRun):
		return badRequest("Non-matching dry-run options in request and content: %v and %v", q.dryRun, opts.DryRun)
	}
	kv, err := q.s.store.Get(q.ctx(), q.res.key(q.ri.Namespace, q.ri.Name))
	if err != nil {
		return storageError(err, q.gr(), q.ri.Name)
	}
	obj, err := decodeStored(q.res, kv.Value, kv.ModRev)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	pod := obj.(*corev1.Pod)
	if opts.Preconditions == nil {
		// The pod judged is the pod deleted.
		opts.Preconditions = &metav1.Preconditions{UID: &pod.UID}
	}
	if pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodPending &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		if err := q.takeDisruption(pod); err != nil {
			return err
		}
	}
	if q.dry() {
		return q.evicted()
	}
	if _, _, err := q.deleteOne(pod.Name, opts); err != nil {
		return err
	}
	return q.evicted()
}

func (q *request) evicted() error {
	q.s.writeObject(q.w, q.r, http.StatusCreated, q.res, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated})
	return nil
}

// takeDisruption checks the budget covering pod and takes one of its
// allowed disruptions, or says why it cannot.
func (q *request) takeDisruption(pod *corev1.Pod) error {
	pdbRes := q.s.resources[policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets")]
	// From etcd, not the watch cache: the namespace's budgets, few.
	res, err := q.s.store.List(q.ctx(), pdbRes.prefix(pod.Namespace), "", 0, 0)
	if err != nil {
		return storageError(err, pdbRes.gvr.GroupResource(), "")
	}
	var covering []*policyv1.PodDisruptionBudget
	for _, kv := range res.KVs {
		obj, err := decodeStored(pdbRes, kv.Value, kv.ModRev)
		if err != nil {
			continue
		}
		pdb := obj.(*policyv1.PodDisruptionBudget)
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		covering = append(covering, pdb)
	}
	switch len(covering) {
	case 0:
		return nil
	case 1:
	default:
		return apierrors.NewInternalError(errors.New("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."))
	}
	pdb := covering[0]
	if !podReady(pod) {
		policy := policyv1.IfHealthyBudget
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil {
			policy = *pdb.Spec.UnhealthyPodEvictionPolicy
		}
		// An unready pod does not count toward the budget: evicting it
		// costs no disruption when the budget is met anyway.
		if policy == policyv1.AlwaysAllow || (pdb.Status.ObservedGeneration >= pdb.Generation &&
			pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0) {
			return nil
		}
	}
	sub := *q.ri
	pr := &request{s: q.s, w: q.w, r: q.r, ri: &sub, res: pdbRes, user: q.user, start: q.start, dryRun: q.dryRun}
	now := metav1.NewTime(q.s.now())
	// A refusal on the watch cache's copy is judged again on etcd's (mutate).
	_, err = pr.mutate(pdb.Name, "status", func(cur runtime.Object) (runtime.Object, error) {
		p := cur.(*policyv1.PodDisruptionBudget)
		if err := disruptionAllowed(p); err != nil {
			return nil, err
		}
		p.Status.DisruptionsAllowed--
		if p.Status.DisruptionsAllowed == 0 {
			setDisruptionAllowed(&p.Status, now)
		}
		if p.Status.DisruptedPods == nil {
			p.Status.DisruptedPods = map[string]metav1.Time{}
		}
		p.Status.DisruptedPods[pod.Name] = now
		return p, nil
	})
	return err
}

// disruptionAllowed says why a budget allows no disruption now (nil: it
// allows one).
func disruptionAllowed(p *policyv1.PodDisruptionBudget) error {
	refuse := func(cause string) error {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: cause})
		return err
	}
	gr := policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets").GroupResource()
	switch {
	case p.Status.ObservedGeneration < p.Generation:
		return refuse(fmt.Sprintf("The disruption budget %s is still being processed by the server.", p.Name))
	case p.Status.DisruptionsAllowed < 0:
		return apierrors.NewForbidden(gr, p.Name, errors.New("pdb disruptions allowed is negative"))
	case len(p.Status.DisruptedPods) >= maxDisruptedPods:
		return apierrors.NewForbidden(gr, p.Name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	case p.Status.DisruptionsAllowed == 0:
		return refuse(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", p.Name, p.Status.DesiredHealthy, p.Status.CurrentHealthy))
	}
	return nil
}

// setDisruptionAllowed marks the budget's DisruptionAllowed condition False
// once the eviction took its last allowed disruption.
func setDisruptionAllowed(st *policyv1.PodDisruptionBudgetStatus, now metav1.Time) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type == policyv1.DisruptionAllowedCondition && c.Status != metav1.ConditionFalse {
			c.Status, c.Reason, c.Message, c.LastTransitionTime = metav1.ConditionFalse, policyv1.InsufficientPodsReason, "", now
		}
	}
}
