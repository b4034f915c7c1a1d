package disruption

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// DeletionTimeout is how long an eviction's entry in status.disruptedPods
// keeps its pod from counting as healthy when the pod is not deleted
// (upstream: 2 minutes).
const DeletionTimeout = 2 * time.Minute

// Controller keeps every PodDisruptionBudget's status. Its queue's keys are
// namespaces: a pod's change recounts the budgets of its namespace.
type Controller struct {
	client kubernetes.Interface
	pdbs   policylisters.PodDisruptionBudgetLister
	pods   cache.Indexer
	rss    appslisters.ReplicaSetLister
	deps   appslisters.DeploymentLister
	rcs    corelisters.ReplicationControllerLister
	synced []cache.InformerSynced
	queue  workqueue.TypedRateLimitingInterface[string]
	log    *slog.Logger
	now    func() time.Time
}

var _ controller.Controller = &Controller{}

// New builds the controller on the context's informers.
func New(c *controller.Context) controller.Controller {
	podInf := c.PodInformer()
	pdbInf := c.Informers.Policy().V1().PodDisruptionBudgets()
	rsInf := c.Informers.Apps().V1().ReplicaSets()
	depInf := c.Informers.Apps().V1().Deployments()
	rcInf := c.Informers.Core().V1().ReplicationControllers()
	dc := &Controller{
		client: c.Client, pdbs: pdbInf.Lister(), pods: podInf.GetIndexer(),
		rss: rsInf.Lister(), deps: depInf.Lister(), rcs: rcInf.Lister(),
		synced: []cache.InformerSynced{podInf.HasSynced, pdbInf.Informer().HasSynced, rsInf.Informer().HasSynced,
			depInf.Informer().HasSynced, rcInf.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "disruption"}),
		log: c.Log.With("controller", "disruption"), now: c.Now,
	}
	_, _ = pdbInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    dc.enqueue,
		UpdateFunc: func(_, cur any) { dc.enqueue(cur) },
	})
	// Pods and their controllers' scale: only in namespaces with budgets.
	withBudget := cache.ResourceEventHandlerFuncs{
		AddFunc:    dc.enqueueIfBudgeted,
		UpdateFunc: func(_, cur any) { dc.enqueueIfBudgeted(cur) },
		DeleteFunc: dc.enqueueIfBudgeted,
	}
	_, _ = podInf.AddEventHandler(withBudget)
	for _, inf := range []cache.SharedIndexInformer{rsInf.Informer(), depInf.Informer(), rcInf.Informer()} {
		_, _ = inf.AddEventHandler(withBudget)
	}
	return dc
}

// Name is the controller's name in the manager.
func (dc *Controller) Name() string { return "disruption" }

// Run syncs namespaces until ctx ends.
func (dc *Controller) Run(ctx context.Context) {
	controller.RunWorkers(ctx, dc.queue, 1, dc.synced, dc.sync, dc.log)
}

func (dc *Controller) enqueue(obj any) {
	if ns, ok := controller.ObjectNamespace(obj); ok {
		dc.queue.Add(ns)
	}
}

func (dc *Controller) enqueueIfBudgeted(obj any) {
	ns, ok := controller.ObjectNamespace(obj)
	if !ok {
		return
	}
	if l, err := dc.pdbs.PodDisruptionBudgets(ns).List(labels.Everything()); err == nil && len(l) > 0 {
		dc.queue.Add(ns)
	}
}

// sync sets the status of every budget in the namespace, and comes back
// when an eviction's entry in disruptedPods expires.
func (dc *Controller) sync(ctx context.Context, ns string) error {
	pdbs, err := dc.pdbs.PodDisruptionBudgets(ns).List(labels.Everything())
	if err != nil || len(pdbs) == 0 {
		return err
	}
	objs, err := dc.pods.ByIndex(cache.NamespaceIndex, ns)
	if err != nil {
		return err
	}
	now := dc.now()
	var next time.Duration
	for _, pdb := range pdbs {
		var pods []*corev1.Pod
		sel, serr := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if serr == nil {
			for _, o := range objs {
				if p, ok := o.(*corev1.Pod); ok && sel.Matches(labels.Set(p.Labels)) {
					pods = append(pods, p)
				}
			}
		}
		st, recheck := dc.status(pdb, pods, serr, now)
		if recheck > 0 && (next == 0 || recheck < next) {
			next = recheck
		}
		if apiequality.Semantic.DeepEqual(pdb.Status, st) {
			continue
		}
		cp := pdb.DeepCopy()
		cp.Status = st
		if _, err := dc.client.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("budget %s/%s status: %w", ns, pdb.Name, err)
		}
	}
	if next > 0 {
		dc.queue.AddAfter(ns, next)
	}
	return nil
}

// status is what pdb's status should be with these pods; recheck, when
// positive, is when an entry of disruptedPods expires.
func (dc *Controller) status(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod, selErr error, now time.Time) (policyv1.PodDisruptionBudgetStatus, time.Duration) {
	st := policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, Conditions: pdb.Status.Conditions}
	// Evictions the controller has not seen through yet: the pod still
	// exists and the eviction is recent.
	var recheck time.Duration
	disrupted := map[string]metav1.Time{}
	present := map[string]*corev1.Pod{}
	for _, p := range pods {
		present[p.Name] = p
	}
	for name, at := range pdb.Status.DisruptedPods {
		p, ok := present[name]
		if !ok || p.DeletionTimestamp != nil {
			continue
		}
		if left := at.Add(DeletionTimeout).Sub(now); left > 0 {
			disrupted[name] = at
			if recheck == 0 || left < recheck {
				recheck = left
			}
		}
	}
	if len(disrupted) > 0 {
		st.DisruptedPods = disrupted
	}
	reason, message := policyv1.SufficientPodsReason, ""
	var expected, desired int32
	var err error
	switch {
	case selErr != nil:
		err = fmt.Errorf("selector: %w", selErr)
	default:
		expected, desired, err = dc.desired(pdb, pods)
	}
	healthy := int32(0)
	for _, p := range pods {
		if _, ok := disrupted[p.Name]; !ok && p.DeletionTimestamp == nil && controller.PodReady(p) {
			healthy++
		}
	}
	st.CurrentHealthy, st.DesiredHealthy, st.ExpectedPods = healthy, desired, expected
	if err != nil {
		// Fail safe: a budget whose pods cannot be counted allows nothing.
		reason, message = policyv1.SyncFailedReason, err.Error()
		st.DisruptionsAllowed = 0
	} else {
		st.DisruptionsAllowed = max(0, healthy-desired)
		if expected <= 0 {
			st.DisruptionsAllowed = 0
		}
		if st.DisruptionsAllowed == 0 {
			reason = policyv1.InsufficientPodsReason
		}
	}
	status := metav1.ConditionTrue
	if st.DisruptionsAllowed == 0 {
		status = metav1.ConditionFalse
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: status,
		Reason: reason, Message: message, ObservedGeneration: pdb.Generation, LastTransitionTime: metav1.NewTime(now)})
	return st, recheck
}

// desired is upstream's count: minAvailable as a number needs that many
// healthy pods of those matching; a percentage, or maxUnavailable, counts
// from the replicas of the pods' controllers.
func (dc *Controller) desired(pdb *policyv1.PodDisruptionBudget, pods []*corev1.Pod) (expected, desired int32, err error) {
	if m := pdb.Spec.MinAvailable; m != nil && m.Type == intstr.Int {
		return int32(len(pods)), m.IntVal, nil
	}
	expected, err = dc.expectedScale(pods)
	if err != nil {
		return 0, 0, err
	}
	if m := pdb.Spec.MinAvailable; m != nil {
		v, err := intstr.GetScaledValueFromIntOrPercent(m, int(expected), true)
		if err != nil {
			return 0, 0, err
		}
		return expected, int32(v), nil
	}
	if m := pdb.Spec.MaxUnavailable; m != nil {
		v, err := intstr.GetScaledValueFromIntOrPercent(m, int(expected), true)
		if err != nil {
			return 0, 0, err
		}
		return expected, max(0, expected-int32(v)), nil
	}
	return 0, 0, fmt.Errorf("neither minAvailable nor maxUnavailable is set")
}

// expectedScale sums the replicas of the pods' controllers: a
// Deployment's for its ReplicaSets' pods, a ReplicaSet's, a
// ReplicationController's.
func (dc *Controller) expectedScale(pods []*corev1.Pod) (int32, error) {
	seen := map[types.UID]bool{}
	var sum int32
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			return 0, fmt.Errorf("pod %s has no controller: a percentage or maxUnavailable needs its controller's scale", p.Name)
		}
		uid, replicas, err := dc.scaleOf(p.Namespace, ref)
		if err != nil {
			return 0, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		if !seen[uid] {
			seen[uid] = true
			sum += replicas
		}
	}
	return sum, nil
}

func (dc *Controller) scaleOf(ns string, ref *metav1.OwnerReference) (types.UID, int32, error) {
	switch ref.Kind {
	case "ReplicaSet":
		rs, err := dc.rss.ReplicaSets(ns).Get(ref.Name)
		if err != nil || rs.UID != ref.UID {
			return "", 0, fmt.Errorf("its ReplicaSet %s is not found", ref.Name)
		}
		if d := metav1.GetControllerOf(rs); d != nil && d.Kind == "Deployment" {
			dep, err := dc.deps.Deployments(ns).Get(d.Name)
			if err != nil || dep.UID != d.UID {
				return "", 0, fmt.Errorf("its Deployment %s is not found", d.Name)
			}
			return dep.UID, replicas(dep.Spec.Replicas), nil
		}
		return rs.UID, replicas(rs.Spec.Replicas), nil
	case "ReplicationController":
		rc, err := dc.rcs.ReplicationControllers(ns).Get(ref.Name)
		if err != nil || rc.UID != ref.UID {
			return "", 0, fmt.Errorf("its ReplicationController %s is not found", ref.Name)
		}
		return rc.UID, replicas(rc.Spec.Replicas), nil
	}
	return "", 0, fmt.Errorf("its controller is a %s, whose scale kstep does not know", ref.Kind)
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
