// Package nodelabels is the one statement of which labels a kubelet may set
// on its own Node (upstream's k8s.io/kubelet/pkg/apis KubeletLabels and
// KubeletLabelNamespaces, and NodeRestriction's rule). The apiserver's
// NodeRestriction refuses the others; the kubelet refuses to start with
// them, as upstream's does, instead of retrying a registration that cannot
// succeed.
//
// It owns that rule only. It must not import the apiserver or the kubelet.
package nodelabels
