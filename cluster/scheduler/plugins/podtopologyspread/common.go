package podtopologyspread

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kstep-dev/kstep/cluster/scheduler/framework"
	"github.com/kstep-dev/kstep/cluster/scheduler/plugins/helper"
)

// constraint is a parsed topology spread constraint.
type constraint struct {
	maxSkew            int32
	topologyKey        string
	selector           labels.Selector
	minDomains         int32
	nodeAffinityPolicy corev1.NodeInclusionPolicy
	nodeTaintsPolicy   corev1.NodeInclusionPolicy
}

// SystemDefaultConstraints are upstream's system defaults, applied to a
// pod without constraints that a workload selects.
var SystemDefaultConstraints = []corev1.TopologySpreadConstraint{
	{TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
}

// parse keeps the constraints with the given action, as upstream:
// matchLabelKeys add the pod's values of those keys to the selector;
// minDomains defaults to 1, nodeAffinityPolicy to Honor, nodeTaintsPolicy
// to Ignore.
func parse(cs []corev1.TopologySpreadConstraint, podLabels map[string]string, action corev1.UnsatisfiableConstraintAction) ([]constraint, error) {
	var out []constraint
	for i := range cs {
		c := &cs[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("topology spread constraint %d: %w", i, err)
		}
		if len(c.MatchLabelKeys) > 0 {
			set := labels.Set{}
			for _, k := range c.MatchLabelKeys {
				if v, ok := podLabels[k]; ok {
					set[k] = v
				}
			}
			if len(set) > 0 {
				merged := labels.SelectorFromSet(set)
				if reqs, ok := sel.Requirements(); ok {
					merged = merged.Add(reqs...)
				}
				sel = merged
			}
		}
		pc := constraint{
			maxSkew: c.MaxSkew, topologyKey: c.TopologyKey, selector: sel, minDomains: 1,
			nodeAffinityPolicy: corev1.NodeInclusionPolicyHonor, nodeTaintsPolicy: corev1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			pc.minDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			pc.nodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			pc.nodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, pc)
	}
	return out, nil
}

// includes reports whether node counts for c given the pod's node
// affinity and tolerations and c's inclusion policies.
func (c *constraint) includes(pod *corev1.Pod, node *corev1.Node, req *helper.RequiredNodeAffinity) bool {
	if c.nodeAffinityPolicy == corev1.NodeInclusionPolicyHonor && !req.Matches(node) {
		return false
	}
	if c.nodeTaintsPolicy == corev1.NodeInclusionPolicyHonor {
		if _, untolerated := helper.FindUntoleratedTaint(node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotSchedule); untolerated {
			return false
		}
	}
	return true
}

// hasAllKeys reports whether the node has every constraint's topology key.
func hasAllKeys(nodeLabels map[string]string, cs []constraint) bool {
	for i := range cs {
		if _, ok := nodeLabels[cs[i].topologyKey]; !ok {
			return false
		}
	}
	return true
}

// countMatching counts the pods of namespace ns selected by sel, not
// being deleted.
func countMatching(pods []*framework.PodInfo, sel labels.Selector, ns string) int {
	if sel.Empty() {
		return 0
	}
	n := 0
	for _, p := range pods {
		if p.Pod.DeletionTimestamp != nil || p.Pod.Namespace != ns {
			continue
		}
		if sel.Matches(labels.Set(p.Pod.Labels)) {
			n++
		}
	}
	return n
}

// constraints are the pod's own constraints with the given action, or,
// without any, the system defaults with the selector of the workloads
// that select or own it.
func (pl *PodTopologySpread) constraints(pod *corev1.Pod, action corev1.UnsatisfiableConstraintAction) ([]constraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return parse(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
	}
	if action != corev1.ScheduleAnyway {
		return nil, nil // the system defaults are all ScheduleAnyway
	}
	wl := pl.h.Workloads()
	if wl == nil {
		return nil, nil
	}
	sel := DefaultSelector(pod, wl)
	if sel.Empty() {
		return nil, nil
	}
	cs, err := parse(SystemDefaultConstraints, pod.Labels, action)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		cs[i].selector = sel
	}
	return cs, nil
}

var (
	rcKind = corev1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	ssKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
)

// DefaultSelector is upstream's helper.DefaultSelector: the union of the
// selectors of the Services selecting pod and of its controller (a
// ReplicationController, ReplicaSet or StatefulSet). Empty when none.
func DefaultSelector(pod *corev1.Pod, wl *framework.WorkloadListers) labels.Selector {
	set := labels.Set{}
	if wl.Services != nil {
		if svcs, err := wl.Services.Services(pod.Namespace).List(labels.Everything()); err == nil {
			for _, svc := range svcs {
				if labels.Set(svc.Spec.Selector).AsSelectorPreValidated().Matches(labels.Set(pod.Labels)) {
					set = labels.Merge(set, svc.Spec.Selector)
				}
			}
		}
	}
	sel := set.AsSelector()
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return sel
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return sel
	}
	addSelector := func(ls *metav1.LabelSelector) {
		if other, err := metav1.LabelSelectorAsSelector(ls); err == nil {
			if reqs, ok := other.Requirements(); ok {
				sel = sel.Add(reqs...)
			}
		}
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind:
		if wl.ReplicationControllers != nil {
			if rc, err := wl.ReplicationControllers.ReplicationControllers(pod.Namespace).Get(owner.Name); err == nil {
				sel = labels.Merge(set, rc.Spec.Selector).AsSelector()
			}
		}
	case rsKind:
		if wl.ReplicaSets != nil {
			if rs, err := wl.ReplicaSets.ReplicaSets(pod.Namespace).Get(owner.Name); err == nil {
				addSelector(rs.Spec.Selector)
			}
		}
	case ssKind:
		if wl.StatefulSets != nil {
			if ss, err := wl.StatefulSets.StatefulSets(pod.Namespace).Get(owner.Name); err == nil {
				addSelector(ss.Spec.Selector)
			}
		}
	}
	return sel
}
