package helper

import (
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// Tolerates reports whether one of tolerations tolerates taint. Lt and Gt
// compare integer values (upstream's TaintTolerationComparisonOperators).
func Tolerates(tolerations []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, true) {
			return true
		}
	}
	return false
}

// DoNotSchedule selects the taints that keep pods off a node: NoSchedule
// and NoExecute.
func DoNotSchedule(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// FindUntoleratedTaint returns the first taint selected by filter that no
// toleration tolerates.
func FindUntoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration, filter func(*corev1.Taint) bool) (*corev1.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		if filter != nil && !filter(t) {
			continue
		}
		if !Tolerates(tolerations, t) {
			return t, true
		}
	}
	return nil, false
}
