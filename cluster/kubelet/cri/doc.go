// Package cri is the kubelet's CRI client: the calls the kubelet makes to a
// container runtime, each timed and bounded by a timeout, on top of the
// generated gRPC client interfaces of k8s.io/cri-api. Dial connects to a
// runtime's unix socket (containerd); InProcess adapts server
// implementations (simruntime) to the same client interfaces without a
// connection.
//
// It owns no state of the runtime and must not know which runtime it
// drives, nor anything of pods or the apiserver.
package cri
