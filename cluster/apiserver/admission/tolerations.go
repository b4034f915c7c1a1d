package admission

import (
	corev1 "k8s.io/api/core/v1"
)

// DefaultTolerations adds upstream's DefaultTolerationSeconds tolerations to
// a new pod: node.kubernetes.io/not-ready and /unreachable, NoExecute, for
// the given seconds, unless the pod already tolerates that taint. A
// negative value leaves that toleration out.
func DefaultTolerations(pod *corev1.Pod, notReadySeconds, unreachableSeconds int64) {
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		noExec := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		if !noExec {
			continue
		}
		if t.Key == "" && t.Operator == corev1.TolerationOpExists {
			notReady, unreachable = true, true
		}
		notReady = notReady || t.Key == corev1.TaintNodeNotReady
		unreachable = unreachable || t.Key == corev1.TaintNodeUnreachable
	}
	add := func(key string, secs int64) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
			Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs})
	}
	if !notReady && notReadySeconds >= 0 {
		add(corev1.TaintNodeNotReady, notReadySeconds)
	}
	if !unreachable && unreachableSeconds >= 0 {
		add(corev1.TaintNodeUnreachable, unreachableSeconds)
	}
}
