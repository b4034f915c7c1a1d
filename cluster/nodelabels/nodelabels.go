package nodelabels

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// kubeletLabels and kubeletLabelNamespaces are upstream's: the kubernetes.io
// labels a kubelet sets on its own Node.
var (
	kubeletLabels = map[string]bool{
		corev1.LabelHostname: true, corev1.LabelTopologyZone: true, corev1.LabelTopologyRegion: true,
		corev1.LabelFailureDomainBetaZone: true, corev1.LabelFailureDomainBetaRegion: true,
		corev1.LabelInstanceType: true, corev1.LabelInstanceTypeStable: true,
		corev1.LabelOSStable: true, corev1.LabelArchStable: true,
		"beta.kubernetes.io/os": true, "beta.kubernetes.io/arch": true,
	}
	kubeletLabelNamespaces = []string{corev1.LabelNamespaceSuffixKubelet, corev1.LabelNamespaceSuffixNode}
)

// KubeletMaySet is upstream NodeRestriction's rule for one label key:
// nothing in node-restriction.kubernetes.io (or a subdomain), and of the
// kubernetes.io and k8s.io domains only the kubelet's own labels.
func KubeletMaySet(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		return true
	}
	under := func(d string) bool { return domain == d || strings.HasSuffix(domain, "."+d) }
	if under(corev1.LabelNamespaceNodeRestriction) {
		return false
	}
	if !under("kubernetes.io") && !under("k8s.io") {
		return true
	}
	if kubeletLabels[key] {
		return true
	}
	for _, ns := range kubeletLabelNamespaces {
		if under(ns) {
			return true
		}
	}
	return false
}
