package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kstep-dev/kstep/loadgen"
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
	// ActionKillPods deletes pods of the load's ReplicaSets (target load)
	// at Workload.Rate pods a second for the fault's Duration: Ready pods,
	// one of each ReplicaSet before a second of any, oldest first. Their
	// ReplicaSets replace them; nothing is undone.
	ActionKillPods Action = "kill-pods"
	// ActionScale scales the load's objects (target load: its
	// ReplicaSets, or its Deployments) through their scale subresource to
	// Workload.Factor times their replicas or to Workload.Replicas for the
	// fault's Duration; the undo scales each back to what it had.
	ActionScale Action = "scale"
)

// TargetLoad is the chaos load job's own objects: the ReplicaSets (or
// Deployments) it created, found by its label (loadgen.JobLabel) in its
// namespaces. Only the workload actions take it.
const TargetLoad Target = "load"

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

	// DetectPodReplaced: the first new pod of a ReplicaSet a kill-pods
	// fault took a pod from (its controller's replacement).
	DetectPodReplaced Detection = "pod-replaced"
	// DetectPodsChanged: the first pod of a ReplicaSet a scale fault
	// scaled seen created or leaving (terminating, deleted).
	DetectPodsChanged Detection = "pods-changed"
	// RecoverLoadReady: from the fault's last deletion (its UndoneAt), the
	// first moment every pod it deleted has been seen leaving and every
	// ReplicaSet it took a pod from has exactly its replicas active, all
	// Ready.
	RecoverLoadReady Recovery = "load-ready"
	// RecoverScaled: the first moment, before the scale back, every
	// ReplicaSet scaled has exactly its new replicas active, all Ready —
	// and, counted only if the same holds again at the old replicas after
	// the scale back (the note says when).
	RecoverScaled Recovery = "scaled-ready"
)

// apiAction reports whether a is made of API requests only.
func apiAction(a Action) bool {
	return a == ActionDrain || a == ActionDeleteNode || a == ActionDeletePod || workloadAction(a)
}

// workloadAction reports whether a acts on the load's own objects only
// (kill-pods, scale): kstep created them, so on external they need no
// --allow-disruption.
func workloadAction(a Action) bool {
	return a == ActionKillPods || a == ActionScale
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
// kstep does not run; disruptive API faults need allowDisruption. The
// workload faults (kill-pods, scale) touch only the load kstep created and
// need nothing.
func CheckExternal(sc *Scenario, allowDisruption bool) error {
	var errs []error
	for _, f := range sc.Faults {
		switch {
		case !apiAction(f.Action):
			errs = append(errs, fmt.Errorf("fault %s (%s %s) %w: on --provider external kstep reaches the cluster through its API only "+
				"(API-level actions: %s, %s, %s, %s, %s; run it with --provider process or docker)", f.Name, f.Action, f.Target, ErrNeedsProvider,
				ActionDrain, ActionDeleteNode, ActionDeletePod, ActionKillPods, ActionScale))
		case workloadAction(f.Action):
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
	case ActionKillPods, ActionScale:
		if f.Target != TargetLoad {
			return fmt.Errorf("%s acts on the load's objects: its target is %s", f.Action, TargetLoad)
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
	if rs.workload != nil {
		return r.injectWorkload(ctx, f, fr, rs.workload)
	}
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
// deleted Node or pod is the cluster's to bring back; kill-pods stops, a
// scaled load is scaled back.
func (r *run) undoAPI(ctx context.Context, f Fault, fr *FaultResult, rs resolved) error {
	if rs.workload != nil {
		return r.undoWorkload(ctx, f, fr, rs.workload)
	}
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
	return nil, "no pod seen leaving " + strings.Join(slices.Sorted(maps.Keys(nodes)), ",")
}

// nodeGone is when the node watch saw one of nodes deleted in [from, end).
func nodeGone(samples []NodeSample, nodes map[string]bool, from, end time.Time) (*float64, string) {
	for _, s := range samples {
		if s.Gone && nodes[s.Node] && !s.At.Before(from) && s.At.Before(end) {
			return ms(s.At.Sub(from)), "Node " + s.Node + " deleted"
		}
	}
	return nil, "no deletion of " + strings.Join(slices.Sorted(maps.Keys(nodes)), ",") + " seen"
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

// WorkloadFault is what a workload fault does to the load's objects.
type WorkloadFault struct {
	// Rate is how many of the load's pods a kill-pods fault deletes a
	// second (above 0, at most maxKillRate), for the fault's Duration.
	Rate float64 `json:"rate,omitempty"`
	// Factor is what a scale fault multiplies each object's replicas by
	// (rounded to the nearest); Replicas sets them instead. One of the two.
	Factor   float64 `json:"factor,omitempty"`
	Replicas *int32  `json:"replicas,omitempty"`
}

// Bounds of the workload faults: they load the cluster under test, and a
// typo must not turn into thousands of pods.
const (
	maxKillRate       = 20
	maxKills          = 1000
	maxScaleFactor    = 10
	maxScaledReplicas = 100
)

// scaled is the replicas a scale fault gives an object that has n.
func (w WorkloadFault) scaled(n int32) int32 {
	if w.Replicas != nil {
		return *w.Replicas
	}
	return int32(math.Round(float64(n) * w.Factor))
}

// kills is how many pods a kill-pods fault deletes: one at once, then one
// every 1/Rate until Duration.
func (w WorkloadFault) kills(d time.Duration) int {
	return max(1, int(math.Ceil(w.Rate*d.Seconds()-1e-9)))
}

// validateWorkload checks a fault's workload block against the load whose
// objects it acts on.
func (f Fault) validateWorkload(job loadgen.Job) error {
	w := f.Workload
	switch {
	case !workloadAction(f.Action) && w != nil:
		return fmt.Errorf("workload: set for action %s (only %s and %s have one)", f.Action, ActionKillPods, ActionScale)
	case !workloadAction(f.Action):
		return nil
	case w == nil && f.Action == ActionKillPods:
		return fmt.Errorf("%s needs workload: {rate: PODS_PER_SECOND}", f.Action)
	case w == nil:
		return fmt.Errorf("%s needs workload: {factor: F} or {replicas: N}", f.Action)
	case f.Duration.Duration <= 0:
		return fmt.Errorf("%s needs a duration", f.Action)
	}
	if f.Action == ActionKillPods {
		if w.Factor != 0 || w.Replicas != nil {
			return fmt.Errorf("workload: factor and replicas are for %s; %s takes rate", ActionScale, ActionKillPods)
		}
		if w.Rate <= 0 || w.Rate > maxKillRate {
			return fmt.Errorf("workload.rate: %g pods/s, want above 0 and at most %d", w.Rate, maxKillRate)
		}
		if n := w.kills(f.Duration.Duration); n > maxKills {
			return fmt.Errorf("workload: %g pods/s for %v deletes %d pods, at most %d", w.Rate, f.Duration.Duration, n, maxKills)
		}
		return nil
	}
	if w.Rate != 0 {
		return fmt.Errorf("workload: rate is for %s; %s takes factor or replicas", ActionKillPods, ActionScale)
	}
	switch {
	case (w.Factor != 0) == (w.Replicas != nil):
		return errors.New("workload: give one of factor and replicas")
	case w.Factor < 0 || w.Factor > maxScaleFactor:
		return fmt.Errorf("workload.factor: %g, want above 0 and at most %d", w.Factor, maxScaleFactor)
	}
	to := w.scaled(job.Object.Replicas)
	switch {
	case to < 0 || to > maxScaledReplicas:
		return fmt.Errorf("workload: the load's %d replicas scaled to %d, want 0 to %d", job.Object.Replicas, to, maxScaledReplicas)
	case to == job.Object.Replicas:
		return fmt.Errorf("workload: the load's %d replicas scaled to %d: no change to measure", job.Object.Replicas, to)
	}
	return nil
}

// workloadRun is a workload fault in progress, between its injection and
// its undo: what kill-pods deleted, what scale changed.
type workloadRun struct {
	stop context.CancelFunc
	done chan struct{}

	mu      sync.Mutex
	deleted []string  // kill-pods' deletions, namespace/name
	last    time.Time // kill-pods' last deletion
	skipped int       // ticks with no Ready pod of the load to delete
	errs    []error
	rs      map[string]bool
	// scaled: each object scaled, its replicas before.
	scaled []scaledObject
}

type scaledObject struct {
	key      string // namespace/name of the ReplicaSet or Deployment
	from, to int32
	rs       []string // the ReplicaSets whose replicas follow
}

func (w *workloadRun) hit(rs string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rs == nil {
		w.rs = map[string]bool{}
	}
	w.rs[rs] = true
}

func (w *workloadRun) replicaSets() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.rs))
}

// killOrder is the order kill-pods deletes pods in: Ready, active pods of
// a ReplicaSet not deleted yet; one of each ReplicaSet before a second of
// any, oldest first (a replacement is the newest: it goes last).
func killOrder(pods []corev1.Pod, deleted map[types.UID]bool) []corev1.Pod {
	var c []corev1.Pod
	for _, p := range pods {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.Kind != "ReplicaSet" || deleted[p.UID] || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || !loadgen.PodReady(&p) {
			continue
		}
		c = append(c, p)
	}
	sort.SliceStable(c, func(i, j int) bool {
		a, b := c[i].CreationTimestamp, c[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return c[i].Namespace+"/"+c[i].Name < c[j].Namespace+"/"+c[j].Name
	})
	rank := make([]int, len(c))
	seen := map[string]int{}
	for i, p := range c {
		o := p.Namespace + "/" + metav1.GetControllerOf(&p).Name
		rank[i] = seen[o]
		seen[o]++
	}
	idx := make([]int, len(c))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return rank[idx[i]] < rank[idx[j]] })
	out := make([]corev1.Pod, len(c))
	for i, k := range idx {
		out[i] = c[k]
	}
	return out
}

// loadSelector selects the load job's objects and pods.
func loadSelector(job loadgen.Job) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: loadgen.JobLabel + "=" + job.Name}
}

// killPods deletes the load's pods at the fault's rate until it has
// deleted its count or ctx ends (the undo). The candidates are listed
// again each second, or when none is left.
func killPods(ctx context.Context, cs kubernetes.Interface, job loadgen.Job, f Fault, w *workloadRun) {
	defer close(w.done)
	n := f.Workload.kills(f.Duration.Duration)
	tick := time.NewTicker(time.Duration(float64(time.Second) / f.Workload.Rate))
	defer tick.Stop()
	deleted := map[types.UID]bool{}
	var pool []corev1.Pod
	var listed time.Time
	for i := 0; i < n; i++ {
		if len(pool) == 0 || time.Since(listed) >= time.Second {
			pool, listed = nil, time.Now()
			for _, ns := range job.Namespaces {
				l, err := cs.CoreV1().Pods(ns).List(ctx, loadSelector(job))
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					w.fail(fmt.Errorf("list pods in %s: %w", ns, err))
					continue
				}
				pool = append(pool, l.Items...)
			}
			pool = killOrder(pool, deleted)
		}
		if len(pool) == 0 {
			w.mu.Lock()
			w.skipped++
			w.mu.Unlock()
		} else {
			p := pool[0]
			pool = pool[1:]
			uid := p.UID
			err := cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			switch {
			case err == nil:
				deleted[uid] = true
				w.hit(p.Namespace + "/" + metav1.GetControllerOf(&p).Name)
				w.mu.Lock()
				w.deleted = append(w.deleted, p.Namespace+"/"+p.Name)
				w.last = time.Now()
				w.mu.Unlock()
			case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
				// Gone or replaced meanwhile: the next one.
			case ctx.Err() != nil:
				return
			default:
				w.fail(fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err))
			}
		}
		if i == n-1 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// fail records a workload fault's error (the first few).
func (w *workloadRun) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) < 3 {
		w.errs = append(w.errs, err)
	}
}

// scaleTo sets obj's replicas through its scale subresource.
func scaleTo(ctx context.Context, cs kubernetes.Interface, kind, key string, n int32) error {
	ns, name, _ := strings.Cut(key, "/")
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
	var err error
	if kind == loadgen.KindDeployment {
		_, err = cs.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "scale")
	} else {
		_, err = cs.AppsV1().ReplicaSets(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "scale")
	}
	if err != nil {
		return fmt.Errorf("scale %s %s to %d: %w", kind, key, n, err)
	}
	return nil
}

// loadObjects lists the load's objects with their replicas, and for each
// the ReplicaSets whose replicas follow them (a ReplicaSet itself; a
// Deployment's ReplicaSets with replicas).
func loadObjects(ctx context.Context, cs kubernetes.Interface, job loadgen.Job) ([]scaledObject, error) {
	var out []scaledObject
	for _, ns := range job.Namespaces {
		rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, loadSelector(job))
		if err != nil {
			return nil, fmt.Errorf("list ReplicaSets in %s: %w", ns, err)
		}
		if job.Object.Kind != loadgen.KindDeployment {
			for _, rs := range rss.Items {
				if metav1.GetControllerOf(&rs) != nil {
					continue // not the job's own object
				}
				key := rs.Namespace + "/" + rs.Name
				out = append(out, scaledObject{key: key, from: replicasOf(rs.Spec.Replicas), rs: []string{key}})
			}
			continue
		}
		ds, err := cs.AppsV1().Deployments(ns).List(ctx, loadSelector(job))
		if err != nil {
			return nil, fmt.Errorf("list Deployments in %s: %w", ns, err)
		}
		for _, d := range ds.Items {
			o := scaledObject{key: d.Namespace + "/" + d.Name, from: replicasOf(d.Spec.Replicas)}
			for _, rs := range rss.Items {
				if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID && replicasOf(rs.Spec.Replicas) > 0 {
					o.rs = append(o.rs, rs.Namespace+"/"+rs.Name)
				}
			}
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, nil
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// intendedReplicas records, before the scale request goes out, that key's
// replicas are raised to n: rs-over-replicas must not count the pods its
// controller creates for them if the ReplicaSet watch delivers the change
// after the pod watch delivers those pods. A lowering is recorded after
// the answer instead (pods created before it were within the old count).
func (rec *recorder) intendedReplicas(key string, n int32) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.h.RS = append(rec.h.RS, RSEvent{At: rec.now(), Key: key, Replicas: n})
}

// scaleAll scales each object from its replicas (from) to to, skipping
// those that would not change, and returns what it scaled.
func (r *run) scaleAll(ctx context.Context, objs []scaledObject) ([]scaledObject, error) {
	var done []scaledObject
	var errs []error
	for _, o := range objs {
		if o.to == o.from {
			continue
		}
		up := o.to > o.from
		if up {
			for _, k := range o.rs {
				r.rec.intendedReplicas(k, o.to)
			}
		}
		if err := scaleTo(ctx, r.cs, r.sc.Load.Object.Kind, o.key, o.to); err != nil {
			errs = append(errs, err)
			if up {
				for _, k := range o.rs {
					r.rec.intendedReplicas(k, o.from)
				}
			}
			continue
		}
		if !up {
			for _, k := range o.rs {
				r.rec.intendedReplicas(k, o.to)
			}
		}
		done = append(done, o)
	}
	return done, errors.Join(errs...)
}

// injectWorkload starts a workload fault: kill-pods' deletions run until
// the undo; scale scales every object of the load now.
func (r *run) injectWorkload(ctx context.Context, f Fault, fr *FaultResult, w *workloadRun) error {
	job := r.sc.Load
	if f.Action == ActionKillPods {
		kctx, cancel := context.WithCancel(ctx)
		w.stop, w.done = cancel, make(chan struct{})
		go killPods(kctx, r.cs, job, f, w)
		r.logf("%s: deleting the pods of load %s at %g/s for %v", f.Name, job.Name, f.Workload.Rate, f.Duration.Duration)
		return nil
	}
	objs, err := loadObjects(ctx, r.cs, job)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return fmt.Errorf("load %s: %w: no %s with %s=%s yet", job.Name, ErrNoTarget, job.Object.Kind, loadgen.JobLabel, job.Name)
	}
	for i := range objs {
		objs[i].to = f.Workload.scaled(objs[i].from)
	}
	scaled, err := r.scaleAll(ctx, objs)
	w.scaled = scaled
	for _, o := range scaled {
		for _, k := range o.rs {
			w.hit(k)
		}
	}
	fr.ReplicaSets = w.replicaSets()
	fr.Detail = fmt.Sprintf("scaled %d of %d %ss of load %s (scale subresource)", len(scaled), len(objs), job.Object.Kind, job.Name)
	if len(scaled) > 0 {
		fr.Detail += fmt.Sprintf(", e.g. %s %d → %d", scaled[0].key, scaled[0].from, scaled[0].to)
	}
	r.logf("%s: %s", f.Name, fr.Detail)
	return err
}

// undoWorkload ends a workload fault: kill-pods stops deleting; scale
// scales each object back to its replicas before.
func (r *run) undoWorkload(ctx context.Context, f Fault, fr *FaultResult, w *workloadRun) error {
	if f.Action == ActionKillPods {
		if w.stop != nil {
			w.stop()
			<-w.done
		}
		w.mu.Lock()
		deleted, skipped, last, errs := w.deleted, w.skipped, w.last, errors.Join(w.errs...)
		w.mu.Unlock()
		fr.DeletedPods = deleted
		if !last.IsZero() {
			// The fault ended with its last deletion: recovery counts
			// from there.
			fr.UndoneAt = last
		}
		fr.ReplicaSets = w.replicaSets()
		fr.Detail = fmt.Sprintf("deleted %d pods of %d ReplicaSets of load %s at %g/s", len(deleted), len(fr.ReplicaSets), r.sc.Load.Name, f.Workload.Rate)
		if skipped > 0 {
			fr.Detail += fmt.Sprintf("; %d times no Ready pod to delete", skipped)
		}
		r.logf("%s: %s", f.Name, fr.Detail)
		return errs
	}
	var objs []scaledObject
	for _, o := range w.scaled {
		objs = append(objs, scaledObject{key: o.key, from: o.to, to: o.from, rs: o.rs})
	}
	back, err := r.scaleAll(context.WithoutCancel(ctx), objs)
	r.logf("%s: scaled %d of %d back", f.Name, len(back), len(objs))
	return err
}

// podsChanged is the first pod event in [from, end) of a ReplicaSet of
// rss that shows a pod created after from or, with leaving, an active pod
// leaving it (terminating or deleted).
func podsChanged(pods []PodEvent, rss map[string]bool, leaving bool, from, end time.Time) (*float64, string) {
	active := map[string]bool{} // uid → active, of pods seen before
	for _, e := range pods {
		if !rss[e.Owner] {
			continue
		}
		if e.At.Before(from) {
			active[e.UID] = e.Active && !e.Deleted
			continue
		}
		if !e.At.Before(end) {
			break
		}
		was, seen := active[e.UID]
		switch {
		case !seen && !e.Deleted:
			return ms(e.At.Sub(from)), e.Key + " created"
		case leaving && was && (e.Deleted || !e.Active):
			return ms(e.At.Sub(from)), e.Key + " leaving"
		}
		active[e.UID] = e.Active && !e.Deleted
	}
	if len(rss) == 0 {
		return nil, "no ReplicaSet of the load acted on"
	}
	return nil, fmt.Sprintf("no pod of the %d ReplicaSets acted on seen changing", len(rss))
}

// replicaSetsReady is the first moment in [from, end) at which every
// ReplicaSet of rss has exactly its replicas (as last seen) active, all
// of them Ready: from itself if they do then. With rescaled, a
// ReplicaSet counts only once a change of its replicas is seen at or
// after from; every pod of gone (namespace/name) must have been seen
// leaving (terminating or deleted): a deletion the watch has not
// delivered yet leaves its ReplicaSet looking whole.
func replicaSetsReady(h *History, rss map[string]bool, from, end time.Time, rescaled bool, gone map[string]bool) time.Time {
	if from.IsZero() || len(rss) == 0 {
		return time.Time{}
	}
	type pod struct {
		owner         string
		active, ready bool
	}
	pods := map[string]pod{}
	active, ready := map[string]int32{}, map[string]int32{}
	replicas := map[string]int32{}
	changed := map[string]bool{}
	left := 0 // pods of gone seen leaving
	seenLeaving := map[string]bool{}
	count := func(p pod, d int32) {
		if p.active {
			active[p.owner] += d
			if p.ready {
				ready[p.owner] += d
			}
		}
	}
	whole := func() bool {
		if left < len(gone) {
			return false
		}
		for rs := range rss {
			want, known := replicas[rs]
			if !known || (rescaled && !changed[rs]) || active[rs] != want || ready[rs] != want {
				return false
			}
		}
		return true
	}
	pi, ri := 0, 0
	evaluated := false
	for pi < len(h.Pods) || ri < len(h.RS) {
		// The earlier of the next pod and ReplicaSet events (ReplicaSets
		// first on a tie).
		var at time.Time
		rsNext := ri < len(h.RS) && (pi == len(h.Pods) || !h.RS[ri].At.After(h.Pods[pi].At))
		if rsNext {
			at = h.RS[ri].At
		} else {
			at = h.Pods[pi].At
		}
		if !at.Before(end) {
			break
		}
		if !evaluated && !at.Before(from) {
			evaluated = true
			if whole() {
				return from
			}
		}
		if rsNext {
			e := h.RS[ri]
			ri++
			if !rss[e.Key] {
				continue
			}
			replicas[e.Key] = e.Replicas
			if !e.At.Before(from) {
				changed[e.Key] = true
			}
		} else {
			e := h.Pods[pi]
			pi++
			if gone[e.Key] && !seenLeaving[e.Key] && (e.Deleted || !e.Active) {
				seenLeaving[e.Key] = true
				left++
			}
			if !rss[e.Owner] {
				continue
			}
			if old, ok := pods[e.UID]; ok {
				count(old, -1)
			}
			if e.Deleted {
				delete(pods, e.UID)
			} else {
				p := pod{owner: e.Owner, active: e.Active, ready: e.Ready}
				pods[e.UID] = p
				count(p, 1)
			}
		}
		if evaluated && whole() {
			return at
		}
	}
	if !evaluated && from.Before(end) && whole() {
		return from
	}
	return time.Time{}
}

// loadReady is kill-pods' recovery: from the fault's last deletion
// (undone), the first moment every pod it deleted has been seen leaving
// and every ReplicaSet it took a pod from is whole again.
func loadReady(h *History, rss, deleted map[string]bool, undone, end time.Time) (time.Time, string) {
	if len(rss) == 0 {
		return time.Time{}, "no pod of the load deleted"
	}
	t := replicaSetsReady(h, rss, undone, end, false, deleted)
	if t.IsZero() {
		return t, fmt.Sprintf("the %d ReplicaSets hit not seen whole again after the last deletion", len(rss))
	}
	return t, fmt.Sprintf("%d ReplicaSets whole %v after the last deletion", len(rss), t.Sub(undone).Round(time.Millisecond))
}

// scaledReady is scale's recovery: the first moment before the scale back
// (undone) every ReplicaSet scaled has its new replicas Ready, counted
// only if each has its old ones Ready again after the scale back.
func scaledReady(h *History, rss map[string]bool, inj, undone, end time.Time) (time.Time, string) {
	if len(rss) == 0 {
		return time.Time{}, "no ReplicaSet of the load scaled"
	}
	until := undone
	if until.IsZero() {
		until = end
	}
	t := replicaSetsReady(h, rss, inj, until, true, nil)
	if t.IsZero() {
		return t, fmt.Sprintf("the %d ReplicaSets scaled not seen Ready at their new replicas before the scale back", len(rss))
	}
	note := fmt.Sprintf("%d ReplicaSets Ready at their new replicas", len(rss))
	if undone.IsZero() {
		return time.Time{}, note + "; not scaled back"
	}
	back := replicaSetsReady(h, rss, undone, end, true, nil)
	if back.IsZero() {
		return time.Time{}, note + "; not seen Ready at their old replicas after the scale back"
	}
	return t, fmt.Sprintf("%s; at their old replicas %v after the scale back", note, back.Sub(undone).Round(time.Millisecond))
}
