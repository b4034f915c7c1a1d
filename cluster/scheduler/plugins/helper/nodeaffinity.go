package helper

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// NodeSelectorTerm is a parsed node selector term: its label requirements
// and its metadata.name field requirements, ANDed.
type NodeSelectorTerm struct {
	labels labels.Selector
	fields []fieldRequirement
	// empty terms and terms that failed to parse match no node, as upstream.
	never bool
}

type fieldRequirement struct {
	in     bool
	values []string
}

var nodeSelectorOps = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

// ParseNodeSelectorTerm parses a term; a term that does not parse never
// matches (and the error says why).
func ParseNodeSelectorTerm(t *corev1.NodeSelectorTerm) (NodeSelectorTerm, error) {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return NodeSelectorTerm{never: true}, nil
	}
	out := NodeSelectorTerm{labels: labels.Everything()}
	if len(t.MatchExpressions) > 0 {
		reqs := make([]labels.Requirement, 0, len(t.MatchExpressions))
		for _, e := range t.MatchExpressions {
			op, ok := nodeSelectorOps[e.Operator]
			if !ok {
				return NodeSelectorTerm{never: true}, fmt.Errorf("node selector operator %q is not supported", e.Operator)
			}
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil {
				return NodeSelectorTerm{never: true}, err
			}
			reqs = append(reqs, *r)
		}
		out.labels = labels.NewSelector().Add(reqs...)
	}
	for _, f := range t.MatchFields {
		if f.Key != "metadata.name" {
			return NodeSelectorTerm{never: true}, fmt.Errorf("node field selector key %q is not supported", f.Key)
		}
		switch f.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(f.Values) != 1 {
				return NodeSelectorTerm{never: true}, fmt.Errorf("metadata.name field selector needs exactly one value, has %d", len(f.Values))
			}
			out.fields = append(out.fields, fieldRequirement{in: f.Operator == corev1.NodeSelectorOpIn, values: f.Values})
		default:
			return NodeSelectorTerm{never: true}, fmt.Errorf("field selector operator %q is not supported", f.Operator)
		}
	}
	return out, nil
}

// Matches reports whether the node satisfies the term.
func (t *NodeSelectorTerm) Matches(node *corev1.Node) bool {
	if t.never {
		return false
	}
	if !t.labels.Matches(labels.Set(node.Labels)) {
		return false
	}
	for _, f := range t.fields {
		found := false
		for _, v := range f.values {
			if v == node.Name {
				found = true
				break
			}
		}
		if found != f.in {
			return false
		}
	}
	return true
}

// RequiredNodeAffinity is what a pod requires of its node: spec.nodeSelector
// AND (any of the required node affinity terms).
type RequiredNodeAffinity struct {
	selector labels.Selector // nil without a nodeSelector
	terms    []NodeSelectorTerm
	affinity bool // required node affinity is set
}

// NewRequiredNodeAffinity parses pod's node requirements. Terms that do not
// parse never match; they are not errors, as upstream.
func NewRequiredNodeAffinity(pod *corev1.Pod) RequiredNodeAffinity {
	var r RequiredNodeAffinity
	if len(pod.Spec.NodeSelector) > 0 {
		r.selector = labels.SelectorFromSet(pod.Spec.NodeSelector)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		r.affinity = true
		for i := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			t, _ := ParseNodeSelectorTerm(&a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[i])
			r.terms = append(r.terms, t)
		}
	}
	return r
}

// Empty reports whether the pod requires nothing of its node.
func (r *RequiredNodeAffinity) Empty() bool { return r.selector == nil && !r.affinity }

// Matches reports whether node satisfies the requirements.
func (r *RequiredNodeAffinity) Matches(node *corev1.Node) bool {
	if r.selector != nil && !r.selector.Matches(labels.Set(node.Labels)) {
		return false
	}
	if !r.affinity {
		return true
	}
	for i := range r.terms {
		if r.terms[i].Matches(node) {
			return true
		}
	}
	return false
}

// PreferredTerm is a weighted preferred node affinity term.
type PreferredTerm struct {
	Weight int64
	Term   NodeSelectorTerm
}

// PreferredNodeAffinity parses a pod's preferred node affinity; terms that
// do not parse are dropped.
func PreferredNodeAffinity(pod *corev1.Pod) []PreferredTerm {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	var out []PreferredTerm
	for i := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		p := &a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[i]
		if p.Weight == 0 {
			continue
		}
		t, err := ParseNodeSelectorTerm(&p.Preference)
		if err != nil {
			continue
		}
		out = append(out, PreferredTerm{Weight: int64(p.Weight), Term: t})
	}
	return out
}
