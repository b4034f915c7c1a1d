// Package queue is the scheduling queue: the pods waiting for a node and
// the rules for when each is tried again.
//
// Three places, and a pod is in at most one of them (or in flight: popped
// and being scheduled or bound):
//   - activeQ, a heap ordered by priority (spec.priority, higher first),
//     then by the time the pod entered the queue (older first): Pop takes
//     from it;
//   - backoffQ, ordered by backoff expiry: pods that failed wait
//     initial×2^(attempts−1), at most max (1 s doubling to 10 s), before
//     they return to activeQ. When activeQ is empty, Pop takes a pod that
//     an event released from the unschedulable pool straight from
//     backoffQ (upstream's SchedulerPopFromBackoffQ): an idle scheduler
//     wastes no time; a pod that failed with an error always waits;
//   - the unschedulable pool: pods no node fits. They leave it when a
//     cluster event may make them fit (a node added or changed, a pod
//     deleted — only events a plugin that rejected the pod registered for),
//     or after sitting there longer than the unschedulable timeout.
//
// An event that happens while a pod is in flight is remembered, so a pod
// whose cycle fails just after a fitting node appeared goes to backoffQ,
// not to the pool where it would miss that event. Deleting a pod, or its
// being bound by someone else (it leaves the scheduler's pending watch),
// removes it from wherever it is; an in-flight pod deleted meanwhile is not
// requeued.
//
// The queue is a deterministic core over an injected clock: the Flush
// methods move pods by time; Run is the only place with goroutines and
// timers. It must not talk to the apiserver or know how pods are
// scheduled.
package queue
