// Package prober runs a node's readiness, liveness and startup probes: one
// worker goroutine per (pod, container, kind), honouring initialDelay,
// period, timeout and the success and failure thresholds, publishing
// results the kubelet reads when it computes status and decides restarts.
// ProbeNow lets the pod worker that just started a container run its first
// startup and readiness probes itself, when they are due at once, so the
// status it computes already has their verdict; the worker does not run
// them again within the period.
//
// HTTP and TCP probes go through a Network: Net dials the pod IP for real;
// a hollow node's simruntime answers in process, so a hollow pod's address
// is never dialled. Exec probes go through CRI ExecSync.
//
// It owns probe scheduling and result thresholds. It must not restart
// containers, write status, or talk to the apiserver: the kubelet acts on
// its results.
package prober
