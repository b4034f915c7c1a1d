// Package scheduler is kstep's scheduler (steps ④ and ⑤): it watches the
// pods nobody has placed, chooses a node for each, and binds them through
// pods/binding — a write to the apiserver, like every actor's.
//
// Shape, after kube-scheduler:
//
//	informers ──▶ queue (activeQ │ backoffQ │ unschedulable pool)
//	    │                 │ Pop
//	    └──▶ cache ──▶ snapshot ──▶ cycle: PreFilter → Filter (parallel over
//	                                nodes, nominated pods counted) →
//	                                [no node fits: PostFilter = preemption]
//	                                → PreScore → Score → select →
//	                                assume in the cache → Reserve
//	                                      │
//	                                      └──▶ binding (async, bounded):
//	                                           Bind → confirm or forget
//
// In words:
//
//   - Three informers, fresh each term of leadership: pending pods
//     (spec.nodeName empty, this scheduler's name, not finished), assigned
//     pods (for the cache) and nodes. Handlers only record into the queue
//     and the cache. A fourth factory lists Services, ReplicationControllers,
//     ReplicaSets and (where served) StatefulSets for PodTopologySpread's
//     system default constraints (framework.WorkloadListers).
//   - The scheduling cycle runs on one goroutine over an immutable snapshot
//     with an injected clock and random source; Filter and Score fan out
//     to a bounded parallelizer and come back in a deterministic order, so
//     the cycle is a pure function of its inputs and is unit-tested
//     without an apiserver (schedule_one_test.go).
//   - A chosen pod is assumed in the cache at once, so the next cycle sees
//     its resources used while the binding is in flight; a failed binding
//     forgets it and requeues the pod with backoff; an unconfirmed one
//     expires after AssumeTTL.
//   - When no node fits, the PostFilter (DefaultPreemption) may evict
//     lower-priority victims and nominate a node; the queue keeps the
//     nomination (framework.PodNominator) and filters count nominated pods
//     of equal or higher priority on their node, so the room is kept for
//     the preemptor; the failure path writes status.nominatedNodeName.
//   - FailedScheduling and Scheduled Events (client-go's record) and the
//     PodScheduled=False condition tell users why a pod waits; step events
//     pod.observed.scheduler and pod.scheduled go to the tracer (pod.bound
//     is the binding apiserver's: it ends ⑤ where etcd acknowledged it).
//   - RunElected runs all of it only while holding the Lease
//     kube-system/kstep-scheduler (cluster/leader); losing it cancels the
//     term's context, and no binding starts after that.
//
// A pod created with schedulingGates waits outside the queue; its
// PodScheduled=False SchedulingGated condition is the apiserver's, set at
// creation as upstream's.
//
// Subpackages: framework (the plugin contract and runtime), plugins (the
// registry and one package per plugin), queue, cache, config.
//
// It must not touch etcd, the apiserver's internals, or any other actor:
// everything it knows comes from watches, everything it does is a write to
// the apiserver.
package scheduler
