package deployment

import (
	"github.com/kstep-dev/kstep/cluster/controller"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UniqueLabelKey is the label that tells a Deployment's ReplicaSets (and
// their pods) apart: the hash of the pod template they were made from.
const UniqueLabelKey = appsv1.DefaultDeploymentUniqueLabelKey // "pod-template-hash"

// ComputeHash is the pod-template-hash of a Deployment's ReplicaSets
// (controller.ComputeHash, upstream's).
//
// The hash names a ReplicaSet; it does not identify the new one. That is
// found by comparing templates (equalIgnoreHash), so a hash that changes
// with a library upgrade never starts a rollout by itself.
var ComputeHash = controller.ComputeHash

// equalIgnoreHash compares two pod templates, the hash label aside.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, UniqueLabelKey)
	delete(b.Labels, UniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

// findNewReplicaSet returns the ReplicaSet whose template is the
// Deployment's; the oldest if several are (upstream issue 40415).
func findNewReplicaSet(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	sorted := append([]*appsv1.ReplicaSet(nil), rsList...)
	sortOldestFirst(sorted)
	for _, rs := range sorted {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// findOldReplicaSets returns every ReplicaSet but the new one.
func findOldReplicaSets(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	newRS := findNewReplicaSet(d, rsList)
	var old []*appsv1.ReplicaSet
	for _, rs := range rsList {
		if newRS == nil || rs.UID != newRS.UID {
			old = append(old, rs)
		}
	}
	return old
}

// newReplicaSetFor builds the ReplicaSet for d's current template, with
// zero replicas: the name is deterministic (<deployment>-<hash>) so a
// create repeated from a stale cache collides instead of duplicating.
func newReplicaSetFor(d *appsv1.Deployment) *appsv1.ReplicaSet {
	hash := ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	template := *d.Spec.Template.DeepCopy()
	template.Labels = withLabel(d.Spec.Template.Labels, UniqueLabelKey, hash)
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            d.Name + "-" + hash,
			Namespace:       d.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, deploymentKind)},
			Labels:          template.Labels,
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        new(int32),
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        selectorWithLabel(d.Spec.Selector, UniqueLabelKey, hash),
			Template:        template,
		},
	}
}

func withLabel(in map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	out[k] = v
	return out
}

func selectorWithLabel(sel *metav1.LabelSelector, k, v string) *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	if sel != nil {
		out = sel.DeepCopy()
	}
	out.MatchLabels = withLabel(out.MatchLabels, k, v)
	return out
}
