package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// The API-level actions: faults made of API requests only, so they run on
// every provider, external included (a cluster kstep does not run). On
// external they disrupt what kstep did not create and need
// Options.AllowDisruption (kstep chaos --allow-disruption).
const (
	// ActionDrain cordons the node with the most pods and evicts every pod
	// on it through policy/v1 Eviction (a PodDisruptionBudget's refusal,
	// 429, is retried until the budget allows it or the fault's Duration
	// ends); the node is uncordoned after Duration (the undo).
	ActionDrain Action = "drain"
	// ActionDeleteNode deletes the Node object of the node with the most
	// pods. Nothing undoes it: recovery is the cluster's. kstep's kubelet
	// registers its node again on its next status update; upstream's
	// kubelet does too, and upstream relies on its pod garbage collector
	// for the pods bound to a Node that is gone.
	ActionDeleteNode Action = "delete-node"
	// ActionDeletePod deletes the pod of the controller-manager or
	// scheduler Lease holder, where those run as pods (kubeadm's static
	// pods, kind): the pod whose name is the holderIdentity's host part.
	// Where none runs as a pod (kstep's own clusters run them as
	// processes) the fault is refused with the reason.
	ActionDeletePod Action = "delete-pod"
)

// The API-level detections and recovery.
const (
	// DetectPodEvicted: the first pod on the fault's node seen deleted or
	// terminating.
	DetectPodEvicted Detection = "pod-evicted"
	// DetectNodeGone: the node watch saw the Node deleted.
	DetectNodeGone Detection = "node-gone"
	// RecoverNodeReturned: the deleted Node is registered again and Ready,
	// and every ReplicaSet that had a pod on it has its replicas Ready
	// (rescheduled elsewhere, or running again on the node that returned).
	RecoverNodeReturned Recovery = "node-returned"
)

// apiAction reports whether a is made of API requests only.
func apiAction(a Action) bool {
	return a == ActionDrain || a == ActionDeleteNode || a == ActionDeletePod
}

// ErrNeedsProvider is the refusal of a fault an external cluster cannot
// take: it needs the cluster's processes or network.
var ErrNeedsProvider = errors.New("needs a provider that runs the cluster")

// ErrNeedsDisruption is the refusal of a disruptive API fault on an
// external cluster without --allow-disruption.
var ErrNeedsDisruption = errors.New("disrupts what kstep did not create")

// CheckExternal says why sc cannot run on an external cluster (every
// fault at once), before anything starts: faults that need a provider
// (SIGKILL, pause, partition, links, fill) reach processes and networks
// kstep does not run; disruptive API faults need allowDisruption.
func CheckExternal(sc *Scenario, allowDisruption bool) error {
	var errs []error
	for _, f := range sc.Faults {
		switch {
		case !apiAction(f.Action):
			errs = append(errs, fmt.Errorf("fault %s (%s %s) %w: on --provider external kstep reaches the cluster through its API only "+
				"(API-level actions: %s, %s, %s; run it with --provider process or docker)", f.Name, f.Action, f.Target, ErrNeedsProvider,
				ActionDrain, ActionDeleteNode, ActionDeletePod))
		case !allowDisruption:
			errs = append(errs, fmt.Errorf("fault %s (%s %s) %w (a node, its pods or a component of the cluster): give --allow-disruption to run it",
				f.Name, f.Action, f.Target, ErrNeedsDisruption))
		}
	}
	return errors.Join(errs...)
}

// validateAPI checks an API-level fault's target.
func (f Fault) validateAPI() error {
	switch f.Action {
	case ActionDrain, ActionDeleteNode:
		if f.Target != TargetNode {
			return fmt.Errorf("%s acts on a node: its target is %s", f.Action, TargetNode)
		}
	case ActionDeletePod:
		if f.Target != TargetControllerManager && f.Target != TargetScheduler {
			return fmt.Errorf("%s deletes a Lease holder's pod: its target is %s or %s", f.Action, TargetControllerManager, TargetScheduler)
		}
	}
	return nil
}

// apiNode picks the node an API-level node fault acts on: the schedulable
// node with the most active pods.
func (r *resolver) apiNode(ctx context.Context, t Target) (resolved, error) {
	nodes, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return resolved{}, fmt.Errorf("list nodes: %w", err)
	}
	schedulable := map[string]bool{}
	for _, n := range nodes.Items {
		if !n.Spec.Unschedulable {
			schedulable[n.Name] = true
		}
	}
	with, err := r.nodesWithPods(ctx, func(n string) bool { return schedulable[n] })
	if err != nil {
		return resolved{}, err
	}
	if len(with) == 0 {
		return resolved{}, fmt.Errorf("%s: %w: no schedulable node runs a pod", t, ErrNoTarget)
	}
	if len(schedulable) < 2 {
		return resolved{}, fmt.Errorf("%s: %w: its pods need another schedulable node to go to", t, ErrNoTarget)
	}
	return resolved{nodes: with[:1], api: true}, nil
}

// leaderPod finds the pod of the Lease holder id among pods: upstream's
// components take "<hostname>_<uuid>" as their identity, and a static
// pod's hostname is its node's, its name "<component>-<node>"; a pod
// whose name is the host part, or which is the component's static pod on
// that host, is the holder's.
func leaderPod(id, component string, pods []corev1.Pod) (*corev1.Pod, bool) {
	host, _, _ := strings.Cut(id, "_")
	var match []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Name == host || p.Name == id || (p.Name == component+"-"+host && p.Spec.NodeName == host) {
			match = append(match, p)
		}
	}
	if len(match) != 1 {
		return nil, false
	}
	return match[0], true
}

// leaderComponent is the upstream component whose pod a leader target is.
func leaderComponent(t Target) string {
	if t == TargetScheduler {
		return "kube-scheduler"
	}
	return "kube-controller-manager"
}

// upstreamLease is upstream's Lease of a leader target.
func upstreamLease(t Target) string {
	return leaderComponent(t)
}

// apiLeader resolves a delete-pod fault: the Lease holder's pod, from
// kstep's Lease or upstream's.
func (r *resolver) apiLeader(ctx context.Context, t Target) (resolved, error) {
	var id, lease string
	for _, name := range []string{leaseOf(t), upstreamLease(t)} {
		l, err := r.cs.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return resolved{}, fmt.Errorf("%s: lease %s: %w", t, name, err)
		}
		if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			id, lease = *l.Spec.HolderIdentity, name
			break
		}
	}
	if id == "" {
		return resolved{}, fmt.Errorf("%s: %w: neither lease %s nor %s in %s has a holder", t, ErrNoTarget, leaseOf(t), upstreamLease(t), metav1.NamespaceSystem)
	}
	pods, err := r.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return resolved{}, fmt.Errorf("list pods: %w", err)
	}
	p, ok := leaderPod(id, leaderComponent(t), pods.Items)
	if !ok {
		return resolved{}, fmt.Errorf("%s: %w: the holder of lease %s, %q, runs as no pod of this cluster (one pod named after it): "+
			"%s deletes a leader's pod, where the component runs as a pod (kstep's own clusters run it as a process: use kill there)",
			t, ErrNoTarget, lease, id, ActionDeletePod)
	}
	return resolved{actors: []string{id}, api: true, pod: p.Namespace + "/" + p.Name}, nil
}

// drainable lists the pods a drain evicts from node: what kubectl drain
// evicts — not the DaemonSets' (they would come back on the cordoned
// node), not mirror pods (the kubelet's own), not those terminating or
// finished.
func drainable(pods []corev1.Pod, node string) []types.NamespacedName {
	var out []types.NamespacedName
	for _, p := range pods {
		if p.Spec.NodeName != node || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			continue
		}
		ds := false
		for _, o := range p.OwnerReferences {
			if o.Kind == "DaemonSet" {
				ds = true
			}
		}
		if !ds {
			out = append(out, types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// cordon sets or clears the node's spec.unschedulable.
func cordon(ctx context.Context, cs kubernetes.Interface, node string, on bool) error {
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		what := "cordon"
		if !on {
			what = "uncordon"
		}
		return fmt.Errorf("%s %s: %w", what, node, err)
	}
	return nil
}

// evictionRetry is how often a drain asks again for an eviction a
// PodDisruptionBudget refused.
const evictionRetry = time.Second

// evict evicts every pod through policy/v1 Eviction until ctx ends,
// asking again for those a PodDisruptionBudget refuses (429); it returns
// how many were evicted, how many times a budget refused and what failed.
func evict(ctx context.Context, cs kubernetes.Interface, pods []types.NamespacedName) (evicted, refused int, err error) {
	left := append([]types.NamespacedName(nil), pods...)
	for len(left) > 0 {
		var again []types.NamespacedName
		var errs []error
		for _, p := range left {
			e := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
			switch err := cs.PolicyV1().Evictions(p.Namespace).Evict(ctx, e); {
			case err == nil:
				evicted++
			case apierrors.IsNotFound(err):
				// Gone already: nothing to evict.
			case apierrors.IsTooManyRequests(err):
				refused++
				again = append(again, p)
			default:
				errs = append(errs, fmt.Errorf("evict %s: %w", p, err))
			}
		}
		if len(errs) > 0 {
			return evicted, refused, errors.Join(errs...)
		}
		left = again
		if len(left) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return evicted, refused, fmt.Errorf("%d pods still refused by their PodDisruptionBudgets when the drain ended: %v", len(left), left)
		case <-time.After(evictionRetry):
		}
	}
	return evicted, refused, nil
}

// drainSettle is how long a drain waits after its evictions before it
// lists the node again: a scheduler whose cache had not yet seen the
// cordon may have bound a pod to the node meanwhile.
const drainSettle = time.Second

// drain evicts the drainable pods of the cordoned node, then lists it
// again after settle and evicts what was bound to it since (a scheduler
// acts on its cache, which sees the cordon a moment late), until a listing
// finds nothing new or ctx ends. It returns how many pods it listed, how
// many it evicted and how many times a budget refused.
func drain(ctx context.Context, cs kubernetes.Interface, node string, settle time.Duration) (listed, evicted, refused int, err error) {
	seen := map[types.NamespacedName]bool{}
	for round := 0; ; round++ {
		pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			if ctx.Err() != nil && round > 0 {
				return listed, evicted, refused, nil // the drain's time is up
			}
			return listed, evicted, refused, fmt.Errorf("list pods on %s: %w", node, err)
		}
		var fresh []types.NamespacedName
		for _, p := range drainable(pods.Items, node) {
			if !seen[p] {
				seen[p] = true
				fresh = append(fresh, p)
			}
		}
		if len(fresh) == 0 && round > 0 {
			return listed, evicted, refused, nil
		}
		listed += len(fresh)
		e, r, err := evict(ctx, cs, fresh)
		evicted, refused = evicted+e, refused+r
		if err != nil {
			return listed, evicted, refused, err
		}
		select {
		case <-ctx.Done():
			return listed, evicted, refused, nil
		case <-time.After(settle):
		}
	}
}

// injectAPI applies an API-level fault to what rs resolved.
func (r *run) injectAPI(ctx context.Context, f Fault, fr *FaultResult, rs resolved) error {
	switch f.Action {
	case ActionDrain:
		node := rs.nodes[0]
		if err := cordon(ctx, r.cs, node, true); err != nil {
			return err
		}
		dctx, cancel := context.WithTimeout(ctx, max(f.Duration.Duration, time.Second))
		defer cancel()
		listed, evicted, refused, err := drain(dctx, r.cs, node, drainSettle)
		fr.Detail = fmt.Sprintf("cordoned %s; %d of %d pods evicted (policy/v1 Eviction), %d refusals by PodDisruptionBudgets retried", node, evicted, listed, refused)
		r.logf("%s: %s", f.Name, fr.Detail)
		return err
	case ActionDeleteNode:
		node := rs.nodes[0]
		// What deleting it means depends on what runs it: read it first.
		n, err := r.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s: %w", node, err)
		}
		if err := r.cs.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete node %s: %w", node, err)
		}
		fr.Detail = "deleted Node " + node + " (kstep's kubelet registers it again; upstream's pod GC deletes the pods bound to a Node that is gone)"
		if note := deletedNodeNote(f.Name, n); note != "" {
			fr.Detail = "deleted Node " + node + ": " + note
			r.notes = append(r.notes, note)
		}
		return nil
	case ActionDeletePod:
		ns, name, _ := strings.Cut(rs.pod, "/")
		if err := r.cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete pod %s: %w", rs.pod, err)
		}
		fr.Detail = "deleted pod " + rs.pod + " of lease holder " + rs.actors[0]
		return nil
	}
	return fmt.Errorf("%s: not an API-level action", f.Action)
}

// kwokNodeAnnotation marks the Nodes kwok fakes (bench.KindFakeKwok).
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// deletedNodeNote is what the report must say of fault deleting n when its
// recovery cannot come by design: kwok registers no Node (it acts on the
// Node objects others create), so a deleted kwok node never returns.
func deletedNodeNote(fault string, n *corev1.Node) string {
	if n.Annotations[kwokNodeAnnotation] != "fake" {
		return ""
	}
	return fmt.Sprintf("%s: %s is a kwok node: kwok registers no Node (it fakes the ones others create), so it is not registered again and %s is not observable by design; upstream's pod GC deletes the pods bound to it (after its 40 s quarantine) and their ReplicaSets replace them on other nodes",
		fault, n.Name, RecoverNodeReturned)
}

// undoAPI undoes an API-level fault: a drained node is uncordoned; a
// deleted Node or pod is the cluster's to bring back.
func (r *run) undoAPI(ctx context.Context, f Fault, rs resolved) error {
	if f.Action == ActionDrain && len(rs.nodes) > 0 {
		return cordon(context.WithoutCancel(ctx), r.cs, rs.nodes[0], false)
	}
	return nil
}

// podEvicted is the first pod event in [from, end) of a pod on one of
// nodes leaving it: deleted or terminating.
func podEvicted(pods []PodEvent, nodes map[string]bool, from, end time.Time) (*float64, string) {
	for _, e := range pods {
		if e.At.Before(from) || !e.At.Before(end) {
			continue
		}
		if nodes[e.Node] && (e.Deleted || !e.Active) {
			return ms(e.At.Sub(from)), e.Key + " left " + e.Node
		}
	}
	return nil, "no pod seen leaving " + strings.Join(sortedKeys(nodes), ",")
}

// nodeGone is when the node watch saw one of nodes deleted in [from, end).
func nodeGone(samples []NodeSample, nodes map[string]bool, from, end time.Time) (*float64, string) {
	for _, s := range samples {
		if s.Gone && nodes[s.Node] && !s.At.Before(from) && s.At.Before(end) {
			return ms(s.At.Sub(from)), "Node " + s.Node + " deleted"
		}
	}
	return nil, "no deletion of " + strings.Join(sortedKeys(nodes), ",") + " seen"
}

// nodeReturned is the first moment in [from, end) at which every one of
// nodes, deleted after from, has been registered again and is Ready, and
// every ReplicaSet that had a pod on them has its replicas Ready
// (elsewhere or on the returned node); the note says when the Node came
// back.
func nodeReturned(h *History, nodes map[string]bool, from, end time.Time) (time.Time, string) {
	gone := map[string]bool{}
	var back time.Time
	for _, s := range h.Nodes {
		if s.At.Before(from) || !s.At.Before(end) || !nodes[s.Node] {
			continue
		}
		if s.Gone {
			gone[s.Node] = true
		} else if gone[s.Node] && s.Ready {
			delete(gone, s.Node)
			if len(gone) == 0 {
				back = s.At
			}
		}
	}
	if back.IsZero() || len(gone) > 0 {
		return time.Time{}, "Node not seen registered again and Ready"
	}
	note := fmt.Sprintf("Node back Ready after %v", back.Sub(from).Round(time.Millisecond))
	whole := wholeAgain(h, nodes, nil, from, end)
	// The ReplicaSets hit were whole again on some node: after the Node
	// returned is the recovery, whichever came last.
	if whole.IsZero() {
		return time.Time{}, note + "; its ReplicaSets not seen whole again"
	}
	if whole.Before(back) {
		return back, note
	}
	return whole, note + "; its ReplicaSets whole again after it"
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckWatchOrder is the watch-continuity check an external cluster
// allows: without etcd's history only the watchers' own record can be
// judged — resourceVersions strictly increasing, and no resume refused
// with 410 Gone (events in between unseen). Whether every revision was
// delivered needs etcd, and the summary says so.
func CheckWatchOrder(watchers []WatcherLog) Invariant {
	inv := CheckWatchGaps(watchers, []int64{})
	inv.Checked = len(watchers) > 0
	if !inv.Checked {
		inv.Detail = append(inv.Detail, "no watcher ran")
	}
	events := 0
	for _, w := range watchers {
		events += len(w.RVs)
	}
	inv.Summary = fmt.Sprintf("%d watchers, %d events: resourceVersions in order, no resume lost (410), %d gaps; every revision delivered not checked (etcd is not reachable on external)",
		len(watchers), events, inv.Count)
	return inv
}

// externalNodes is how many nodes the external cluster has, for the
// wait before the load.
func externalNodes(ctx context.Context, cs kubernetes.Interface) (int, error) {
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list nodes: %w", err)
	}
	if len(l.Items) == 0 {
		return 0, errors.New("the cluster has no nodes")
	}
	return len(l.Items), nil
}
