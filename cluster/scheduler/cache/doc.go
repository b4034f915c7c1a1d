// Package cache is the scheduler's view of where pods run: every node and
// every pod bound to one, fed by the scheduler's informers, plus the pods
// the scheduler has assumed — decided on, binding in flight — so the next
// cycle already sees their resources used.
//
// An assumed pod's life: AssumePod (the cycle chose a node) → FinishBinding
// (the binding call returned; the TTL clock starts) → AddPod from the
// informer (confirmed: the assumption becomes fact) — or ForgetPod (the
// binding failed) or expiry (no confirmation within the TTL).
//
// UpdateSnapshot gives the scheduling cycle an immutable copy, copying only
// the nodes that changed since the last snapshot (a generation-ordered
// list, as upstream). The clock is injected: expiry is deterministic in
// tests.
//
// It owns that bookkeeping. It must not talk to the apiserver, run
// goroutines, or decide anything about scheduling.
package cache
