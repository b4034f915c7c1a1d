package nodelifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kstep-dev/kstep/cluster/controller"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	coordlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// Controller is the node lifecycle controller.
type Controller struct {
	client kubernetes.Interface
	nodes  corelisters.NodeLister
	leases coordlisters.LeaseLister
	// pods carries controller.PodsByNode: eviction reads a tainted node's
	// pods, not every pod.
	pods     cache.Indexer
	synced   []cache.InformerSynced
	recorder record.EventRecorder
	log      *slog.Logger
	now      func() time.Time
	opts     controller.Options
	// disrupted: the last pass found every node unhealthy (full disruption).
	disrupted bool
	// graceFrom: no heartbeat counts as older than this when a node is
	// judged stale; leaving full disruption moves it to that moment.
	graceFrom time.Time
}

// New builds the controller on the context's informers.
func New(c *controller.Context) controller.Controller {
	n := c.Informers.Core().V1().Nodes()
	l := c.Informers.Coordination().V1().Leases()
	p := c.PodInformer()
	controller.MustIndex(p, controller.PodsByNode)
	return &Controller{
		client: c.Client, nodes: n.Lister(), leases: l.Lister(), pods: p.GetIndexer(),
		synced:   []cache.InformerSynced{n.Informer().HasSynced, l.Informer().HasSynced, p.HasSynced},
		recorder: c.Recorder, log: c.Log.With("controller", "nodelifecycle"), now: c.Now, opts: c.Options,
	}
}

// Name implements controller.Controller.
func (c *Controller) Name() string { return "nodelifecycle" }

// Run checks every node each NodeMonitorPeriod until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	// A new leader gives every node a full grace period before judging it:
	// its caches may have just seen heartbeats that were delayed by the
	// failover itself.
	start := c.now()
	t := time.NewTicker(c.opts.NodeMonitorPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if c.now().Sub(start) < c.opts.NodeMonitorGracePeriod {
				continue
			}
			c.monitor(ctx)
		}
	}
}

func nowMeta(t time.Time) metav1.Time { return metav1.NewTime(t) }

// monitor runs one pass over every node.
func (c *Controller) monitor(ctx context.Context) {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return
	}
	now := c.now()
	leases := make([]*coordinationv1.Lease, len(nodes))
	unhealthy := 0
	for i, node := range nodes {
		leases[i], _ = c.leases.Leases(corev1.NamespaceNodeLease).Get(node.Name)
		if !healthy(node, leases[i], c.opts.NodeMonitorGracePeriod, now) {
			unhealthy++
		}
	}
	disrupted := fullDisruption(len(nodes), unhealthy)
	if disrupted != c.disrupted {
		if disrupted {
			c.log.Warn("full disruption: every node is unhealthy; no NoExecute taints, no evictions until one is healthy again", "nodes", len(nodes))
		} else {
			// Upstream resets every node's timer on leaving full
			// disruption: after an outage of the control plane every node
			// missed its renewals, and the first to renew again must not
			// condemn the others before they have had a grace period to
			// renew too.
			c.graceFrom = now
			c.log.Info("full disruption over: every node has a full grace period from now", "nodes", len(nodes), "unhealthy", unhealthy)
		}
		c.disrupted = disrupted
	}
	// In full disruption, and for a grace period after it, no node is
	// condemned: NoSchedule taints only, no NoExecute, no eviction. A node
	// declared Ready=Unknown during the outage is judged again when that
	// grace period is over.
	restrained := disrupted || now.Before(c.graceFrom.Add(c.opts.NodeMonitorGracePeriod))
	for i, node := range nodes {
		if err := c.checkHealth(ctx, node, leases[i], now, restrained); err != nil && !apierrors.IsConflict(err) {
			c.log.Warn("node health", "node", node.Name, "err", err)
		}
		if restrained {
			continue
		}
		if err := c.evict(ctx, node, now); err != nil {
			c.log.Warn("evicting pods", "node", node.Name, "err", err)
		}
	}
}

// checkHealth declares a stale node Ready=Unknown and sets the health taints
// its Ready condition calls for (restrained: NoSchedule only).
func (c *Controller) checkHealth(ctx context.Context, node *corev1.Node, lease *coordinationv1.Lease, now time.Time, restrained bool) error {
	if stale(node, lease, c.opts.NodeMonitorGracePeriod, now, c.graceFrom) {
		if rc := readyCondition(node); rc == nil || rc.Status != corev1.ConditionUnknown {
			cp := node.DeepCopy()
			cond := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
				Message: "Kubelet stopped posting node status.", LastTransitionTime: nowMeta(now)}
			if rc != nil {
				cond.LastHeartbeatTime = rc.LastHeartbeatTime
			}
			setCondition(&cp.Status, cond)
			updated, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, cp, metav1.UpdateOptions{})
			if err != nil {
				return fmt.Errorf("marking %s Ready=Unknown: %w", node.Name, err)
			}
			c.recorder.Eventf(updated, corev1.EventTypeNormal, "NodeNotReady", "Node %s status is now: NodeNotReady", node.Name)
			c.log.Info("node not ready", "node", node.Name, "lastHeartbeat", lastHeartbeat(node, lease))
			node = updated
		}
	}
	effects := healthEffects
	if restrained {
		effects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule}
	}
	taints, changed := reconcileTaints(node.Spec.Taints, wantTaint(node), effects, now)
	if !changed {
		return nil
	}
	cp := node.DeepCopy()
	cp.Spec.Taints = taints
	_, err := c.client.CoreV1().Nodes().Update(ctx, cp, metav1.UpdateOptions{})
	return err
}

func setCondition(st *corev1.NodeStatus, cond corev1.NodeCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == cond.Type {
			st.Conditions[i] = cond
			return
		}
	}
	st.Conditions = append(st.Conditions, cond)
}

// evict deletes the pods whose toleration of the node's NoExecute taints
// has run out.
func (c *Controller) evict(ctx context.Context, node *corev1.Node, now time.Time) error {
	hasNoExecute := false
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			hasNoExecute = true
		}
	}
	if !hasNoExecute {
		return nil
	}
	pods, err := controller.PodsOn(c.pods, node.Name)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.Spec.NodeName != node.Name || p.DeletionTimestamp != nil {
			continue
		}
		at, must := evictAt(p, node.Spec.Taints, c.opts.PodEvictionTimeout)
		if !must || now.Before(at) {
			continue
		}
		err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		c.recorder.Eventf(p, corev1.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s/%s", p.Namespace, p.Name)
	}
	return nil
}
