// Package framework is the contract between kstep's scheduling cycle and its
// plugins, in the shape of kube-scheduler's framework: one small interface
// per extension point (PreFilter, Filter, PostFilter, PreScore, Score with
// an optional NormalizeScore, Reserve/Unreserve, Bind), each embedding
// Name(); a *Status whose code says "fits", "does not fit" or "failed" —
// a node that does not fit is a status, never an error; the per-cycle
// CycleState; the NodeInfo/PodInfo view of the cluster that plugins read
// (with a node's used host ports, HostPortInfo, which the kubelet's
// admission shares); the WorkloadListers the scheduler fills for plugins
// that read Services and pod owners; and Framework, the runtime that builds a profile's plugins from a
// Registry and runs each extension point.
//
// Guarantees plugins can rely on:
//   - PreFilter and PreScore run once per cycle, on the scheduling
//     goroutine; they are the only phases that write the CycleState.
//   - Filter and Score run concurrently over nodes and must only read the
//     CycleState, the pod and the NodeInfo they are given.
//   - NodeInfos handed to a cycle are a snapshot: nothing changes them
//     while the cycle runs.
//
// It owns no goroutine beyond the bounded workers of Parallelizer, and must
// not touch the apiserver (except through a Bind plugin's client), the
// scheduler's queue or cache, etcd, or any other actor.
package framework
