package nodelifecycle

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// lastHeartbeat is the newest sign of life of a node: its Lease renewal or
// its Ready condition's heartbeat, else its creation.
func lastHeartbeat(node *corev1.Node, lease *coordinationv1.Lease) time.Time {
	t := node.CreationTimestamp.Time
	if lease != nil && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(t) {
		t = lease.Spec.RenewTime.Time
	}
	if c := readyCondition(node); c != nil && c.LastHeartbeatTime.After(t) {
		t = c.LastHeartbeatTime.Time
	}
	return t
}

func readyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// stale reports whether a node's heartbeat, counted as no older than
// floor, is older than grace at now.
func stale(node *corev1.Node, lease *coordinationv1.Lease, grace time.Duration, now, floor time.Time) bool {
	return now.Sub(later(lastHeartbeat(node, lease), floor)) > grace
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// healthy reports a node whose heartbeat is fresh and whose Ready
// condition is True.
func healthy(node *corev1.Node, lease *coordinationv1.Lease, grace time.Duration, now time.Time) bool {
	c := readyCondition(node)
	return !stale(node, lease, grace, now, time.Time{}) && c != nil && c.Status == corev1.ConditionTrue
}

// fullDisruption is upstream's full-disruption mode, for kstep's one zone:
// when every node is unhealthy at once, the likelier cause is the control
// plane or the network (an etcd out of space, every apiserver unreachable)
// rather than every node dying together, and evicting would delete every
// pod of the cluster. Upstream then stops evicting and lifts the NoExecute
// taints; so does kstep, until a node is healthy again.
func fullDisruption(nodes, unhealthy int) bool {
	return nodes > 0 && unhealthy == nodes
}

// wantTaints returns the NoExecute health taint the node's Ready condition
// calls for: unreachable for Unknown (or no condition), not-ready for False,
// none for True.
func wantTaint(node *corev1.Node) string {
	c := readyCondition(node)
	switch {
	case c == nil || c.Status == corev1.ConditionUnknown:
		return corev1.TaintNodeUnreachable
	case c.Status == corev1.ConditionFalse:
		return corev1.TaintNodeNotReady
	}
	return ""
}

// healthTaints are the taints this controller owns.
var healthTaints = map[string]bool{corev1.TaintNodeUnreachable: true, corev1.TaintNodeNotReady: true}

// healthEffects are the effects each health taint comes in, as upstream:
// NoExecute evicts (after the pod's toleration), NoSchedule keeps new pods
// off. Pods carry default tolerations for the NoExecute one (the
// apiserver's DefaultTolerationSeconds admission), so without the
// NoSchedule twin the scheduler would bind replacements to the dead node.
var healthEffects = []corev1.TaintEffect{corev1.TaintEffectNoExecute, corev1.TaintEffectNoSchedule}

// reconcileTaints returns the node's taints with exactly the wanted health
// taint in exactly effects, keeping others; changed reports whether that
// differs.
func reconcileTaints(taints []corev1.Taint, want string, effects []corev1.TaintEffect, now time.Time) ([]corev1.Taint, bool) {
	var out []corev1.Taint
	have := map[corev1.TaintEffect]bool{}
	wanted := map[corev1.TaintEffect]bool{}
	for _, e := range effects {
		wanted[e] = true
	}
	changed := false
	for _, t := range taints {
		if healthTaints[t.Key] && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == corev1.TaintEffectNoSchedule) {
			if t.Key == want && wanted[t.Effect] {
				have[t.Effect] = true
				out = append(out, t)
			} else {
				changed = true
			}
			continue
		}
		out = append(out, t)
	}
	if want == "" {
		return out, changed
	}
	for _, eff := range effects {
		if !have[eff] {
			added := nowMeta(now)
			out = append(out, corev1.Taint{Key: want, Effect: eff, TimeAdded: &added})
			changed = true
		}
	}
	return out, changed
}

// evictAt returns when a pod must leave a node with these taints, and
// whether it must at all. A pod that tolerates a NoExecute taint without
// tolerationSeconds stays; one that tolerates it for a while leaves after
// that; one that does not tolerate it leaves after untolerated (kstep's
// stand-in for upstream's default 300 s toleration).
func evictAt(pod *corev1.Pod, taints []corev1.Taint, untolerated time.Duration) (time.Time, bool) {
	var at time.Time
	must := false
	for _, t := range taints {
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		added := time.Time{}
		if t.TimeAdded != nil {
			added = t.TimeAdded.Time
		}
		d, forever := toleration(pod, &t, untolerated)
		if forever {
			continue
		}
		when := added.Add(d)
		if !must || when.Before(at) {
			at, must = when, true
		}
	}
	return at, must
}

func toleration(pod *corev1.Pod, t *corev1.Taint, untolerated time.Duration) (time.Duration, bool) {
	best := time.Duration(-1)
	for i := range pod.Spec.Tolerations {
		tol := &pod.Spec.Tolerations[i]
		if !tol.ToleratesTaint(klog.Background(), t, false) {
			continue
		}
		if tol.TolerationSeconds == nil {
			return 0, true
		}
		d := time.Duration(max(*tol.TolerationSeconds, 0)) * time.Second
		if d > best {
			best = d
		}
	}
	if best < 0 {
		return untolerated, false
	}
	return best, false
}
