// Package nodeports is the NodePorts filter: a pod that binds host ports
// fits a node only where none of them is taken, with upstream's rules (an
// empty host IP is 0.0.0.0, which conflicts with the same protocol and
// port on every IP; an empty protocol is TCP). The kubelet runs the same
// check (Fits) when it admits a pod.
//
// It owns the check; it must not keep state across cycles or touch the
// apiserver.
package nodeports
