// Package interpodaffinity is the InterPodAffinity filter: the pod's
// required pod affinity (be in the same topology domain — same node,
// same zone — as pods matching a selector) and required anti-affinity
// (never share one), and the required anti-affinity of the pods already
// placed, which the new pod must not violate either. Any topology key
// works; kubernetes.io/hostname and topology.kubernetes.io/zone are the
// common ones. Its score (scoring.go) is upstream's: the incoming pod's
// preferred affinity and anti-affinity, and the existing pods' preferred
// terms and required affinity that select it, summed per domain.
//
// It owns the counting over the snapshot; it must not keep state across
// cycles or touch the apiserver.
package interpodaffinity
